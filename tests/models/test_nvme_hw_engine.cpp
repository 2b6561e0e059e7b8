// The controller on its hardware engine, alone: no HostThread, no root
// complex, Params{} and PcieLinkParams{} as they come, a router of the
// test's own, BAR2 and config space unbound. It brings the controller up and
// completes I/O; the time from the doorbell write to the MSI-X message is
// the stage costs in cycles. With three SQs backlogged, the order the engine
// fetches in is the arbiter's (NVMe 1.4 section 4.13): weighted shares under
// WRR, turns under round robin.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "tests/models/test_cpu.h"
#include "nvmesim/firmware/nvme/eventidx.h"
#include "nvmesim/firmware/nvme/nvme_spec.h"
#include "nvmesim/models/mem/guest_memory.h"
#include "nvmesim/models/nvme/nvme_controller.h"

using namespace nvmesim;
using namespace nvmesim::models;
using sc_core::SC_NS;
using sc_core::SC_ZERO_TIME;
using sc_core::sc_time;

namespace {

constexpr uint64_t kRam = 1u << 20, kBar0 = 0x1000'0000, kMsi = 0x2000'0000;
constexpr uint64_t kAsq = 0x1000, kAcq = 0x2000, kId = 0x3000, kIoSq = 0x4000, kIoCq = 0x5000;
constexpr uint64_t kShadow = 0x6000, kEventIdx = 0x7000, kData = 0x8000;
constexpr uint16_t kEntries = 8;

struct Msi { uint32_t data; sc_time at; };

// RAM below kRam, BAR0 at kBar0, MSI writes at kMsi; no DMI.
struct Router : sc_core::sc_module {
  tlm_utils::simple_target_socket<Router> in{"in"}, dma{"dma"};
  tlm_utils::simple_initiator_socket<Router> ram{"ram"}, bar0{"bar0"};
  std::vector<Msi> msis;
  explicit Router(sc_core::sc_module_name n) : sc_module(n) {
    in.register_b_transport(this, &Router::route);
    dma.register_b_transport(this, &Router::route);
  }
  void route(tlm::tlm_generic_payload& p, sc_time& d) {
    const uint64_t a = p.get_address();
    if (a < kRam) return ram->b_transport(p, d);
    if (a >= kBar0 && a < kBar0 + 0x4000) {
      p.set_address(a - kBar0);
      bar0->b_transport(p, d);
      return p.set_address(a);
    }
    if (a == kMsi) {
      uint32_t v;
      std::memcpy(&v, p.get_data_ptr(), 4);
      msis.push_back({v, sc_core::sc_time_stamp() + d});
      return p.set_response_status(tlm::TLM_OK_RESPONSE);
    }
    p.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
  }
};

using Cpu = nvmesim::test::TestCpu;

struct Bench {
  GuestMemory mem{"mem", kRam, SC_ZERO_TIME};
  NvmeControllerModel nvme;
  Router router{"router"};
  Cpu cpu{"cpu"};
  uint16_t tail[2] = {0, 0}, head[2] = {0, 0}, cid = 0;
  bool phase[2] = {true, true};

