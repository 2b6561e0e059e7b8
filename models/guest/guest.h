// The guest operating system around the NVMe driver: one driver instance
// (firmware/guest/driver) shared by the vCPUs, each I/O queue driven from the vCPU
// that owns it; bring-up by vCPU 0 (the boot CPU) before the jobs start;
// guest memory seen directly by the vCPUs; the measured phase.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <systemc>
#include <vector>

#include "nvmesim/firmware/guest/driver.h"
#include "nvmesim/firmware/guest/virtio_blk_driver.h"
#include "nvmesim/models/mem/guest_memory.h"
#include "nvmesim/models/hv/hypervisor.h"
#include "nvmesim/models/sim/param_defaults.h"
#include "nvmesim/models/sim/param_visit.h"
#include "nvmesim/models/guest/vcpu.h"

namespace nvmesim::models {

// The guest driver's parameters, guest.* (see models/sim/param_visit.h): the
// driver's settings, what it costs each vCPU, and the interrupt coalescing
// it asks for. The DriverConfig fields not visited follow from the workload
// and the controller (System sets them).
struct GuestParams {
  fw::DriverConfig driver;
  GuestCpuCosts cpu;
  double irq_coalescing_time_ns{};  // Set Features 0x08 TIME, a multiple of 100 us
  fw::VirtioRingFault virtio_fault = fw::VirtioRingFault::None;  // device=virtio-blk
  uint64_t virtio_fault_after = 0;

  GuestParams() { set_param_defaults(*this); }  // the visit lines' defaults

  static constexpr const char* param_prefix = "guest";
  static constexpr EnumEntry<bool> prp_faults[] = {{false, "none"}, {true, "misaligned"}};
  static constexpr EnumEntry<bool> completion_paths[] = {{true, "irq"}, {false, "poll"}};
  template <class V>
  void visit(V& v) {
    using namespace param_units;
    v.time(cpu.submit_cost, "submit_cost", "1500ns", 0, 1 * MS, "block layer + driver CPU work per command");
    v.time(cpu.complete_cost, "complete_cost", "1000ns", 0, 1 * MS, "driver CPU work per completion");
    v.time(cpu.irq_entry, "irq_entry", "500ns", 0, 1 * MS, "guest interrupt handler entry");
    v.time(cpu.submit_call_cost, "submit_call_cost", "0ns", 0, 1 * MS,
           "guest CPU per io_submit call (one per iodepth_batch_submit batch), besides submit_cost per command");
    v.time(cpu.reap_call_cost, "reap_call_cost", "0ns", 0, 1 * MS,
           "guest CPU per io_getevents call (one per fio reap)");
    v.time(cpu.reap_event_cost, "reap_event_cost", "0ns", 0, 1 * MS,
           "guest CPU per event an io_getevents call returns");
    v.time(cpu.reap_sleep_cost, "reap_sleep_cost", "0ns", 0, 1 * MS,
           "guest CPU per io_getevents call that found fewer than its minimum and slept: the task's switch "
           "out and, once woken, back in (fs/aio.c read_events -> schedule)");
    v.integer(driver.io_queue_entries, "io_queue_entries", "1024", "entries", 2, 65536,
              "entries of each I/O submission and completion queue");
    v.choice(driver.io_prp1_misaligned, "io_prp_fault", "none", prp_faults, "",
             "fault injection: every I/O's PRP1 off dword alignment (PRP Offset Invalid; the run fails)");
    v.choice(driver.dbbuf_config_fault, "dbbuf_fault", "none", fw::dbbuf_config_faults, "",
             "fault injection: Doorbell Buffer Config with a bad PRP1/PRP2 (refused; MMIO fallback)");
    v.choice(virtio_fault, "virtio_fault", "none", fw::virtio_ring_faults, "",
             "fault injection (device=virtio-blk): one request on virtqueue 0 published malformed; the device "
             "breaks (DEVICE_NEEDS_RESET) as QEMU's virtqueue_split_pop does");
    v.integer(virtio_fault_after, "virtio_fault_after", "0", "requests", 0, 1e12,
              "requests on virtqueue 0 published well before guest.virtio_fault's malformed one");
    v.integer(driver.io_cq_entries, "io_cq_entries", "0", "entries", 0, 65536,
              "entries of each I/O completion queue (0 = as the SQ; else 2..65536)");
    v.choice(driver.interrupts, "completion", "irq", completion_paths, "",
             "completion path: interrupts or polling the CQ");
    v.time(cpu.poll_interval, "poll_interval", "1us", 1 * NS, 1 * MS,
           "CQ polling period for guest.completion=poll");
    v.flag(driver.admin_shadow, "admin_shadow", "off",
           "use the shadow doorbell for the admin queue too (Linux never does)");
    v.flag(driver.dbbuf_full_barrier, "dbbuf_full_barrier", "on",
           "full barrier between the shadow store and the EventIdx load (off: Google's old driver)");
    v.choice(driver.need_event_form, "need_event", "linux", fw::need_event_forms, "",
             "doorbell test: linux (new-idx-1)<(new-old), inclusive (new-idx)<=(new-old) as SPDK");
    v.time(cpu.store_visibility, "store_visibility", "20ns", 0, 10 * US,
           "how long a store can sit in the store buffer before it is visible");
    v.integer(driver.irq_coalescing_threshold, "irq_coalescing_thr", "0", "CQEs", 0, 256,
              "Set Features 0x08 at bring-up: interrupt after this many CQEs (0 = not configured; needs "
              "guest.irq_coalescing_time > 0, TIME 0 = no delay)");
    v.time(irq_coalescing_time_ns, "irq_coalescing_time", "0us", 0, 25.5 * MS,
           "Set Features 0x08: or this long after the first held one (multiple of 100 us)");
    v.real(cpu.verify_gbps, "verify_gbps", "0", "GB/s", 0, 1000,
           "guest CPU throughput of fio verify's fill and check, per byte written or read back (0 = the "
           "mode's figure measured for nvmesim's own table-driven code on one x86-64 core: "
           "models/guest/fio_job_verify.cpp; an assumption for the guest's fio)");
  }
};

class Guest : public sc_core::sc_module {
 public:
  Guest(sc_core::sc_module_name name, const fw::DriverConfig& config, GuestMemory& memory,
        Hypervisor& hypervisor);

