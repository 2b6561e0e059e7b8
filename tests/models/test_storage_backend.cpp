#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

#include "nvmesim/models/block/storage_backend.h"

using namespace sc_core;
using namespace nvmesim;
using models::BackendKind;
using models::StorageBackend;

namespace {
struct VectorMemory : fw::ControllerEnv {
  std::vector<uint8_t> mem = std::vector<uint8_t>(1 << 16);
  bool dma_read(nvmesim::fw::DmaPurpose, uint64_t a, void* d, uint32_t n) override {
    if (a + n > mem.size()) return false;
    std::memcpy(d, &mem[a], n);
    return true;
  }
  bool dma_write(nvmesim::fw::DmaPurpose, uint64_t a, const void* s, uint32_t n) override {
    if (a + n > mem.size()) return false;
    std::memcpy(&mem[a], s, n);
    return true;
  }
  void device_barrier() override {}
  void msix(uint16_t) override {}
  void backend_submit(const fw::IoRequest&) override {}
};

fw::IoRequest request(uint32_t tag, uint8_t opcode, uint64_t slba, uint64_t addr) {
  fw::IoRequest r;
  r.tag = tag;
  r.opcode = opcode;
  r.slba = slba;
  r.nlb = 8;
  r.bytes = 4096;
  r.segment_count = 2;  // split over two guest ranges
  r.segments = {{addr, 1000}, {addr + 8192, 3096}};
  return r;
}

struct Submitter : sc_module {
  StorageBackend& be;
  int count;
  SC_HAS_PROCESS(Submitter);
  Submitter(sc_module_name n, StorageBackend& b, int c) : sc_module(n), be(b), count(c) {
    SC_THREAD(run);
  }
  void run() {
    for (int i = 0; i < count; ++i) {
      uint16_t st;
      REQUIRE_FALSE(be.submit(request(uint32_t(i), nvme::io::READ, 0, 0), SC_ZERO_TIME, &st));
    }
  }
};
}  // namespace

TEST_CASE("backend: null completes at once", "[backend]") {
  VectorMemory m;
  StorageBackend::Params p;
  p.kind = BackendKind::Null;
  StorageBackend be("be", p, m);
  uint16_t status = 0xFFFF;
  CHECK(be.submit(request(7, nvme::io::READ, 0, 0), SC_ZERO_TIME, &status));
  CHECK(status == 0);
  CHECK(be.completed() == 1);
}

TEST_CASE("backend: ram returns what was written", "[backend]") {
  VectorMemory m;
  StorageBackend::Params p;
  p.kind = BackendKind::Ram;
  p.capacity = 1 << 20;
  StorageBackend be("be", p, m);
  for (unsigned i = 0; i < 1000; ++i) m.mem[0x100 + i] = uint8_t(i * 7);
  for (unsigned i = 0; i < 3096; ++i) m.mem[0x100 + 8192 + i] = uint8_t(i * 13 + 1);
  uint16_t st = 1;
  REQUIRE(be.submit(request(1, nvme::io::WRITE, 16, 0x100), SC_ZERO_TIME, &st));
  REQUIRE(st == 0);
  // Read it back elsewhere.
  REQUIRE(be.submit(request(2, nvme::io::READ, 16, 0x4000), SC_ZERO_TIME, &st));
  REQUIRE(st == 0);
  for (unsigned i = 0; i < 1000; ++i) REQUIRE(m.mem[0x4000 + i] == uint8_t(i * 7));
  for (unsigned i = 0; i < 3096; ++i) REQUIRE(m.mem[0x4000 + 8192 + i] == uint8_t(i * 13 + 1));
  // Another LBA range holds zeros; beyond the capacity is LBA Out of Range.
  REQUIRE(be.submit(request(3, nvme::io::READ, 64, 0x4000), SC_ZERO_TIME, &st));
  CHECK(m.mem[0x4000] == 0);
  REQUIRE(be.submit(request(4, nvme::io::READ, (1 << 20) / 512, 0x4000), SC_ZERO_TIME, &st));
  CHECK(st == nvme::status_generic(nvme::sc::LBA_OUT_OF_RANGE));
  // A guest range outside memory is a Data Transfer Error.
  REQUIRE(be.submit(request(5, nvme::io::READ, 0, 0xFFFF0), SC_ZERO_TIME, &st));
  CHECK(st == nvme::status_generic(nvme::sc::DATA_TRANSFER_ERROR));
}