  explicit Bench(const NvmeControllerModel::Params& p, const PcieLinkParams& link = PcieLinkParams{})
      : nvme("nvme", p, link) {
    cpu.socket.bind(router.in);
    router.ram.bind(mem.socket);
    router.bar0.bind(nvme.bar0_target);
    nvme.dma_initiator.bind(router.dma);
    nvme.program_msix_vector(0, kMsi, 0x40);
    nvme.program_msix_vector(1, kMsi, 0x41);
  }
  uint64_t db(uint16_t q, bool cq) const { return kBar0 + nvme::reg::DOORBELL_BASE + (2u * q + cq) * 4u; }
  void put(uint16_t q, nvme::SubmissionEntry c) {
    c.cid = ++cid;
    std::memcpy(mem.ptr((q ? kIoSq : kAsq) + tail[q] * 64u, 64), &c, 64);
    tail[q] = uint16_t((tail[q] + 1) % kEntries);
  }
  // The status of the next CQE on queue q, or -1 when none is there.
  int take(uint16_t q) {
    nvme::CompletionEntry e;
    std::memcpy(&e, mem.ptr((q ? kIoCq : kAcq) + head[q] * 16u, 16), 16);
    if (bool(e.status & 1) != phase[q]) return -1;
    head[q] = uint16_t((head[q] + 1) % kEntries);
    if (!head[q]) phase[q] = !phase[q];
    return e.status >> 1;
  }
  int admin(const nvme::SubmissionEntry& c) {
    put(0, c);
    cpu.wr32(db(0, false), tail[0]);
    sc_core::wait(sc_time(20, sc_core::SC_US));
    const int st = take(0);
    cpu.wr32(db(0, true), head[0]);
    return st;
  }
  void bring_up(bool dbbuf) {
    cpu.wr32(kBar0 + nvme::reg::AQA, nvme::aqa::make(kEntries, kEntries));
    cpu.wr64(kBar0 + nvme::reg::ASQ, kAsq);
    cpu.wr64(kBar0 + nvme::reg::ACQ, kAcq);
    cpu.wr32(kBar0 + nvme::reg::CC, nvme::cc::make(true, 0));
    while (!(cpu.rd32(kBar0 + nvme::reg::CSTS) & nvme::csts::RDY)) sc_core::wait(sc_time(100, SC_NS));
    nvme::SubmissionEntry c{};
    c.opcode = nvme::admin::IDENTIFY;
    c.prp1 = kId;
    c.cdw10 = nvme::cns::CONTROLLER;
    statuses.push_back(admin(c));
    c = {};
    c.opcode = nvme::admin::CREATE_IO_CQ;
    c.prp1 = kIoCq;
    c.cdw10 = nvme::create_queue::cdw10(1, kEntries);
    c.cdw11 = nvme::create_queue::cq_cdw11(1, true);
    statuses.push_back(admin(c));
    c = {};
    c.opcode = nvme::admin::CREATE_IO_SQ;
    c.prp1 = kIoSq;
    c.cdw10 = nvme::create_queue::cdw10(1, kEntries);
    c.cdw11 = nvme::create_queue::sq_cdw11(1);
    statuses.push_back(admin(c));
    if (dbbuf) {
      c = {};
      c.opcode = nvme::admin::DOORBELL_BUFFER_CONFIG;
      c.prp1 = kShadow;
      c.prp2 = kEventIdx;
      statuses.push_back(admin(c));
    }
  }
  nvme::SubmissionEntry read(uint64_t slba) const {
    nvme::SubmissionEntry c{};
    c.opcode = nvme::io::READ;
    c.nsid = 1;
    c.prp1 = kData;
    c.cdw10 = uint32_t(slba);
    c.cdw12 = 7;  // 8 LBAs: 4 KiB
    return c;
  }
  std::vector<int> statuses;
};

}  // namespace

TEST_CASE("nvme hw engine: default Params alone with no host thread completes reads", "[nvme_hw_engine]") {
  NvmeControllerModel::Params p;  // as it comes
  Bench b(p);
  REQUIRE(b.nvme.hw_engine() != nullptr);
  sc_time rung, id_cost;
  size_t msis_before = 0;
  std::vector<int> io;
  b.cpu.body = [&] {
    b.bring_up(false);
    // One read at a time: its MSI-X comes the stage costs after the doorbell.
    b.put(1, b.read(0));
    msis_before = b.router.msis.size();
    b.cpu.wr32(b.db(1, false), b.tail[1]);
    rung = sc_core::sc_time_stamp();
    sc_core::wait(sc_time(10, sc_core::SC_US));
    io.push_back(b.take(1));
    b.cpu.wr32(b.db(1, true), b.head[1]);
    // Then four at once.
    for (int i = 0; i < 4; ++i) b.put(1, b.read(8 * (i + 1)));
    b.cpu.wr32(b.db(1, false), b.tail[1]);
    sc_core::wait(sc_time(10, sc_core::SC_US));
    for (int i = 0; i < 4; ++i) io.push_back(b.take(1));
    b.cpu.wr32(b.db(1, true), b.head[1]);
  };
  sc_core::sc_start();
  REQUIRE(b.cpu.done);
  CHECK(b.statuses == std::vector<int>{0, 0, 0});
  CHECK(io == std::vector<int>{0, 0, 0, 0, 0});
  CHECK(b.nvme.firmware().counters().io_commands == 5);
  CHECK(b.nvme.hw_engine()->runs() > 0);
  REQUIRE(b.router.msis.size() > msis_before);
  const Msi& m = b.router.msis[msis_before];
  CHECK(m.data == 0x41);
  // Null backend, no DMI, memory without latency: the cycles and the data's
  // 4 KiB (pcie.mode=emulated by default: 20 ns + 4096 B at 10 GB/s) cost time.
  const NvmeHwEngineParams& e = p.engine;
  const uint32_t cycles = e.doorbell_decode + e.sqe_fetch + e.command_parse + e.backend_handoff + e.cqe_post + e.msix;
  CHECK(m.at - rung == b.nvme.hw_engine()->cycles(cycles) + b.nvme.link().write_time(4096));
  CHECK(m.at - rung == sc_time(96 + 20 + 409.6, SC_NS));  // at the 1 GHz default
}

