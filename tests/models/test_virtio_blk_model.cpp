// VirtioBlkModel driven through the root complex by the firmware's Linux-like
// virtio-blk driver on a CPU thread: bring-up over the common config, kicks
// through the notify region and a deferred host thread, MSI-X back. Counts
// follow from the mechanism: with a dispatch latency, everything the driver
// adds in one instant is in the ring before the device looks.
#include <catch2/catch.hpp>

#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "nvmesim/firmware/guest/virtio_blk_driver.h"
#include "nvmesim/models/mem/address_map.h"
#include "nvmesim/models/mem/guest_memory.h"
#include "nvmesim/models/host/host_thread.h"
#include "nvmesim/models/pcie/pcie_link.h"
#include "nvmesim/models/pcie/pcie_root_complex.h"
#include "nvmesim/models/virtio/virtio_blk_model.h"
#include "nvmesim/platform/config/visitors.h"

using namespace nvmesim;
using namespace nvmesim::models;
using sc_core::SC_NS;
using sc_core::SC_US;
using sc_core::SC_ZERO_TIME;
using sc_core::sc_time;

namespace {

constexpr uint64_t kMemBytes = 16u << 20;
constexpr uint32_t kApic = 3, kVector = 0x52;

struct CountingSink : MsiSink {
  unsigned count = 0;
  void deliver_msi(uint32_t, uint32_t, const sc_time&) override { ++count; }
};

// The guest CPU: the driver's VirtioDriverEnv, its BAR accesses through the root complex.
struct Cpu : sc_core::sc_module, fw::VirtioDriverEnv {
  tlm_utils::simple_initiator_socket<Cpu> socket{"socket"};
  GuestMemory* mem = nullptr;
  std::function<void()> body;
  bool done = false;
  SC_HAS_PROCESS(Cpu);
  explicit Cpu(sc_core::sc_module_name n) : sc_core::sc_module(n) { SC_THREAD(run); }
  void run() {
    if (body) body();
    done = true;
  }
  uint32_t access(tlm::tlm_command cmd, uint32_t offset, uint32_t value, unsigned len) {
    tlm::tlm_generic_payload p;
    p.set_command(cmd);
    p.set_address(kBar0Base + offset);
    p.set_data_ptr(reinterpret_cast<unsigned char*>(&value));
    p.set_data_length(len);
    p.set_streaming_width(len);
    p.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    sc_time delay = SC_ZERO_TIME;
    socket->b_transport(p, delay);
    sc_core::wait(delay);
    return value;
  }
  uint8_t* guest_memory(uint64_t gpa, uint32_t len) override { return mem->ptr(gpa, len); }
  void write_barrier() override {}
  void read_barrier() override {}
  void full_barrier() override {}
  uint32_t mmio_read(uint32_t offset, unsigned size) override {
    return access(tlm::TLM_READ_COMMAND, offset, 0, size);
  }
  void mmio_write(uint32_t offset, unsigned size, uint32_t value) override {
    access(tlm::TLM_WRITE_COMMAND, offset, value, size);
  }
};

struct Bench {
  GuestMemory mem;
  PcieRootComplex rc;
  HostThread thread;
  VirtioBlkModel dev;
  Cpu cpu;
  CountingSink sink;
  fw::VirtioBlkDriver driver;