  // The vCPU drives its I/O queue; the first one added is the boot CPU
  // (it also drives the admin queue).
  void add_vcpu(Vcpu& vcpu);
  void set_doorbell_stride(uint32_t dstrd) { dstrd_ = dstrd; }  // for traces
  // Where the device's MSI-X table is (its MSI-X capability's Table BIR and
  // offset, as the PCI core reads them): BAR2 unless the device says else.
  void set_msix_table_address(uint64_t address) { msix_table_address_ = address; }
  uint64_t msix_table_address() const { return msix_table_address_; }
  // The guest drives a virtio-blk device instead (before add_vcpu): Linux's
  // virtio_blk, queue q on the vCPU of I/O queue pair q + 1.
  void use_virtio_blk(const fw::VirtioBlkDriverConfig& config) { virtio_config_ = config; use_virtio_ = true; }
  fw::VirtioBlkDriver* virtio() { return virtio_.get(); }
  const fw::VirtioBlkDriver* virtio() const { return virtio_.get(); }
  const fw::VirtioBlkDriverConfig* virtio_config() const { return use_virtio_ ? &virtio_config_ : nullptr; }
  fw::Driver& driver() { return *driver_; }
  const fw::Driver& driver() const { return *driver_; }
  GuestMemory& memory() { return memory_; }
  Hypervisor& hypervisor() { return hypervisor_; }

  // Bring-up, on the boot CPU `boot` (the others wait for it): the PCI core
  // programs MSI-X, then the driver brings the controller up.
  void bring_up(Vcpu& boot);
  bool ready() const { return ready_; }
  const sc_core::sc_event& ready_event() const { return ready_event_; }
  const fw::BringUpResult& bringup() const { return bringup_; }
  sc_core::sc_time bringup_time() const { return bringup_time_; }
  sc_core::sc_time measure_start() const { return measure_start_; }
  // A device that busy-polls the avail rings (virtio.busy_poll) watches the
  // avail->idx stores: the vCPU calls avail_published (`delay`: its offset
  // from now) after each one. The model has no memory watch to see them.
  using AvailWatch = std::function<void(uint16_t queue, const sc_core::sc_time& delay)>;
  void watch_avail(AvailWatch watch) { avail_watch_ = std::move(watch); }
  bool watching_avail() const { return bool(avail_watch_); }
  void avail_published(uint16_t queue, const sc_core::sc_time& delay) {
    if (avail_watch_) avail_watch_(queue, delay);
  }
  // Hooks called when the measured phase starts (snapshot counters).
  void on_measure_start(std::function<void()> hook) { measure_hooks_.push_back(std::move(hook)); }

  void vcpu_finished();
  // Traces: a store to the shadow doorbell buffer became visible now.
  void trace_shadow_store(uint64_t gpa, uint32_t value, const sc_core::sc_time& at);
  unsigned vcpus_running() const { return running_; }
  size_t vcpu_count() const { return vcpus_.size(); }
  const std::vector<Vcpu*>& vcpus() const { return vcpus_; }
  // Jobs asleep for a free tag of a shared virtqueue (blk_mq_get_tag): a
  // completion looks for them to wake only while there are some.
  unsigned& tag_waiters() { return tag_waiters_; }

 private:
  // Linux's pci_alloc_irq_vectors with managed affinity: vector 0 (the
  // admin queue) to the boot CPU, vector q to the vCPU that owns I/O queue q.
  void program_msix(Vcpu& boot);

  GuestMemory& memory_;
  uint64_t msix_table_address_ = kBar2Base;
  Hypervisor& hypervisor_;
  std::unique_ptr<fw::Driver> driver_;
  bool use_virtio_ = false;
  fw::VirtioBlkDriverConfig virtio_config_;
  std::unique_ptr<fw::VirtioBlkDriver> virtio_;
  std::string bringup_error_;  // storage for bringup_.error (virtio-blk)
  std::vector<Vcpu*> vcpus_;
  bool ready_ = false;
  sc_core::sc_event ready_event_;
  fw::BringUpResult bringup_;
  sc_core::sc_time bringup_time_, measure_start_;
  std::vector<std::function<void()>> measure_hooks_;
  AvailWatch avail_watch_;
  unsigned running_ = 0;
  unsigned tag_waiters_ = 0;
  uint32_t dstrd_ = 0;
};

}  // namespace nvmesim::models
