#include "nvmesim/models/hv/hypervisor.h"

#include <cstring>

#include "nvmesim/models/host/big_lock.h"
#include "nvmesim/models/host/host_cpus.h"
#include "nvmesim/models/sim/kernel_time.h"
#include "nvmesim/traces/tracer.h"

using namespace sc_core;

namespace nvmesim::models {

Hypervisor::Hypervisor(sc_module_name name, const Params& params, unsigned vcpus, HostCpus* cpus)
    : sc_module(name),
      guest_mmio("guest_mmio"),
      rc_initiator("rc_initiator"),
      params_(params),
      cpus_(cpus),
      targets_(vcpus, nullptr),
      exits_(vcpus) {
  guest_mmio.register_b_transport(this, &Hypervisor::b_transport);
  guest_mmio.register_transport_dbg(this, &Hypervisor::transport_dbg);
}

sc_time Hypervisor::cost(const sc_time& t) const { return cpus_ ? cpus_->stretch(t) : t; }

sc_time Hypervisor::return_part(const sc_time& exit) const {
  if (params_.exit_return_share <= 0) return SC_ZERO_TIME;
  return sc_time::from_value(uint64_t(double(exit.value()) * params_.exit_return_share + 0.5));
}

void Hypervisor::attach_vcpu(unsigned apic_id, InterruptTarget& target) {
  targets_.at(apic_id) = &target;
}

bool Hypervisor::trapped(uint64_t addr) const {
  for (const auto& [begin, end] : trapped_)
    if (addr >= begin && addr < end) return true;
  return false;
}

void Hypervisor::b_transport(int id, tlm::tlm_generic_payload& payload, sc_time& delay) {
  const uint64_t addr = payload.get_address();
  if (params_.passthrough && !trapped(addr)) {
    // Mapped into the guest (VFIO mmap): the store goes to the device
    // without an exit; the vCPU does not wait for a posted write.
    rc_initiator->b_transport(payload, delay);
    return;
  }
  const bool doorbell = addr >= kBar0Base + doorbell_offset_ &&
                        addr < kBar0Base + doorbell_end_;
  const sc_time start = delay;
  if (doorbell && payload.is_write() && ioeventfd_) {
    // KVM matches the address in the exit path and signals the eventfd: the
    // value is not passed on, and no device code runs on this vCPU.
    const sc_time exit = cost(params_.pio_doorbells ? params_.exit_pio_ioeventfd : params_.exit_ioeventfd);
    const sc_time exit_delay = delay + exit;
    if (ioeventfd_(uint32_t(addr - kBar0Base), exit_delay - return_part(exit))) {
      delay = exit_delay;
      payload.set_response_status(tlm::TLM_OK_RESPONSE);
      exits_.at(id).add(ExitKind::Ioeventfd, delay - start);
      if (auto* t = traces::active())
        t->vm_exit(unsigned(id), to_string(ExitKind::Ioeventfd), (kernel_now() + start).value(),
                   (kernel_now() + delay).value());
      return;
    }
  }
  const sc_time start_abs = kernel_now() + start;
  // Held from the exit's start: waiting for the global lock below advances
  // the kernel, and the exit is reported only at its end.
  if (auto* t = traces::active()) t->hold_begin(traces::Hold::VcpuExit, unsigned(id), start_abs.value());
  const bool pio = doorbell && params_.pio_doorbells;
  // The handler runs in QEMU under its global lock: it may wait for the
  // main loop, and the main loop waits for it.
  if (params_.bql) {
    const sc_time asked = kernel_now() + delay;
    const sc_time ahead = params_.bql->hold_for_handler(params_.bql_hold, delay);  // may let delay pass
    exits_.at(id).bql_wait += (kernel_now() + delay - asked) + ahead;  // waited, then still to wait
    delay += ahead;
  }
  const sc_time exit = cost(pio ? params_.exit_pio : doorbell ? params_.exit_mmio : params_.exit_mmio_other);
  const sc_time back = return_part(exit);
  delay += exit - back;
  rc_initiator->b_transport(payload, delay);  // may wait (device work inside the exit)
  delay += back;  // the way back into the guest, after the handler
  const sc_time end_abs = kernel_now() + delay;
  const ExitKind kind = pio ? ExitKind::PortIo : doorbell ? ExitKind::MmioDoorbell : ExitKind::MmioOther;
  exits_.at(id).add(kind, end_abs - start_abs);
  if (auto* t = traces::active()) {
    t->vm_exit(unsigned(id), to_string(kind), start_abs.value(), end_abs.value());
    t->hold_end(traces::Hold::VcpuExit, unsigned(id));
  }
}

unsigned int Hypervisor::transport_dbg(int, tlm::tlm_generic_payload& payload) {
  return rc_initiator->transport_dbg(payload);
}

void Hypervisor::deliver_msi(uint32_t apic_id, uint32_t vector, const sc_time& delay) {
  if (apic_id >= targets_.size() || !targets_[apic_id]) {
    ++lost_interrupts_;
    return;
  }
  ++interrupts_delivered_;
  targets_[apic_id]->raise_interrupt(vector, delay);
}

sc_time Hypervisor::interrupt_exit(unsigned vcpu) {
  if (params_.posted_interrupts) return SC_ZERO_TIME;
  const sc_time t = cost(params_.inject);
  exits_.at(vcpu).add(ExitKind::Interrupt, t);
  return t;
}

sc_time Hypervisor::interrupt_lock(unsigned vcpu) {
  if (!interrupts_take_lock()) return SC_ZERO_TIME;
  const sc_time asked = kernel_now();
  const sc_time ahead = params_.bql->hold_for_handler(params_.bql_hold);
  exits_.at(vcpu).bql_wait += (kernel_now() - asked) + ahead;
  return ahead;
}

sc_time Hypervisor::eoi_exit(unsigned vcpu) {
  if (params_.virtual_eoi) return SC_ZERO_TIME;
  const sc_time t = cost(params_.exit_eoi);
  exits_.at(vcpu).add(ExitKind::Eoi, t);
  return t;
}

sc_time Hypervisor::ipi_exit(unsigned vcpu) {
  if (params_.ipi_virtualization) return SC_ZERO_TIME;
  const sc_time t = cost(params_.exit_ipi);
  if (t == SC_ZERO_TIME) return t;  // no exit (TCG sets the target's flag: hw/intc/apic.c apic_set_irq)
  exits_.at(vcpu).add(ExitKind::Ipi, t);
  return t;
}

void Hypervisor::record_halt(unsigned vcpu, const sc_time& idle) {
  exits_.at(vcpu).add(ExitKind::Hlt, idle);
}

}  // namespace nvmesim::models