  static HostThread::Params thread_params() {
    HostThread::Params t;
    t.dispatch_latency = sc_time(2000, SC_NS);
    t.dispatch_cost = sc_time(300, SC_NS);
    return t;
  }
  static VirtioBlkModel::Params dev_params(bool event_idx, bool indirect) {
    VirtioBlkModel::Params p;
    p.firmware.num_queues = 1;
    p.firmware.queue_size_max = 128;
    p.firmware.event_idx = event_idx;
    p.firmware.indirect_desc = indirect;
    p.firmware.capacity_sectors = (64u << 20) / 512;
    p.backend.kind = BackendKind::Null;
    p.backend.capacity = 64u << 20;
    p.notifier.mode = NotifyMode::Deferred;
    p.req_cost = sc_time(700, SC_NS);
    return p;
  }
  static fw::VirtioBlkDriverConfig drv_config() {
    fw::VirtioBlkDriverConfig c;
    c.queues = 1;
    c.queue_size = 128;
    c.max_transfer_bytes = 4096;
    c.memory_base = 1u << 20;
    c.memory_bytes = kMemBytes - (1u << 20);
    return c;
  }
  // indirect: the device offers VIRTIO_RING_F_INDIRECT_DESC (the driver accepts it).
  explicit Bench(bool event_idx, bool indirect = true)
      : mem("mem", kMemBytes, SC_ZERO_TIME),
        rc("rc", [] {
          auto l = nvmesim::platform::default_params<PcieLinkParams>();
          l.mode = PcieMode::Emulated;
          return PcieLink(l);
        }()),
        thread("thread", thread_params()),
        dev("virtio", dev_params(event_idx, indirect), {&thread}, rc.link()),
        cpu("cpu"),
        driver(drv_config(), cpu) {
    cpu.mem = &mem;
    cpu.socket.bind(rc.cpu_target);
    rc.bar0_initiator.bind(dev.bar0_target);
    rc.msix_bar_initiator.bind(dev.msix_target);
    rc.config_initiator.bind(dev.config_target);
    rc.mem_initiator.bind(mem.socket);
    dev.dma_initiator.bind(rc.dma_target);
    rc.bind_msi_sink(sink);
    dev.program_msix_vector(1, msi_address(kApic), kVector);
  }
  // Waits for an MSI-X the driver has not taken, then runs its handler.
  unsigned taken = 0;
  std::vector<fw::VirtioBlkDriver::UsedRequest> take_interrupt() {
    while (sink.count == taken) sc_core::wait(sc_time(1, SC_US));
    ++taken;
    std::vector<fw::VirtioBlkDriver::UsedRequest> used;
    driver.interrupt(0, used);
    for (const auto& u : used) driver.end_request(0, u.tag);  // completed: the tags are free
    return used;
  }
};

fw::IoSpec read_at(uint64_t lba) {
  fw::IoSpec io;
  io.opcode = nvme::io::READ;
  io.slba = lba;
  io.nlb = 8;
  return io;
}

}  // namespace

TEST_CASE("virtio-blk model: the capabilities and ids of a modern virtio-blk function") {
  Bench b(true);
  uint32_t id = 0, cap = 0, next = 0, hops = 0;
  b.cpu.body = [&] {
    tlm::tlm_generic_payload p;
    auto cfg = [&](uint64_t off) {
      uint32_t v = 0;
      p.set_command(tlm::TLM_READ_COMMAND);
      p.set_address(kEcamBase + off);
      p.set_data_ptr(reinterpret_cast<unsigned char*>(&v));
      p.set_data_length(4);
      p.set_streaming_width(4);
      sc_time d = SC_ZERO_TIME;
      b.cpu.socket->b_transport(p, d);
      return v;
    };
    id = cfg(0);
    // The first vendor-specific capability, after the endpoint's PM,
    // MSI-X and PCI Express ones.
    for (next = cfg(0x34) & 0xFF; next && hops < 16; next = (cfg(next) >> 8) & 0xFF, ++hops) {
      cap = cfg(next);
      if ((cap & 0xFF) == 0x09) break;
    }
  };
  sc_core::sc_start();
  CHECK(id == 0x10421AF4u);
  CHECK(next >= 0x40);
  CHECK(hops == 3);
  CHECK((cap & 0xFF) == 0x09);          // vendor-specific capability
  CHECK(((cap >> 24) & 0xFF) == 1);     // VIRTIO_PCI_CAP_COMMON_CFG
}

TEST_CASE("virtio-blk model: EVENT_IDX on, 32 kicks in one instant, one MMIO kick and one interrupt") {
  Bench b(true);
  size_t completed = 0;
  b.cpu.body = [&] {
    if (!b.driver.bring_up().ok) return;
    for (int i = 0; i < 32; ++i) {
      if (b.driver.submit(0, read_at(uint64_t(i) * 8)) < 0) return;
      b.driver.kick(0);
    }
    // The guest does not take its interrupt before the device has finished
    // all 32 (used_event stays 0 meanwhile).
    sc_core::wait(sc_time(200, SC_US));
    while (completed < 32) completed += b.take_interrupt().size();
  };
  sc_core::sc_start();
  REQUIRE(b.cpu.done);
  CHECK(completed == 32);
  const auto& c = b.driver.counters(0);
  CHECK(c.updates == 32);
  CHECK(c.mmio == 1);
  CHECK(c.suppressed == 31);
  CHECK(c.updates == c.mmio + c.suppressed);
  const auto& d = b.dev.firmware().counters();
  CHECK(d.notifies == 1);
  CHECK(d.requests == 32);
  CHECK(d.interrupts == 1);
  CHECK(d.interrupts_suppressed == 31);
  CHECK(b.sink.count == 1);
  CHECK_FALSE(b.dev.firmware().broken());
}

