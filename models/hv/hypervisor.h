// The hypervisor around the device: it traps the vCPUs' MMIO (each access a
// VM exit with its cost), hands doorbell writes to an ioeventfd when one is
// registered, injects MSI-X interrupts into vCPUs, and keeps per-vCPU exit
// statistics by kind.
#pragma once

#include <functional>
#include <utility>
#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_target_socket.h>
#include <tlm_utils/simple_initiator_socket.h>
#include <vector>

#include "nvmesim/models/mem/address_map.h"
#include "nvmesim/models/sim/param_visit.h"
#include "nvmesim/models/pcie/pcie_root_complex.h"
#include "nvmesim/models/host/wakeup_distribution.h"
#include "nvmesim/models/hv/vm_exit.h"

namespace nvmesim::models {

// Whoever takes interrupts (a vCPU).
class HostCpus;
class BigLock;

class InterruptTarget {
 public:
  virtual ~InterruptTarget() = default;
  virtual void raise_interrupt(uint32_t vector, const sc_core::sc_time& delay) = 0;
};

class Hypervisor : public sc_core::sc_module, public MsiSink {
 public:
  // hv.*, visited by HvParams (platform/config/hv_params.h) in the order
  // of --list-params, which interleaves them with the host threads'.
  struct Params {
    sc_core::sc_time exit_mmio;        // doorbell MMIO write
    sc_core::sc_time exit_mmio_other;  // other MMIO
    sc_core::sc_time exit_ioeventfd;   // doorbell write caught by an ioeventfd
    sc_core::sc_time inject;           // interrupt injection
    sc_core::sc_time exit_eoi;         // EOI
    bool posted_interrupts{};          // no injection exit on the receiving vCPU
    bool virtual_eoi{};                // APIC virtualization: EOI without exit
    // An IPI the guest sends (a wake-up's reschedule IPI): its x2APIC ICR
    // write is an MSR-write exit, handled in KVM's fast path
    // (arch/x86/kvm/x86.c handle_fastpath_set_msr_irqoff ->
    // kvm_x2apic_icr_write), unless IPI virtualization (Intel IPIv) sends it
    // without an exit.
    sc_core::sc_time exit_ipi;
    bool ipi_virtualization{};
    bool pio_doorbells{};              // what-if: doorbells written with port I/O
    sc_core::sc_time exit_pio;         // port I/O exit
    sc_core::sc_time exit_pio_ioeventfd;
    // An exit in phases (KVM: VM exit, kvm_arch_vcpu_ioctl_run's exit
    // handling, the return to user space and QEMU's dispatch; then the way
    // back, KVM_RUN and VM entry): this share of each trapped exit's cost
    // comes after the handler, so the device sees the write (and an
    // ioeventfd is signalled) that much before the vCPU is back in the guest.
    double exit_return_share{};
    // KVM halt polling (virt/kvm/kvm_main.c kvm_vcpu_halt): a halted vCPU
    // polls up to its window before it schedules out; the window grows from
    // halt_poll_ns_grow_start (10 us) by halt_poll_ns_grow (2) after short
    // halts, up to this (the module's halt_poll_ns), and drops to 0 after a
    // halt longer than it (halt_poll_ns_shrink = 0). 0: never poll.
    sc_core::sc_time halt_poll_max;
    // A vCPU that scheduled out: from its interrupt (kvm_vcpu_kick) to it
    // running in the guest again (the host scheduler's wake-up, VM entry).
    sc_core::sc_time halt_wakeup;
    // hv.wakeup (System copies HostThread::Params'): measured replaces
    // halt_wakeup with a draw (models/host/wakeup_distribution.h).
    WakeupModel wakeup = WakeupModel::Fixed;
    BigLock* bql = nullptr;            // MMIO handled in QEMU takes its global lock...
    sc_core::sc_time bql_hold;         // ...for this long
    // Under TCG the vCPU takes the lock to take an interrupt and again for
    // the xAPIC EOI write (QEMU 7.2 accel/tcg/cpu-exec.c cpu_handle_interrupt;
    // hw/intc/apic.c apic_mem_write), each for bql_hold.
    bool bql_interrupts{};
    // The device is passed through (VFIO): the guest's accesses reach its
    // BARs without an exit, except those to trapped host pages.
    bool passthrough{};
    bool msix_bar_mmap{};              // the host may map the pages holding MSI-X structures
    uint32_t page_bytes{};             // host page size: what VFIO maps and traps
  };
  // hv.page_size's names.
  static constexpr EnumEntry<uint32_t> page_sizes[] = {{4096, "4k"}, {65536, "64k"}};