TEST_CASE("backend: latency with a concurrency limit queues in order", "[backend]") {
  VectorMemory m;
  StorageBackend::Params p;
  p.kind = BackendKind::Latency;
  p.latency = sc_time(10, SC_US);
  p.concurrency = 2;
  StorageBackend be("be", p, m);
  std::vector<std::pair<uint32_t, double>> done;
  be.set_completion_callback([&](uint32_t tag, uint16_t status) {
    REQUIRE(status == 0);
    done.push_back({tag, sc_time_stamp().to_seconds() * 1e6});
  });
  Submitter s("s", be, 5);
  sc_start();
  // Two at a time: 0,1 at 10 us; 2,3 at 20 us; 4 at 30 us.
  REQUIRE(done == std::vector<std::pair<uint32_t, double>>{{0, 10}, {1, 10}, {2, 20}, {3, 20}, {4, 30}});
  CHECK(be.in_flight() == 0);
}

// An SSD: 10 us latency, 2 at a time, then one channel at 1000 MB/s
// (10^9 bytes/s: 4096 bytes take 4.096 us). A slot frees when its latency
// ends; the channel takes the finished requests one after another.
TEST_CASE("backend: latency, concurrency and a bandwidth give exact finish times", "[backend]") {
  CHECK(StorageBackend::transfer_time(4096, 1000) == sc_time(4096, SC_NS));
  CHECK(StorageBackend::transfer_time(4096, 0) == SC_ZERO_TIME);
  CHECK(StorageBackend::transfer_time(0, 1000) == SC_ZERO_TIME);
  CHECK(StorageBackend::transfer_time(512, 3000) == sc_time(170667, SC_PS));  // 170.666.. ns, rounded
  VectorMemory m;
  StorageBackend::Params p;
  p.kind = BackendKind::Latency;
  p.latency = sc_time(10, SC_US);
  p.concurrency = 2;
  p.bandwidth_mb_s = 1000;
  StorageBackend be("be", p, m);
  std::vector<std::pair<uint32_t, sc_time>> done;
  be.set_completion_callback([&](uint32_t tag, uint16_t) { done.push_back({tag, sc_time_stamp()}); });
  Submitter s("s", be, 4);
  sc_start();
  // 0, 1: latency to 10 us, channel 10 -> 14.096 -> 18.192 us; 2, 3 take
  // the slots at 10 us: latency to 20 us, channel 20 -> 24.096 -> 28.192 us.
  const std::vector<std::pair<uint32_t, sc_time>> expected = {{0, sc_time(14096, SC_NS)},
                                                              {1, sc_time(18192, SC_NS)},
                                                              {2, sc_time(24096, SC_NS)},
                                                              {3, sc_time(28192, SC_NS)}};
  CHECK(done == expected);
  CHECK(be.completed() == 4);
  CHECK(be.in_flight() == 0);
}

TEST_CASE("backend: bandwidth alone serialises transfers at its rate", "[backend]") {
  VectorMemory m;
  StorageBackend::Params p;
  p.kind = BackendKind::Latency;
  p.latency = SC_ZERO_TIME;
  p.concurrency = 0;
  p.bandwidth_mb_s = 2048;  // 4096 bytes: 2 us
  StorageBackend be("be", p, m);
  std::vector<sc_time> done;
  be.set_completion_callback([&](uint32_t, uint16_t) { done.push_back(sc_time_stamp()); });
  Submitter s("s", be, 3);
  sc_start();
  CHECK(done == std::vector<sc_time>{sc_time(2, SC_US), sc_time(4, SC_US), sc_time(6, SC_US)});
}
