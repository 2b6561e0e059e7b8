// PcieRootComplex: MMIO routing, DMA to guest memory with link time, MSI.
#include <catch2/catch.hpp>

#include <cstring>
#include <functional>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "nvmesim/models/mem/address_map.h"
#include "nvmesim/models/mem/guest_memory.h"
#include "nvmesim/models/pcie/pcie_link.h"
#include "nvmesim/models/pcie/pcie_root_complex.h"
#include "tests/models/default_params.h"

using namespace nvmesim::models;
using sc_core::SC_NS;
using sc_core::SC_ZERO_TIME;
using sc_core::sc_time;

namespace {

// Stands in for the controller's BAR / config space: records what arrives.
struct RecordingTarget : sc_core::sc_module {
  tlm_utils::simple_target_socket<RecordingTarget> socket{"socket"};
  struct Access {
    bool write;
    uint64_t addr;
    unsigned len;
    uint32_t value;
  };
  std::vector<Access> log;
  uint32_t read_value;
  sc_time latency;

  RecordingTarget(sc_core::sc_module_name n, uint32_t value, sc_time lat)
      : sc_core::sc_module(n), read_value(value), latency(lat) {
    socket.register_b_transport(this, &RecordingTarget::b_transport);
    socket.register_transport_dbg(this, &RecordingTarget::transport_dbg);
  }
  void b_transport(tlm::tlm_generic_payload& t, sc_time& delay) {
    uint32_t v = 0;
    const unsigned n = t.get_data_length() < 4 ? t.get_data_length() : 4;
    if (t.is_write()) {
      std::memcpy(&v, t.get_data_ptr(), n);
    } else {
      std::memcpy(t.get_data_ptr(), &read_value, n);
      v = read_value;
    }
    log.push_back({t.is_write(), t.get_address(), t.get_data_length(), v});
    delay += latency;
    t.set_response_status(tlm::TLM_OK_RESPONSE);
  }
  unsigned int transport_dbg(tlm::tlm_generic_payload& t) {
    log.push_back({t.is_write(), t.get_address(), t.get_data_length(), 0});
    return t.get_data_length();
  }
};

struct RecordingSink : MsiSink {
  struct Msg {
    uint32_t apic, vector;
    sc_time delay;
  };
  std::vector<Msg> msgs;
  void deliver_msi(uint32_t apic_id, uint32_t vector,
                   const sc_time& delay) override {
    msgs.push_back({apic_id, vector, delay});
  }
};

// The vCPU and the device's bus-master port, driven by one thread.
struct Driver : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<Driver> cpu{"cpu"};
  tlm_utils::simple_initiator_socket<Driver> dev{"dev"};
  std::function<void(Driver&)> body;
  bool done = false;
  std::vector<std::pair<uint64_t, uint64_t>> invalidations;

  SC_HAS_PROCESS(Driver);
  Driver(sc_core::sc_module_name n, std::function<void(Driver&)> b)
      : sc_core::sc_module(n), body(std::move(b)) {
    dev.register_invalidate_direct_mem_ptr(this, &Driver::invalidate);
    SC_THREAD(run);
  }
  void run() {
    body(*this);
    done = true;
  }
  void invalidate(sc_dt::uint64 s, sc_dt::uint64 e) {
    invalidations.emplace_back(s, e);
  }

  static tlm::tlm_response_status go(
      tlm_utils::simple_initiator_socket<Driver>& s, tlm::tlm_command cmd,
      uint64_t addr, void* buf, unsigned len, sc_time& delay) {
    tlm::tlm_generic_payload t;
    t.set_command(cmd);
    t.set_address(addr);
    t.set_data_ptr(static_cast<unsigned char*>(buf));
    t.set_data_length(len);
    t.set_streaming_width(len);
    t.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    s->b_transport(t, delay);
    CHECK(t.get_address() == addr);  // the root complex restores it
    return t.get_response_status();
  }
};