TEST_CASE("virtio-blk model: EVENT_IDX off, 32 kicks in one instant, 32 MMIO kicks and 32 interrupts") {
  Bench b(false);
  size_t completed = 0;
  b.cpu.body = [&] {
    if (!b.driver.bring_up().ok) return;
    for (int i = 0; i < 32; ++i) {
      if (b.driver.submit(0, read_at(uint64_t(i) * 8)) < 0) return;
      b.driver.kick(0);
    }
    while (completed < 32) completed += b.take_interrupt().size();
    sc_core::wait(sc_time(100, SC_US));  // the other interrupts arrive and find nothing
    while (b.taken < b.sink.count) b.take_interrupt();
  };
  sc_core::sc_start();
  REQUIRE(b.cpu.done);
  CHECK(completed == 32);
  const auto& c = b.driver.counters(0);
  CHECK(c.mmio == 32);
  CHECK(c.suppressed == 0);
  CHECK(c.updates_with_dbbuf == 0);
  const auto& d = b.dev.firmware().counters();
  CHECK(d.notifies == 32);
  CHECK(d.interrupts == 32);
  CHECK(d.interrupts_suppressed == 0);
  CHECK(b.sink.count == 32);
  CHECK(c.interrupts + c.spurious_interrupts == 32);
}

TEST_CASE("virtio-blk model: iodepth 1 kicks and interrupts once per request") {
  Bench b(true);
  size_t completed = 0;
  b.cpu.body = [&] {
    if (!b.driver.bring_up().ok) return;
    for (int i = 0; i < 50; ++i) {
      if (b.driver.submit(0, read_at(uint64_t(i) * 8)) < 0) return;
      b.driver.kick(0);
      completed += b.take_interrupt().size();
    }
  };
  sc_core::sc_start();
  REQUIRE(b.cpu.done);
  CHECK(completed == 50);
  CHECK(b.driver.counters(0).mmio == 50);
  CHECK(b.driver.counters(0).suppressed == 0);
  CHECK(b.dev.firmware().counters().interrupts == 50);
  CHECK(b.dev.firmware().counters().interrupts_suppressed == 0);
}

TEST_CASE("virtio-blk model: a descriptor loop breaks the device and the run ends cleanly") {
  Bench b(true, false);  // the chain in the ring, not in an indirect table
  bool broken_seen = false;
  b.cpu.body = [&] {
    if (!b.driver.bring_up().ok) return;
    if (b.driver.submit(0, read_at(0)) < 0) return;
    const auto& r = b.driver.vq(0).ring();
    // The status descriptor (the chain's last) points to itself.
    uint16_t i = fw::virtio::ld16(b.mem.ptr(r.avail_ring(0), 2));
    while (fw::virtio::ld16(b.mem.ptr(r.desc_at(i) + 12, 2)) & fw::virtio::DESC_F_NEXT)
      i = fw::virtio::ld16(b.mem.ptr(r.desc_at(i) + 14, 2));
    uint8_t* d = b.mem.ptr(r.desc_at(i), 16);
    fw::virtio::st16(d + 12, uint16_t(fw::virtio::ld16(d + 12) | fw::virtio::DESC_F_NEXT));
    fw::virtio::st16(d + 14, i);
    b.driver.kick(0);
    sc_core::wait(sc_time(100, SC_US));
    // The driver reads DEVICE_NEEDS_RESET in the status.
    broken_seen = (b.cpu.mmio_read(fw::virtio::common_cfg::DEVICE_STATUS, 1) &
                   fw::virtio::STATUS_DEVICE_NEEDS_RESET) != 0;
  };
  sc_core::sc_start();
  REQUIRE(b.cpu.done);
  CHECK(broken_seen);
  CHECK(b.dev.firmware().error() == "Looped descriptor");
  CHECK(b.sink.count == 0);
  CHECK(b.driver.outstanding(0) == 1);
}