  // vCPU i binds its MMIO initiator to guest_mmio in order of index.
  tlm_utils::multi_passthrough_target_socket<Hypervisor> guest_mmio;
  tlm_utils::simple_initiator_socket<Hypervisor> rc_initiator;

  // `cpus`, when given, stretches exit handling while host cores are shared.
  Hypervisor(sc_core::sc_module_name name, const Params& params, unsigned vcpus,
             HostCpus* cpus = nullptr);

  void attach_vcpu(unsigned apic_id, InterruptTarget& target);
  // An ioeventfd for doorbell writes: called with the BAR0 offset and the
  // exit's delay; returns false when no ioeventfd covers that doorbell (the
  // write is then an ordinary trapped MMIO write).
  // Where the device's doorbells start in BAR0 (NVMe: 0x1000; virtio: its
  // notify region): writes from there on count as doorbell exits.
  void set_doorbell_offset(uint32_t offset) { doorbell_offset_ = offset; }
  // ...and where they end (BAR0's end unless the device has more after them).
  void set_doorbell_end(uint32_t end) { doorbell_end_ = end; }
  // hv.passthrough: the physical address ranges [first, second) whose
  // accesses still trap (the host pages it could not map into the guest).
  void set_trapped_ranges(std::vector<std::pair<uint64_t, uint64_t>> ranges) { trapped_ = std::move(ranges); }
  bool trapped(uint64_t addr) const;
  void set_ioeventfd(std::function<bool(uint32_t, const sc_core::sc_time&)> handler) {
    ioeventfd_ = std::move(handler);
  }

  // MsiSink: the root complex delivers an MSI write.
  void deliver_msi(uint32_t apic_id, uint32_t vector, const sc_core::sc_time& delay) override;

  // Exits the vCPU takes around an interrupt; return the time it loses.
  sc_core::sc_time interrupt_exit(unsigned vcpu);
  // hv.bql_interrupts: vCPU `vcpu` takes the global lock for an interrupt's
  // delivery or EOI; returns the part of its wait still ahead. Its local
  // time must be synchronised. SC_ZERO_TIME without the lock.
  sc_core::sc_time interrupt_lock(unsigned vcpu);
  bool interrupts_take_lock() const { return params_.bql && params_.bql_interrupts; }
  sc_core::sc_time eoi_exit(unsigned vcpu);
  // The vCPU sends an IPI: the exit it takes (none with hv.ipiv).
  sc_core::sc_time ipi_exit(unsigned vcpu);
  void record_halt(unsigned vcpu, const sc_core::sc_time& idle);

  ExitStats exits(unsigned vcpu) const { return exits_.at(vcpu).figures(); }
  VcpuExitCounters& exit_counters(unsigned vcpu) { return exits_.at(vcpu); }
  stats::Group& stats() { return stats_; }
  uint64_t interrupts_delivered() const { return interrupts_delivered_; }
  uint64_t lost_interrupts() const { return lost_interrupts_; }
  const Params& params() const { return params_; }

 private:
  void b_transport(int id, tlm::tlm_generic_payload& payload, sc_core::sc_time& delay);
  unsigned int transport_dbg(int id, tlm::tlm_generic_payload& payload);

  sc_core::sc_time cost(const sc_core::sc_time& t) const;
  sc_core::sc_time return_part(const sc_core::sc_time& exit) const;  // exit_return_share of it

  Params params_;
  HostCpus* cpus_;
  std::vector<InterruptTarget*> targets_;
  std::vector<VcpuExitCounters> exits_;
  std::function<bool(uint32_t, const sc_core::sc_time&)> ioeventfd_;
  uint32_t doorbell_offset_ = 0x1000;
  uint32_t doorbell_end_ = uint32_t(kBar0Size);
  std::vector<std::pair<uint64_t, uint64_t>> trapped_;
  stats::Group stats_;  // "hv"
  stats::Scalar interrupts_delivered_{stats_, "interrupts_delivered", stats::Unit::Count,
                                      "MSIs delivered to a vCPU"};
  stats::Scalar lost_interrupts_{stats_, "lost_interrupts", stats::Unit::Count,
                                 "MSIs to an APIC id with no vCPU (dropped)"};
};

}  // namespace nvmesim::models