TEST_CASE("nvme hw engine: with the doorbell buffer it reads the shadow tail", "[nvme_hw_engine]") {
  NvmeControllerModel::Params p;
  p.engine.clock_ghz = 0.5;  // 2 ns a cycle
  Bench b(p);
  std::vector<int> io;
  unsigned doorbells = 0;
  b.cpu.body = [&] {
    b.bring_up(true);
    for (int i = 0; i < 6; ++i) {  // Linux's publish: shadow tail, EventIdx, need_event
      const uint16_t old = b.tail[1];
      b.put(1, b.read(8 * i));
      const uint32_t slot = fw::dbbuf_sq_offset(1, 0);
      std::memcpy(b.mem.ptr(kShadow + slot, 4), &b.tail[1], 2);
      uint32_t ev;
      std::memcpy(&ev, b.mem.ptr(kEventIdx + slot, 4), 4);
      if (fw::need_event_linux(uint16_t(ev), b.tail[1], old)) {
        b.cpu.wr32(b.db(1, false), b.tail[1]);
        ++doorbells;
      }
      sc_core::wait(sc_time(50, SC_NS));  // less than a command takes: the engine is still busy
    }
    sc_core::wait(sc_time(20, sc_core::SC_US));
    int st;
    while ((st = b.take(1)) >= 0) io.push_back(st);
  };
  sc_core::sc_start();
  REQUIRE(b.cpu.done);
  CHECK(b.statuses == std::vector<int>{0, 0, 0, 0});
  CHECK(io == std::vector<int>(6, 0));
  CHECK(doorbells >= 1);
  CHECK(doorbells < 6);  // some submissions were seen through the shadow tail alone
}

// A controller built alone reports its whole "nvme" group itself (the
// header's promise): the firmware's counters merged as its own, the
// backend's and the hardware engine's as subgroups; no consumer merges.
TEST_CASE("nvme controller alone: its nvme group holds the firmware's, backend's and engine's counters",
          "[nvme_hw_engine][stats]") {
  NvmeControllerModel::Params p;
  Bench b(p);
  unsigned doorbells = 0;
  b.cpu.body = [&] {
    b.bring_up(true);
    for (int i = 0; i < 3; ++i) {
      const uint16_t old = b.tail[1];
      b.put(1, b.read(8 * i));
      const uint32_t slot = fw::dbbuf_sq_offset(1, 0);
      std::memcpy(b.mem.ptr(kShadow + slot, 4), &b.tail[1], 2);
      uint32_t ev;
      std::memcpy(&ev, b.mem.ptr(kEventIdx + slot, 4), 4);
      if (fw::need_event_linux(uint16_t(ev), b.tail[1], old)) {
        b.cpu.wr32(b.db(1, false), b.tail[1]);
        ++doorbells;
      }
      sc_core::wait(sc_time(10, sc_core::SC_US));
      CHECK(b.take(1) == 0);
    }
  };
  sc_core::sc_start();
  REQUIRE(b.cpu.done);
  CHECK(doorbells >= 1);
  stats::Group tree;
  tree.add_group("nvme", b.nvme.counters());  // as a platform of one's own links it
  const stats::GroupValues v = tree.values();
  CHECK(v.at("nvme.io_commands") == 3);
  CHECK(v.at("nvme.io_commands") == b.nvme.firmware().counters().io_commands);
  CHECK(v.at("nvme.eventidx_writes") == b.nvme.firmware().counters().eventidx_writes);
  CHECK(v.at("nvme.eventidx_writes") >= 3);  // one SQ EventIdx store per I/O at least
  CHECK(v.at("nvme.backend.completed") == 3);
  CHECK(v.at("nvme.engine.commands") >= 3);  // and the admin commands of bring-up
  CHECK(v.at("nvme.dma_reads") > 0);
  CHECK(v.group("nvme.pcie") == nullptr);  // pcie.mode=emulated: no link traffic group
}

