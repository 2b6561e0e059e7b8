#include <catch2/catch.hpp>

#include <tlm_utils/simple_target_socket.h>
#include <vector>

#include "nvmesim/models/mem/address_map.h"
#include "nvmesim/models/hv/hypervisor.h"

using namespace sc_core;
using namespace nvmesim::models;

namespace {
// Stands in for the root complex: records what reaches it, costs 100 ns.
struct Sink : sc_module {
  tlm_utils::simple_target_socket<Sink> socket;
  std::vector<uint64_t> addresses;
  std::vector<sc_time> arrivals;  // the access's offset when it reached the device
  Sink(sc_module_name n) : sc_module(n), socket("socket") {
    socket.register_b_transport(this, &Sink::b_transport);
  }
  void b_transport(tlm::tlm_generic_payload& p, sc_time& d) {
    addresses.push_back(p.get_address());
    arrivals.push_back(d);
    d += sc_time(100, SC_NS);
    p.set_response_status(tlm::TLM_OK_RESPONSE);
  }
};

struct Irq : InterruptTarget {
  std::vector<std::pair<uint32_t, sc_time>> got;
  void raise_interrupt(uint32_t v, const sc_time& d) override { got.push_back({v, d}); }
};

struct Cpu : sc_module {
  tlm_utils::simple_initiator_socket<Cpu> socket;
  std::vector<sc_time> delays;
  std::vector<uint64_t> targets;
  SC_HAS_PROCESS(Cpu);
  Cpu(sc_module_name n) : sc_module(n), socket("socket") { SC_THREAD(run); }
  void run() {
    for (uint64_t a : targets) {
      uint32_t v = 1;
      tlm::tlm_generic_payload p;
      p.set_command(tlm::TLM_WRITE_COMMAND);
      p.set_address(a);
      p.set_data_ptr(reinterpret_cast<unsigned char*>(&v));
      p.set_data_length(4);
      p.set_streaming_width(4);
      sc_time d = SC_ZERO_TIME;
      socket->b_transport(p, d);
      delays.push_back(d);
    }
  }
};

Hypervisor::Params params() {
  Hypervisor::Params p;
  p.exit_mmio = sc_time(2000, SC_NS);
  p.exit_mmio_other = sc_time(3000, SC_NS);
  p.exit_ioeventfd = sc_time(900, SC_NS);
  p.inject = sc_time(700, SC_NS);
  p.exit_eoi = sc_time(400, SC_NS);
  return p;
}
}  // namespace

TEST_CASE("hypervisor: trapped MMIO costs the exit by kind", "[hypervisor]") {
  Hypervisor hv("hv", params(), 1);
  Sink rc("rc");
  Cpu cpu("cpu");
  cpu.socket.bind(hv.guest_mmio);
  hv.rc_initiator.bind(rc.socket);
  cpu.targets = {kBar0Base + 0x1000, kBar0Base + 0x14, kBar0Base + 0x1004};
  sc_start();
  // Doorbells: 2000 ns exit + 100 ns downstream; CC write: 3000 + 100.
  REQUIRE(cpu.delays == std::vector<sc_time>{sc_time(2100, SC_NS), sc_time(3100, SC_NS),
                                            sc_time(2100, SC_NS)});
  const ExitStats& e = hv.exits(0);
  CHECK(e.count[unsigned(ExitKind::MmioDoorbell)] == 2);
  CHECK(e.time[unsigned(ExitKind::MmioDoorbell)] == sc_time(4200, SC_NS));
  CHECK(e.count[unsigned(ExitKind::MmioOther)] == 1);
  CHECK(rc.addresses.size() == 3);
}

TEST_CASE("hypervisor: an ioeventfd takes the doorbell without its value", "[hypervisor]") {
  Hypervisor hv("hv", params(), 1);
  Sink rc("rc");
  Cpu cpu("cpu");
  cpu.socket.bind(hv.guest_mmio);
  hv.rc_initiator.bind(rc.socket);
  std::vector<uint32_t> notified;
  hv.set_ioeventfd([&](uint32_t off, const sc_time& d) {
    if (off != 0x1008) return false;  // only SQ 1's doorbell has an ioeventfd
    notified.push_back(off);
    CHECK(d == sc_time(900, SC_NS));
    return true;
  });
  cpu.targets = {kBar0Base + 0x1008, kBar0Base + 0x1000};
  sc_start();
  REQUIRE(cpu.delays == std::vector<sc_time>{sc_time(900, SC_NS), sc_time(2100, SC_NS)});
  CHECK(notified == std::vector<uint32_t>{0x1008});
  CHECK(rc.addresses == std::vector<uint64_t>{kBar0Base + 0x1000});  // the value never reaches the device
  CHECK(hv.exits(0).count[unsigned(ExitKind::Ioeventfd)] == 1);
  CHECK(hv.exits(0).count[unsigned(ExitKind::MmioDoorbell)] == 1);
}

TEST_CASE("hypervisor: MSI goes to its vCPU, injection and EOI exits", "[hypervisor]") {
  Hypervisor hv("hv", params(), 2);
  Irq a, b;
  hv.attach_vcpu(0, a);
  hv.attach_vcpu(1, b);
  hv.deliver_msi(1, 0x42, sc_time(5, SC_NS));
  hv.deliver_msi(7, 0x43, SC_ZERO_TIME);  // no such APIC: counted, dropped
  CHECK(a.got.empty());
  REQUIRE(b.got.size() == 1);
  CHECK(b.got[0].first == 0x42);
  CHECK(hv.lost_interrupts() == 1);
  CHECK(hv.interrupt_exit(1) == sc_time(700, SC_NS));
  CHECK(hv.eoi_exit(1) == sc_time(400, SC_NS));
  CHECK(hv.exits(1).count[unsigned(ExitKind::Interrupt)] == 1);
  CHECK(hv.exits(1).count[unsigned(ExitKind::Eoi)] == 1);
}

TEST_CASE("hypervisor: posted interrupts remove the injection exit", "[hypervisor]") {
  auto p = params();
  p.posted_interrupts = true;
  Hypervisor hv("hv", p, 1);
  CHECK(hv.interrupt_exit(0) == SC_ZERO_TIME);
  CHECK(hv.exits(0).count[unsigned(ExitKind::Interrupt)] == 0);
}

TEST_CASE("hypervisor: an exit in phases, the device sees the write before the vCPU is back", "[hypervisor]") {
  Hypervisor::Params p = params();
  p.exit_return_share = 0.25;
  Hypervisor hv("hv", p, 1);
  Sink rc("rc");
  Cpu cpu("cpu");
  cpu.socket.bind(hv.guest_mmio);
  hv.rc_initiator.bind(rc.socket);
  cpu.targets = {kBar0Base + 0x1000, kBar0Base + 0x14};
  sc_start();
  // Doorbell exit 2000 ns: the handler (the device) sees it at 1500, the
  // vCPU resumes at 1500 + 100 (the device's access) + 500. CC write 3000:
  // at 2250, back at 2250 + 100 + 750.
  REQUIRE(rc.arrivals == std::vector<sc_time>{sc_time(1500, SC_NS), sc_time(2250, SC_NS)});
  CHECK(cpu.delays == std::vector<sc_time>{sc_time(2100, SC_NS), sc_time(3100, SC_NS)});
  // The exit's time is the whole round trip.
  CHECK(hv.exits(0).time[unsigned(ExitKind::MmioDoorbell)] == sc_time(2100, SC_NS));
}
