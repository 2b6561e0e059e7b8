// GuestMemory: TLM target over a lazily mapped host buffer.
#include <catch2/catch.hpp>

#include <cstring>
#include <functional>
#include <stdexcept>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "nvmesim/models/mem/guest_memory.h"

using nvmesim::models::GuestMemory;
using sc_core::SC_NS;
using sc_core::sc_time;

namespace {

// Runs `body` in an SC_THREAD with an initiator socket bound to the memory.
struct MemTester : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<MemTester> socket{"socket"};
  std::function<void(MemTester&)> body;
  bool done = false;

  SC_HAS_PROCESS(MemTester);
  MemTester(sc_core::sc_module_name n, std::function<void(MemTester&)> b)
      : sc_core::sc_module(n), body(std::move(b)) {
    SC_THREAD(run);
  }
  void run() {
    body(*this);
    done = true;
  }

  tlm::tlm_response_status access(tlm::tlm_command cmd, uint64_t addr,
                                  void* buf, unsigned len, sc_time& delay,
                                  unsigned char* be = nullptr,
                                  unsigned be_len = 0) {
    tlm::tlm_generic_payload t;
    t.set_command(cmd);
    t.set_address(addr);
    t.set_data_ptr(static_cast<unsigned char*>(buf));
    t.set_data_length(len);
    t.set_streaming_width(len);
    t.set_byte_enable_ptr(be);
    t.set_byte_enable_length(be_len);
    t.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    socket->b_transport(t, delay);
    return t.get_response_status();
  }
};

}  // namespace

TEST_CASE("GuestMemory: write then read returns the data with latency annotated",
          "[models][guest_memory]") {
  GuestMemory mem("mem", 64 * 1024, sc_time(50, SC_NS));
  MemTester tester("tester", [&](MemTester& t) {
    const char msg[] = "nvme submission queue entry";
    sc_time delay = sc_core::SC_ZERO_TIME;
    REQUIRE(t.access(tlm::TLM_WRITE_COMMAND, 0x1000, const_cast<char*>(msg),
                     sizeof msg, delay) == tlm::TLM_OK_RESPONSE);
    CHECK(delay == sc_time(50, SC_NS));

    char back[sizeof msg] = {};
    REQUIRE(t.access(tlm::TLM_READ_COMMAND, 0x1000, back, sizeof back,
                     delay) == tlm::TLM_OK_RESPONSE);
    CHECK(std::memcmp(back, msg, sizeof msg) == 0);
    // Latency accumulates on the annotated delay; the memory never waits.
    CHECK(delay == sc_time(100, SC_NS));
    CHECK(sc_core::sc_time_stamp() == sc_core::SC_ZERO_TIME);

    // Last byte of memory is addressable.
    uint8_t b = 0xA5;
    CHECK(t.access(tlm::TLM_WRITE_COMMAND, 64 * 1024 - 1, &b, 1, delay) ==
          tlm::TLM_OK_RESPONSE);
  });
  tester.socket.bind(mem.socket);
  sc_core::sc_start();
  REQUIRE(tester.done);

  // Direct accessor sees the same bytes.
  CHECK(mem.size() == 64 * 1024);
  REQUIRE(mem.ptr(0x1000, 4) != nullptr);
  CHECK(std::memcmp(mem.ptr(0x1000, 4), "nvme", 4) == 0);
  CHECK(mem.data()[64 * 1024 - 1] == 0xA5);
  CHECK(mem.counters().writes == 2);
  CHECK(mem.counters().reads == 1);
}