namespace {

// Three I/O SQs (qid 1..3) of 64 entries on one CQ of 256, each filled with
// 63 reads and rung at once; returns the SQ id of every CQE in the order
// the CQ received them (the order the engine fetched the commands: the null
// backend completes them in order). QPRIO: SQ 1 High, 2 Medium, 3 Low.
std::vector<uint16_t> backlogged_sqs(uint8_t cc_ams, uint32_t arbitration_dw11, uint64_t* cap_out) {
  constexpr uint64_t kCq = 0x10000, kSq = 0x20000;
  constexpr uint32_t kCqEntries = 256, kSqEntries = 64;
  NvmeControllerModel::Params p;
  p.firmware.wrr_urgent = true;  // CAP.AMS bit 17
  Bench b(p);
  std::vector<uint16_t> order;
  b.cpu.body = [&] {
    *cap_out = uint64_t(b.cpu.rd32(kBar0 + nvme::reg::CAP)) |
               (uint64_t(b.cpu.rd32(kBar0 + nvme::reg::CAP + 4)) << 32);
    b.cpu.wr32(kBar0 + nvme::reg::AQA, nvme::aqa::make(kEntries, kEntries));
    b.cpu.wr64(kBar0 + nvme::reg::ASQ, kAsq);
    b.cpu.wr64(kBar0 + nvme::reg::ACQ, kAcq);
    b.cpu.wr32(kBar0 + nvme::reg::CC, nvme::cc::make(true, 0, 6, 4, cc_ams));
    while (!(b.cpu.rd32(kBar0 + nvme::reg::CSTS) & nvme::csts::RDY)) sc_core::wait(sc_time(100, SC_NS));
    nvme::SubmissionEntry c{};
    c.opcode = nvme::admin::SET_FEATURES;
    c.cdw10 = nvme::feature::ARBITRATION;
    c.cdw11 = arbitration_dw11;
    b.statuses.push_back(b.admin(c));
    c = {};
    c.opcode = nvme::admin::CREATE_IO_CQ;
    c.prp1 = kCq;
    c.cdw10 = nvme::create_queue::cdw10(1, kCqEntries);
    c.cdw11 = nvme::create_queue::cq_cdw11(1, true);
    b.statuses.push_back(b.admin(c));
    for (uint16_t q = 1; q <= 3; ++q) {
      c = {};
      c.opcode = nvme::admin::CREATE_IO_SQ;
      c.prp1 = kSq + (q - 1) * 0x1000u;
      c.cdw10 = nvme::create_queue::cdw10(q, kSqEntries);
      c.cdw11 = nvme::create_queue::sq_cdw11(1, uint8_t(q));  // QPRIO 01b High, 10b Medium, 11b Low
      b.statuses.push_back(b.admin(c));
    }
    uint16_t cid = 0;
    for (uint16_t q = 1; q <= 3; ++q)
      for (uint32_t i = 0; i + 1 < kSqEntries; ++i) {  // full: 63 commands
        nvme::SubmissionEntry r = b.read(8 * i);
        r.cid = ++cid;
        std::memcpy(b.mem.ptr(kSq + (q - 1) * 0x1000u + i * 64u, 64), &r, 64);
      }
    for (uint16_t q = 1; q <= 3; ++q) b.cpu.wr32(b.db(q, false), kSqEntries - 1);
    sc_core::wait(sc_time(500, sc_core::SC_US));
    for (uint32_t i = 0; i < kCqEntries; ++i) {
      nvme::CompletionEntry e;
      std::memcpy(&e, b.mem.ptr(kCq + i * 16u, 16), 16);
      if (!(e.status & 1)) break;  // phase 1 on the CQ's first pass
      CHECK((e.status >> 1) == 0);
      order.push_back(e.sq_id);
    }
  };
  sc_core::sc_start();
  REQUIRE(b.cpu.done);
  CHECK(b.statuses == std::vector<int>{0, 0, 0, 0, 0});
  return order;
}

std::vector<uint16_t> repeat(std::initializer_list<uint16_t> ids, unsigned times) {
  std::vector<uint16_t> v;
  for (unsigned t = 0; t < times; ++t) v.insert(v.end(), ids);
  return v;
}

}  // namespace