// The whole bench: default link (gen3 x4, MPS 256, MRRS 512, 24 B, 700 ns).
struct Bench {
  PcieRootComplex rc{"rc", PcieLink{nvmesim::test::default_link()}};
  GuestMemory mem{"mem", 1 << 20, sc_time(40, SC_NS)};
  RecordingTarget bar0{"bar0", 0x11111111, sc_time(5, SC_NS)};
  RecordingTarget bar2{"bar2", 0x22222222, sc_time(5, SC_NS)};
  RecordingTarget cfg{"cfg", 0x0BAD1AE0, sc_time(5, SC_NS)};
  RecordingSink sink;
  Driver drv;

  explicit Bench(std::function<void(Driver&)> body) : drv("drv", std::move(body)) {
    drv.cpu.bind(rc.cpu_target);
    drv.dev.bind(rc.dma_target);
    rc.bar0_initiator.bind(bar0.socket);
    rc.msix_bar_initiator.bind(bar2.socket);
    rc.config_initiator.bind(cfg.socket);
    rc.mem_initiator.bind(mem.socket);
    rc.bind_msi_sink(sink);
  }
};

}  // namespace

TEST_CASE("PcieRootComplex: CPU MMIO routes to BAR0 and BAR2 and ECAM",
          "[models][pcie]") {
  Bench* bp = nullptr;
  Bench b([&](Driver& d) {
    Bench& bench = *bp;
    sc_time delay = SC_ZERO_TIME;
    // SQ1 tail doorbell at BAR0 + 0x1000 + 8 (DSTRD 0): a 4-byte posted write.
    uint32_t tail = 7;
    REQUIRE(Driver::go(d.cpu, tlm::TLM_WRITE_COMMAND, kBar0Base + 0x1008,
                       &tail, 4, delay) == tlm::TLM_OK_RESPONSE);
    // Link: 28 bytes * 130 / 512 = 7.109375 ns (7109 ps), target: 5 ns.
    CHECK(delay == bench.rc.link().mmio_time(true) + sc_time(5, SC_NS));

    delay = SC_ZERO_TIME;
    uint32_t v = 0;
    REQUIRE(Driver::go(d.cpu, tlm::TLM_READ_COMMAND, kBar0Base + 0x1000, &v, 4,
                       delay) == tlm::TLM_OK_RESPONSE);
    CHECK(v == 0x11111111);
    CHECK(delay == sc_time(705, SC_NS));  // 700 ns round trip + 5 ns

    REQUIRE(Driver::go(d.cpu, tlm::TLM_WRITE_COMMAND, kBar2Base + 0x30, &tail,
                       4, delay) == tlm::TLM_OK_RESPONSE);
    REQUIRE(Driver::go(d.cpu, tlm::TLM_READ_COMMAND, kEcamBase + 0x0, &v, 4,
                       delay) == tlm::TLM_OK_RESPONSE);
    CHECK(v == 0x0BAD1AE0);

    // Unmapped: between the windows, guest RAM, the MSI window, straddling.
    const sc_time before = delay;
    for (uint64_t a : {kBar0Base + kBar0Size, kEcamBase + kEcamSize,
                       uint64_t{0x1000}, kMsiBase, kBar2Base + kBar2Size - 2}) {
      CHECK(Driver::go(d.cpu, tlm::TLM_READ_COMMAND, a, &v, 4, delay) ==
            tlm::TLM_ADDRESS_ERROR_RESPONSE);
    }
    CHECK(delay == before);

    // Debug accesses route the same way.
    tlm::tlm_generic_payload t;
    t.set_command(tlm::TLM_READ_COMMAND);
    t.set_address(kEcamBase + 0x10);
    t.set_data_ptr(reinterpret_cast<unsigned char*>(&v));
    t.set_data_length(4);
    CHECK(d.cpu->transport_dbg(t) == 4);
    t.set_address(0xFD00'0000);
    CHECK(d.cpu->transport_dbg(t) == 0);

    // No DMI into register files.
    tlm::tlm_dmi dmi;
    t.set_address(kBar0Base);
    CHECK_FALSE(d.cpu->get_direct_mem_ptr(t, dmi));
  });
  bp = &b;
  sc_core::sc_start();
  REQUIRE(b.drv.done);

  REQUIRE(b.bar0.log.size() == 2);
  CHECK(b.bar0.log[0].write);
  CHECK(b.bar0.log[0].addr == 0x1008);
  CHECK(b.bar0.log[0].value == 7);
  CHECK_FALSE(b.bar0.log[1].write);
  CHECK(b.bar0.log[1].addr == 0x1000);
  REQUIRE(b.bar2.log.size() == 1);
  CHECK(b.bar2.log[0].addr == 0x30);
  REQUIRE(b.cfg.log.size() == 2);
  CHECK(b.cfg.log[0].addr == 0x0);
  CHECK(b.cfg.log[1].addr == 0x10);  // the debug access

  const auto& c = b.rc.counters();
  CHECK(c.mmio_writes == 2);
  CHECK(c.mmio_reads == 2);
  CHECK(c.mmio_errors == 5);
}

TEST_CASE("PcieRootComplex: device DMA reaches memory with link time",
          "[models][pcie]") {
  Bench* bp = nullptr;
  Bench b([&](Driver& d) {
    Bench& bench = *bp;
    std::vector<uint8_t> buf(4096);
    for (size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<uint8_t>(i * 7);

    // On a link the device's own link model (PcieLinkTraffic) times its
    // traffic, DMI or not; the root complex adds memory's 40 ns only. (The
    // link's 4096-byte write would be 16 TLPs * 280 B = 4480 B * 130 / 512
    // = 1137.5 ns: PcieLink::write_time, below.)
    CHECK(bench.rc.link().write_time(4096) == sc_time(1137.5, SC_NS));
    sc_time delay = SC_ZERO_TIME;
    REQUIRE(Driver::go(d.dev, tlm::TLM_WRITE_COMMAND, 0x8000, buf.data(), 4096,
                       delay) == tlm::TLM_OK_RESPONSE);
    CHECK(delay == sc_time(40, SC_NS));

    // 64-byte read (an SQ entry): 40 ns (the link's 700 ns + 88 * 130 / 512
    // = 22.34375 ns are the device's).
    delay = SC_ZERO_TIME;
    uint8_t entry[64] = {};
    REQUIRE(Driver::go(d.dev, tlm::TLM_READ_COMMAND, 0x8040, entry, 64,
                       delay) == tlm::TLM_OK_RESPONSE);
    CHECK(delay == sc_time(40, SC_NS));
    CHECK(bench.rc.link().read_time(64).to_seconds() * 1e9 == Approx(722.34375).margin(0.001));
    CHECK(std::memcmp(entry, buf.data() + 0x40, 64) == 0);

    // Outside guest RAM (beyond the 1 MiB memory, and in the MMIO hole).
    delay = SC_ZERO_TIME;
    CHECK(Driver::go(d.dev, tlm::TLM_READ_COMMAND, 1 << 20, entry, 64,
                     delay) == tlm::TLM_ADDRESS_ERROR_RESPONSE);
    CHECK(Driver::go(d.dev, tlm::TLM_WRITE_COMMAND, (1 << 20) - 32, entry, 64,
                     delay) == tlm::TLM_ADDRESS_ERROR_RESPONSE);
    CHECK(Driver::go(d.dev, tlm::TLM_READ_COMMAND, kBar0Base, entry, 4,
                     delay) == tlm::TLM_ADDRESS_ERROR_RESPONSE);
    CHECK(Driver::go(d.dev, tlm::TLM_READ_COMMAND, 0x1'0000'0000ULL, entry, 4,
                     delay) == tlm::TLM_ADDRESS_ERROR_RESPONSE);
    // Reads of the MSI window are not messages.
    CHECK(Driver::go(d.dev, tlm::TLM_READ_COMMAND, kMsiBase, entry, 4,
                     delay) == tlm::TLM_ADDRESS_ERROR_RESPONSE);
    CHECK(delay == SC_ZERO_TIME);

    // Debug DMA.
    tlm::tlm_generic_payload t;
    uint8_t x = 0;
    t.set_command(tlm::TLM_READ_COMMAND);
    t.set_address(0x8001);
    t.set_data_ptr(&x);
    t.set_data_length(1);
    CHECK(d.dev->transport_dbg(t) == 1);
    CHECK(x == 7);
  });
  bp = &b;
  sc_core::sc_start();
  REQUIRE(b.drv.done);

  CHECK(b.mem.data()[0x8000 + 100] == static_cast<uint8_t>(700));
  const auto& c = b.rc.counters();
  CHECK(c.dma_writes == 1);
  CHECK(c.dma_write_bytes == 4096);
  CHECK(c.dma_reads == 1);
  CHECK(c.dma_read_bytes == 64);
  CHECK(c.dma_errors == 5);
  CHECK(c.msi_messages == 0);
}

TEST_CASE("PcieRootComplex: MSI writes reach the sink", "[models][pcie]") {
  Bench b([&](Driver& d) {
    sc_time delay = sc_time(100, SC_NS);
    uint32_t data = 0x31;
    REQUIRE(Driver::go(d.dev, tlm::TLM_WRITE_COMMAND, 0xFEE0'2000, &data, 4,
                       delay) == tlm::TLM_OK_RESPONSE);
    // 100 ns: on a link the device's link model times the message's posted
    // write (4 + 24 bytes, 7.109375 ns), queued behind its data writes.
    CHECK(delay == sc_time(100, SC_NS));
    // Only the data's low 8 bits are the vector; apic id from bits 19:12.
    data = 0x4142;
    REQUIRE(Driver::go(d.dev, tlm::TLM_WRITE_COMMAND, msi_address(0x17),
                       &data, 4, delay) == tlm::TLM_OK_RESPONSE);
  });
  sc_core::sc_start();
  REQUIRE(b.drv.done);

  REQUIRE(b.sink.msgs.size() == 2);
  CHECK(b.sink.msgs[0].apic == 2);
  CHECK(b.sink.msgs[0].vector == 0x31);
  CHECK(b.sink.msgs[0].delay == sc_time(100, SC_NS));
  CHECK(b.sink.msgs[1].apic == 0x17);
  CHECK(b.sink.msgs[1].vector == 0x42);
  CHECK(b.rc.counters().msi_messages == 2);
  CHECK(b.rc.counters().dma_writes == 0);  // messages are not memory writes
  CHECK(b.mem.counters().writes == 0);
}

TEST_CASE("PcieRootComplex: DMI through the root complex is memory's pointer",
          "[models][pcie]") {
  Bench* bp = nullptr;
  Bench b([&](Driver& d) {
    Bench& bench = *bp;
    tlm::tlm_generic_payload t;
    t.set_command(tlm::TLM_READ_COMMAND);
    t.set_address(0x3000);
    tlm::tlm_dmi dmi;
    REQUIRE(d.dev->get_direct_mem_ptr(t, dmi));
    CHECK(t.get_address() == 0x3000);
    CHECK(dmi.get_dmi_ptr() == bench.mem.data());
    CHECK(dmi.get_start_address() == 0);
    CHECK(dmi.get_end_address() == (1u << 20) - 1);
    CHECK(dmi.is_read_write_allowed());
    CHECK(dmi.get_read_latency() == sc_time(40, SC_NS));
    // The device charges the link itself.
    CHECK(bench.rc.link().read_time(64) > SC_ZERO_TIME);

    // The MSI window and the MMIO hole are never DMI.
    tlm::tlm_dmi deny;
    t.set_address(kMsiBase);
    CHECK_FALSE(d.dev->get_direct_mem_ptr(t, deny));
    CHECK(deny.get_start_address() == kGuestRamMaxSize);
    // Beyond the configured memory: memory's denial, clipped to the RAM window.
    tlm::tlm_dmi deny2;
    t.set_address(1 << 20);
    CHECK_FALSE(d.dev->get_direct_mem_ptr(t, deny2));
    CHECK(deny2.get_start_address() == (1u << 20));
    CHECK(deny2.get_end_address() == kGuestRamMaxSize - 1);

    // Memory's invalidation reaches the device.
    bench.mem.invalidate_dmi(0x1000, 0x1FFF);
  });
  bp = &b;
  sc_core::sc_start();
  REQUIRE(b.drv.done);
  REQUIRE(b.drv.invalidations.size() == 1);
  CHECK(b.drv.invalidations[0].first == 0x1000);
  CHECK(b.drv.invalidations[0].second == 0x1FFF);
}