TEST_CASE("GuestMemory: out of range and byte enables are errors",
          "[models][guest_memory]") {
  GuestMemory mem("mem", 4096, sc_time(10, SC_NS));
  MemTester tester("tester", [&](MemTester& t) {
    uint8_t buf[16] = {};
    sc_time delay = sc_core::SC_ZERO_TIME;
    CHECK(t.access(tlm::TLM_READ_COMMAND, 4096, buf, 1, delay) ==
          tlm::TLM_ADDRESS_ERROR_RESPONSE);
    // Straddles the end.
    CHECK(t.access(tlm::TLM_WRITE_COMMAND, 4090, buf, 16, delay) ==
          tlm::TLM_ADDRESS_ERROR_RESPONSE);
    // Wraps around 2^64.
    CHECK(t.access(tlm::TLM_READ_COMMAND, ~0ULL - 3, buf, 16, delay) ==
          tlm::TLM_ADDRESS_ERROR_RESPONSE);
    unsigned char be[4] = {0xFF, 0xFF, 0xFF, 0xFF};
    CHECK(t.access(tlm::TLM_WRITE_COMMAND, 0, buf, 4, delay, be, 4) ==
          tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
    // Errors cost no memory latency.
    CHECK(delay == sc_core::SC_ZERO_TIME);
  });
  tester.socket.bind(mem.socket);
  sc_core::sc_start();
  REQUIRE(tester.done);
  CHECK(mem.ptr(4090, 16) == nullptr);
  CHECK(mem.ptr(4096, 0) == nullptr);
  CHECK(mem.ptr(4080, 16) != nullptr);
  CHECK(mem.counters().errors == 4);
  CHECK(mem.data()[0] == 0);  // the byte-enabled write did nothing
}

TEST_CASE("GuestMemory: DMI grants the whole range with the latencies",
          "[models][guest_memory]") {
  GuestMemory mem("mem", 1 << 20, sc_time(30, SC_NS));
  MemTester tester("tester", [&](MemTester& t) {
    uint32_t v = 0xDEADBEEF;
    sc_time delay = sc_core::SC_ZERO_TIME;
    REQUIRE(t.access(tlm::TLM_WRITE_COMMAND, 0x2000, &v, 4, delay) ==
            tlm::TLM_OK_RESPONSE);

    tlm::tlm_generic_payload trans;
    trans.set_command(tlm::TLM_READ_COMMAND);
    trans.set_address(0x2000);
    tlm::tlm_dmi dmi;
    REQUIRE(t.socket->get_direct_mem_ptr(trans, dmi));
    CHECK(dmi.get_dmi_ptr() == mem.data());
    CHECK(dmi.get_start_address() == 0);
    CHECK(dmi.get_end_address() == (1u << 20) - 1);
    CHECK(dmi.is_read_write_allowed());
    CHECK(dmi.get_read_latency() == sc_time(30, SC_NS));
    CHECK(dmi.get_write_latency() == sc_time(30, SC_NS));

    // Same bytes as b_transport, both ways.
    uint32_t through_dmi = 0;
    std::memcpy(&through_dmi, dmi.get_dmi_ptr() + 0x2000, 4);
    CHECK(through_dmi == 0xDEADBEEF);
    const uint32_t w = 0x12345678;
    std::memcpy(dmi.get_dmi_ptr() + 0xFFFFC, &w, 4);
    uint32_t r = 0;
    REQUIRE(t.access(tlm::TLM_READ_COMMAND, 0xFFFFC, &r, 4, delay) ==
            tlm::TLM_OK_RESPONSE);
    CHECK(r == w);

    // Beyond the memory: denied.
    trans.set_address(1 << 20);
    tlm::tlm_dmi deny;
    CHECK_FALSE(t.socket->get_direct_mem_ptr(trans, deny));
    CHECK(deny.get_start_address() == (1u << 20));
  });
  tester.socket.bind(mem.socket);
  sc_core::sc_start();
  REQUIRE(tester.done);
}

TEST_CASE("GuestMemory: transport_dbg reads and writes without timing",
          "[models][guest_memory]") {
  GuestMemory mem("mem", 256, sc_time(30, SC_NS));
  MemTester tester("tester", [&](MemTester& t) {
    uint8_t buf[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    tlm::tlm_generic_payload trans;
    trans.set_command(tlm::TLM_WRITE_COMMAND);
    trans.set_address(252);
    trans.set_data_ptr(buf);
    trans.set_data_length(8);
    CHECK(t.socket->transport_dbg(trans) == 4);  // truncated at the end
    trans.set_command(tlm::TLM_READ_COMMAND);
    trans.set_address(256);
    CHECK(t.socket->transport_dbg(trans) == 0);
  });
  tester.socket.bind(mem.socket);
  sc_core::sc_start();
  REQUIRE(tester.done);
  CHECK(mem.data()[252] == 1);
  CHECK(mem.data()[255] == 4);
}

TEST_CASE("GuestMemory: a 1 GiB memory constructs lazily and reads zero",
          "[models][guest_memory]") {
  constexpr uint64_t kGiB = 1ULL << 30;
  GuestMemory mem("mem", kGiB, sc_time(20, SC_NS));
  MemTester tester("tester", [&](MemTester& t) {
    for (uint64_t addr : {uint64_t{0}, kGiB / 2 + 12345, kGiB - 8}) {
      uint64_t v = ~0ULL;
      sc_time delay = sc_core::SC_ZERO_TIME;
      REQUIRE(t.access(tlm::TLM_READ_COMMAND, addr, &v, 8, delay) ==
              tlm::TLM_OK_RESPONSE);
      CHECK(v == 0);
    }
    uint64_t v = 0x0123456789ABCDEFULL;
    sc_time delay = sc_core::SC_ZERO_TIME;
    CHECK(t.access(tlm::TLM_WRITE_COMMAND, kGiB - 8, &v, 8, delay) ==
          tlm::TLM_OK_RESPONSE);
    CHECK(t.access(tlm::TLM_WRITE_COMMAND, kGiB - 4, &v, 8, delay) ==
          tlm::TLM_ADDRESS_ERROR_RESPONSE);
  });
  tester.socket.bind(mem.socket);
  sc_core::sc_start();
  REQUIRE(tester.done);
  CHECK(mem.size() == kGiB);
  REQUIRE(mem.ptr(kGiB - 8, 8) != nullptr);
  CHECK(mem.ptr(kGiB - 8, 8)[7] == 0x01);
  CHECK(mem.ptr(kGiB - 8, 9) == nullptr);
  CHECK(mem.data()[kGiB / 3] == 0);
}

TEST_CASE("GuestMemory: zero size is rejected", "[models][guest_memory]") {
  CHECK_THROWS_AS(GuestMemory("mem", 0, sc_time(1, SC_NS)),
                  std::invalid_argument);
}