// NVMe 1.4, 4.13.2: with HPW=2 MPW=1 LPW=0 (weights 3:2:1) and AB=0 (one
// command a turn), each round fetches High 3, Medium 2, Low 1 while all
// three hold commands; Medium and Low then share 2:1, and Low goes on alone.
TEST_CASE("nvme hw engine: weighted round robin gives each backlogged SQ its weighted share", "[nvme_hw_engine]") {
  uint64_t cap = 0;
  const std::vector<uint16_t> order = backlogged_sqs(nvme::cc::AMS_WRR_URGENT, 0x02010000u, &cap);
  CHECK(nvme::cap::ams(cap) == 1);
  REQUIRE(order.size() == 189);
  // While all three are backlogged (21 rounds, 126 commands): exact shares.
  const std::vector<uint16_t> first(order.begin(), order.begin() + 126);
  CHECK(first == repeat({1, 1, 1, 2, 2, 3}, 21));
  CHECK(std::count(order.begin(), order.begin() + 60, 1) == 30);
  CHECK(std::count(order.begin(), order.begin() + 60, 2) == 20);
  CHECK(std::count(order.begin(), order.begin() + 60, 3) == 10);
  // High emptied: Medium's 21 left share 2:1 with Low, then Low's 31 alone.
  std::vector<uint16_t> rest = repeat({2, 2, 3}, 10);
  rest.insert(rest.end(), {2, 3});
  const std::vector<uint16_t> low(31, 3);
  rest.insert(rest.end(), low.begin(), low.end());
  CHECK(std::vector<uint16_t>(order.begin() + 126, order.end()) == rest);
}

// Round robin (CC.AMS 000b) ignores QPRIO; at the default Arbitration Burst
// (111b, no limit) each SQ's turn takes every command it holds.
TEST_CASE("nvme hw engine: round robin with no burst limit drains each SQ in turn", "[nvme_hw_engine]") {
  uint64_t cap = 0;
  const std::vector<uint16_t> order = backlogged_sqs(nvme::cc::AMS_RR, 0x02010007u, &cap);
  std::vector<uint16_t> want;
  for (uint16_t q = 1; q <= 3; ++q) want.insert(want.end(), 63, q);
  CHECK(order == want);
}

// Round robin with AB=0: one command from each SQ in turn.
TEST_CASE("nvme hw engine: round robin with a burst of one alternates the SQs", "[nvme_hw_engine]") {
  uint64_t cap = 0;
  const std::vector<uint16_t> order = backlogged_sqs(nvme::cc::AMS_RR, 0x02010000u, &cap);
  CHECK(order == repeat({1, 2, 3}, 63));
}

// pcie.mode=link, through a router that grants no DMI: every TLP of one 4 KiB
// read is counted as the PCI Express rules give it (firmware/pcie/tlp.h) and
// timed on the link: the SQE fetch's request and its 64-byte completion, 16
// posted data writes at MPS 256, the CQE's write, the MSI-X message's, and
// the MMIO doorbell. Then four SQEs published at once come in one read.
TEST_CASE("nvme hw engine: on a PCIe link each TLP of a read is counted and timed", "[nvme_hw_engine][pcie]") {
  NvmeControllerModel::Params p;
  PcieLinkParams link;
  link.mode = PcieMode::Link;  // gen3 x4, MPS 256, MRRS 512, 24 bytes a TLP, RTT 700 ns
  Bench b(p, link);
  PcieLinkTraffic* traffic = b.nvme.link_traffic();
  REQUIRE(traffic != nullptr);
  using fw::pcie::TlpKind;
  auto count = [&](fw::DmaPurpose purpose, TlpKind kind) { return traffic->tally().tlps(unsigned(purpose), kind); };
  auto count_at = [&](unsigned purpose, TlpKind kind) { return traffic->tally().tlps(purpose, kind); };
  sc_time rung;
  size_t msis_before = 0;
  int status = -1;
  std::vector<int> burst;
  std::array<uint64_t, 3> before{};
  // The first read's TLPs and time, checked before the burst.
  auto single = [&] {
    CHECK(count(fw::DmaPurpose::SqeFetch, TlpKind::MemoryRead) == 1);
    CHECK(count(fw::DmaPurpose::SqeFetch, TlpKind::Completion) == 1);
    CHECK(count(fw::DmaPurpose::Data, TlpKind::PostedWrite) == 16);
    CHECK(count(fw::DmaPurpose::Data, TlpKind::MemoryRead) == 0);
    CHECK(count(fw::DmaPurpose::CqeWrite, TlpKind::PostedWrite) == 1);
    CHECK(count_at(NvmeControllerModel::kMsixPurpose, TlpKind::PostedWrite) == 1);
    CHECK(count_at(NvmeControllerModel::kDoorbellMmioPurpose, TlpKind::PostedWrite) == 1);  // the SQ tail
    CHECK(count(fw::DmaPurpose::ShadowRead, TlpKind::MemoryRead) == 0);
    CHECK(traffic->read_round_trips == 1);
    // Bytes on the wire: the SQE's completion 64 + 24, the data 16 * (256 + 24).
    CHECK(traffic->tally().wire_bytes(unsigned(fw::DmaPurpose::SqeFetch), TlpKind::Completion) == 88);
    CHECK(traffic->tally().wire_bytes(unsigned(fw::DmaPurpose::Data), TlpKind::PostedWrite) == 4480);
    // Upstream carried the request, the data, the CQE and the MSI-X: 24 + 4480 + 40 + 28 bytes.
    CHECK(traffic->upstream_busy.time().to_seconds() * 1e9 == Approx((24 + 4480 + 40 + 28) * 130.0 / 512).margin(0.01));
  };
  b.cpu.body = [&] {
    b.bring_up(false);
    traffic->reset();  // the read alone
    b.put(1, b.read(0));
    msis_before = b.router.msis.size();
    b.cpu.wr32(b.db(1, false), b.tail[1]);
    rung = sc_core::sc_time_stamp();
    sc_core::wait(sc_time(10, sc_core::SC_US));
    status = b.take(1);
    single();
    b.cpu.wr32(b.db(1, true), b.head[1]);
    sc_core::wait(sc_time(1, sc_core::SC_US));
    // Four published at once: one read fetches them (nvme.sqe_burst 8), 256
    // bytes, one request and at MPS 256 one completion.
    before = {count(fw::DmaPurpose::SqeFetch, TlpKind::MemoryRead),
              count(fw::DmaPurpose::SqeFetch, TlpKind::Completion), uint64_t(traffic->read_round_trips)};
    for (int i = 0; i < 4; ++i) b.put(1, b.read(8 * (i + 1)));
    b.cpu.wr32(b.db(1, false), b.tail[1]);
    sc_core::wait(sc_time(20, sc_core::SC_US));
    for (int i = 0; i < 4; ++i) burst.push_back(b.take(1));
  };
  sc_core::sc_start();
  REQUIRE(b.cpu.done);
  CHECK(burst == std::vector<int>(4, 0));
  CHECK(count(fw::DmaPurpose::SqeFetch, TlpKind::MemoryRead) - before[0] == 1);
  CHECK(count(fw::DmaPurpose::SqeFetch, TlpKind::Completion) - before[1] == 1);
  CHECK(traffic->read_round_trips - before[2] == 1);
  CHECK(traffic->tally().wire_bytes(unsigned(fw::DmaPurpose::SqeFetch), TlpKind::Completion) == 88 + 256 + 24);
  CHECK(status == 0);
  // The doorbells: SQ tail, CQ head, SQ tail (the burst's CQ head is not written).
  CHECK(count_at(NvmeControllerModel::kDoorbellMmioPurpose, TlpKind::PostedWrite) == 3);
  // Timed: doorbell to MSI-X is the stage cycles (96 ns at 1 GHz), the
  // fetch's round trip (700 ns) and completion (88 B), then the data, CQE and
  // MSI-X writes back to back upstream (4480 + 40 + 28 B), at 8 GT/s * 4 *
  // 128/130 / 8 = 3.93846 B/ns; each transfer rounded to the picosecond.
  REQUIRE(b.router.msis.size() > msis_before);
  const sc_time took = b.router.msis[msis_before].at - rung;
  CHECK(took == sc_time(96, SC_NS) + sc_time(700, SC_NS) + sc_time(22344, sc_core::SC_PS) +
                    sc_time(1137500, sc_core::SC_PS) + sc_time(10156, sc_core::SC_PS) + sc_time(7109, sc_core::SC_PS));
}
