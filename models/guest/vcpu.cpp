#include "nvmesim/models/guest/vcpu.h"

#include <cstring>
#include <sstream>

#include "nvmesim/firmware/hv/halt_poll.h"
#include "nvmesim/models/guest/guest.h"
#include "nvmesim/models/host/host_cpus.h"
#include "nvmesim/models/sim/activations.h"
#include "nvmesim/models/sim/kernel_time.h"
#include "nvmesim/models/sim/lookahead.h"
#include "nvmesim/traces/tracer.h"

using namespace sc_core;

namespace nvmesim::models {

Vcpu::Vcpu(sc_module_name name, const Params& params, Guest& guest)
    : sc_module(name), mmio_socket("mmio_socket"), params_(params), guest_(guest),
      job_(*this, params_, results_, guest),
      wakeup_stream_((params.job.seed + 1) * 2000003u + params.index + 1) {
  store_buffer_.reserve(64);
  if (params_.cpus) cpu_id_ = params_.cpus->add_thread(this->name());
  SC_HAS_PROCESS(Vcpu);
  SC_THREAD(run);
  thread_ = sc_get_current_process_handle();
  SC_METHOD(store_buffer_drain);
  sensitive << store_event_;
  dont_initialize();
}

void Vcpu::run() {
  activations::begin(activations::VcpuThread);
  qk_.refresh_quantum();
  if (params_.index == 0) {
    guest_.bring_up(*this);
  } else if (!guest_.ready()) {
    activations::wait(guest_.ready_event());
  }
  if (guest_.bringup().ok && !waits_for_.empty()) {  // stonewall / wait_for: idle until they finish
    sync_local();
    waiting_for_jobs_ = true;
    for (const Vcpu* v : waits_for_)
      while (!v->results().finished) activations::wait(v->finished_event());
    waiting_for_jobs_ = false;
    results_.released = kernel_now();
  }
  set_runnable(true);
  if (guest_.bringup().ok) {
    job_running_ = true;
    job_.run();
    job_running_ = false;
  }
  set_runnable(false);
  results_.done = now();
  results_.finished = true;
  activations::notify(finished_event_, SC_ZERO_TIME);
  guest_.vcpu_finished();
  if (guest_.bringup().ok && serves_shared_queue()) serve_queue();
}

// Queue q's interrupt goes to vCPU q (Guest::program_msix); other jobs
// submit on it too when there are fewer virtqueues than jobs.
bool Vcpu::serves_shared_queue() const {
  const fw::VirtioBlkDriver* vb = guest_.virtio();
  if (!vb) return false;  // NVMe: one I/O queue pair per job (numjobs <= nvme.max_io_queues)
  const uint32_t queues = vb->last_bring_up().queues;
  return params_.index < queues && params_.index + queues < guest_.vcpu_count();
}

// The job has finished, but the vCPU still takes its queue's interrupt:
// Linux runs vring_interrupt -> virtblk_done on the interrupt's CPU whatever
// that CPU runs (here: its idle loop), completing the other jobs' requests
// and waking them. It halts between interrupts; the run ends when the last
// job finishes (Guest::vcpu_finished), with this thread halted.
void Vcpu::serve_queue() {
  serving_queue_ = true;
  for (;;)
    if (wait_for_interrupt()) take_io_interrupt();
}

// The quantum keeper's sync() waits even for a zero offset (a delta cycle);
// skip that: nothing to let pass.
void Vcpu::sync_local() {
  arm_store_drain();
  qk_.sync();
}

void Vcpu::set_runnable(bool runnable) {
  if (params_.cpus) params_.cpus->set_runnable(cpu_id_, runnable);
}

void Vcpu::guest_work(const sc_time& work) {
  const sc_time t = params_.cpus ? params_.cpus->stretch(work) : work;
  results_.guest_time += t;
  if (in_interrupt_ || !job_running_ || params_.poll_completions) {
    qk_.inc(t);
    if (qk_.need_sync() && must_sync(qk_.local_time())) sync_local();
    return;
  }
  // The I/O interrupt preempts guest work: the handler runs when it arrives
  // and the work goes on after it (an interrupt is taken at the next
  // instruction boundary with interrupts enabled, whatever the guest does).
  sc_time remaining = t;
  for (;;) {
    if (io_interrupt_due()) {  // another may arrive during the handler: taken after its EOI
      take_io_interrupt();
      continue;
    }
    if (remaining == SC_ZERO_TIME) return;
    if (irq_pending_ && irq_time_ < now() + remaining) {  // known: run up to it
      const sc_time step = irq_time_ - now();
      qk_.inc(step);
      remaining -= step;
      continue;
    }
    if (qk_.within_quantum(remaining)) {
      qk_.inc(remaining);
      remaining = SC_ZERO_TIME;
      continue;
    }
    if (!must_sync(qk_.local_time() + remaining)) {  // nothing can interrupt it
      qk_.inc(remaining);
      remaining = SC_ZERO_TIME;
      continue;
    }
    // Longer: let time pass, waking for an interrupt raised meanwhile.
    const sc_time ahead = qk_.local_time();
    sc_time start;
    if (ahead != SC_ZERO_TIME && store_head_ == store_buffer_.size() && !activity_due_within(ahead)) {
      // Nothing is due before the vCPU's present, so no interrupt can be
      // raised for a time before it: one wait covers catching up and the work.
      start = kernel_now() + ahead;
      qk_.set(SC_ZERO_TIME);
      activations::wait(ahead + remaining, irq_event_);
    } else {
      sync_local();
      start = kernel_now();
      activations::wait(remaining, irq_event_);
    }
    remaining -= kernel_now() - start;
  }
}

// ---------------------------------------------------------------- interrupts
void Vcpu::raise_interrupt(uint32_t vector, const sc_time& delay) {
  if (vector == params_.admin_vector && vector != params_.io_vector) {
    // The admin queue's interrupt: the guest takes it (an injection and an
    // EOI) at its next instruction boundary; the driver polls the admin CQ.
    ++admin_irqs_pending_;
    if (!guest_.ready()) return;  // bring-up: taken while polling
  }
  const sc_time at = kernel_now() + delay;
  if (vector != params_.io_vector) {  // admin only: wakes the vCPU to take it
    activations::notify(irq_event_, delay);
    return;
  }
  if (!irq_pending_ || at < irq_time_) irq_time_ = at;
  irq_pending_ = true;
  activations::notify(irq_event_, delay);
}

// The I/O interrupt: its injection (an exit, the global lock under
// hv.bql_interrupts), the handler's entry, the driver's completion pass
// (nvme_irq), the EOI.
void Vcpu::take_io_interrupt() {
  irq_pending_ = false;
  in_interrupt_ = true;
  Hypervisor& hv = guest_.hypervisor();
  const sc_time exit = hv.interrupt_exit(params_.index);
  if (auto* t = traces::active()) {
    t->interrupt(params_.index, now().value());
    if (exit != SC_ZERO_TIME) t->vm_exit(params_.index, "interrupt", now().value(), (now() + exit).value());
  }
  qk_.inc(exit);
  take_interrupt_lock();  // hv.bql_interrupts: delivery under the global lock
  ++results_.interrupts;
  guest_work(params_.irq_entry);
  job_.process_completions();
  const sc_time eoi = hv.eoi_exit(params_.index);
  if (eoi != SC_ZERO_TIME)
    if (auto* t = traces::active()) t->vm_exit(params_.index, "eoi", now().value(), (now() + eoi).value());
  qk_.inc(eoi);
  take_interrupt_lock();  // ...and the xAPIC EOI write
  in_interrupt_ = false;
}

void Vcpu::take_interrupt_lock() {
  Hypervisor& hv = guest_.hypervisor();
  if (!hv.interrupts_take_lock()) return;
  sync_local();
  qk_.inc(hv.interrupt_lock(params_.index));
}

void Vcpu::take_admin_interrupts() {
  while (admin_irqs_pending_) {
    --admin_irqs_pending_;
    qk_.inc(guest_.hypervisor().interrupt_exit(params_.index));
    qk_.inc(guest_.hypervisor().eoi_exit(params_.index));
  }
}

bool Vcpu::complete_remote(const fw::Completion& c, const sc_time& at) {
  job_.record_completion(c, at);
  return wake(at);
}

// A wake-up of a job already woken (its task running again) sends no
// second IPI: try_to_wake_up finds it TASK_RUNNING.
bool Vcpu::wake(const sc_time& at) {
  const bool ipi = asleep_ && !woken_;
  if (!woken_ || at < wake_time_) wake_time_ = at;
  woken_ = true;
  activations::notify(irq_event_, at > kernel_now() ? at - kernel_now() : SC_ZERO_TIME);
  return ipi;
}

// try_to_wake_up -> ttwu_queue / resched_curr -> smp_send_reschedule
// (arch/x86/kernel/smp.c native_smp_send_reschedule): an x2APIC ICR write,
// which KVM handles in its fast path (handle_fastpath_set_msr_irqoff ->
// kvm_x2apic_icr_write) without a trip to QEMU; Intel's IPI virtualization
// sends it with no exit at all. The woken vCPU pays its own wake-up from
// the halt (wait_for_interrupt).
void Vcpu::send_ipi() {
  ++results_.ipis;
  const sc_time exit = guest_.hypervisor().ipi_exit(params_.index);
  if (exit == SC_ZERO_TIME) return;
  if (auto* t = traces::active()) t->vm_exit(params_.index, "ipi", now().value(), (now() + exit).value());
  qk_.inc(exit);
}

void Vcpu::wait_for_io() {
  if (!io_interrupt_due() && !wait_for_interrupt()) return;  // woken: another vCPU completed one
  take_io_interrupt();
}

// ---------------------------------------------------------------- halts
bool Vcpu::wait_for_interrupt() {
  sync_local();
  const sc_time t0 = kernel_now();
  auto irq_due = [&] { return irq_pending_ && irq_time_ <= kernel_now(); };
  auto woken = [&] { return woken_ && wake_time_ <= kernel_now(); };
  // Reported as it starts, so trace writers need not hold events back.
  const bool idles = !irq_due() && !woken();
  asleep_ = idles;
  // KVM halt polling: the vCPU thread keeps its core while it polls.
  const sc_time poll = idles ? halt_poll_window_ : SC_ZERO_TIME;
  bool scheduled_out = false;
  sc_time slept_from = t0;  // when the vCPU thread scheduled out
  if (idles) {
    if (poll == SC_ZERO_TIME) {
      set_runnable(false);  // HLT gives the core back
      scheduled_out = true;
    }
    if (auto* t = traces::active()) t->vcpu_state(params_.index, t0.value(), traces::VcpuState::Idle);
  }
  while (!irq_due() && !woken()) {
    take_admin_interrupts();
    waits_on_device_ = !irq_pending_ && !woken_;
    // The earlier of the interrupt and the wake-up (a later notify of the
    // same event would not replace an earlier one), and the poll's end.
    bool timed = irq_pending_ || woken_;
    sc_time until = irq_pending_ ? irq_time_ : wake_time_;
    if (irq_pending_ && woken_ && wake_time_ < until) until = wake_time_;
    if (!scheduled_out && (!timed || t0 + poll < until)) {
      until = t0 + poll;
      timed = true;
    }
    if (timed)
      activations::wait(until > kernel_now() ? until - kernel_now() : SC_ZERO_TIME, irq_event_);
    else
      activations::wait(irq_event_);
    if (!scheduled_out && kernel_now() >= t0 + poll && !irq_due() && !woken()) {
      set_runnable(false);  // the poll found nothing: schedule out
      scheduled_out = true;
      slept_from = kernel_now();
    }
  }
  waits_on_device_ = false;
  asleep_ = false;
  sc_time idle = kernel_now() - t0;
  if (idles) {
    const Hypervisor::Params& hv = guest_.hypervisor().params();
    if (scheduled_out) {
      ++results_.halt_sleeps;
      // kvm_vcpu_kick wakes the thread; it runs again after this: fixed, or
      // drawn from the measured wake-ups at how long the thread slept.
      const sc_time wakeup = hv.wakeup == WakeupModel::Fixed
                                 ? hv.halt_wakeup
                                 : wakeup_draw(kernel_now() - slept_from, wakeup_stream_.next());
      idle += wakeup;
      qk_.inc(wakeup);
      set_runnable(true);
    } else {
      ++results_.halt_poll_hits;
    }
    adjust_halt_poll(kernel_now() - t0, hv.halt_poll_max);
    if (auto* t = traces::active())
      t->vcpu_state(params_.index, (kernel_now() + qk_.local_time()).value(), traces::VcpuState::Guest);
  }
  if (idle != SC_ZERO_TIME) {
    results_.idle_time += idle;
    guest_.hypervisor().record_halt(params_.index, idle);
  }
  woken_ = false;
  if (!irq_due()) return false;
  irq_pending_ = false;
  return true;
}

// KVM's window rule (firmware/hv/halt_poll.h) after a halt of `blocked`.
void Vcpu::adjust_halt_poll(const sc_time& blocked, const sc_time& max) {
  if (max == SC_ZERO_TIME) return;
  fw::HaltPollRule rule;
  rule.max_ns = max.value() / 1000;
  halt_poll_window_ = sc_time::from_value(
      fw::next_halt_poll_ns(halt_poll_window_.value() / 1000, blocked.value() / 1000, rule) * 1000);
}

// The job sleeps (fio's usec_sleep): nothing of it is in flight, the vCPU
// halts until the time is up.
void Vcpu::halt_for(const sc_time& d) {
  if (d == SC_ZERO_TIME) return;
  sync_local();
  set_runnable(false);
  if (auto* t = traces::active()) t->vcpu_state(params_.index, kernel_now().value(), traces::VcpuState::Idle);
  activations::wait(d);
  set_runnable(true);
  if (auto* t = traces::active()) t->vcpu_state(params_.index, kernel_now().value(), traces::VcpuState::Guest);
  results_.idle_time += d;
  guest_.hypervisor().record_halt(params_.index, d);
}

// ---------------------------------------------------------------- stall reports
uint16_t Vcpu::driver_sq_tail() const { return guest_.driver().sq_tail(params_.qid); }

std::string Vcpu::describe_queue(const std::string& device_sq, const std::string& device_cq) const {
  const fw::Driver& d = guest_.driver();
  const uint16_t q = params_.qid;
  const uint32_t dstrd = d.dstrd();
  auto rd = [&](uint64_t gpa) {
    uint32_t x = 0;
    if (const uint8_t* p = guest_.memory().ptr(gpa, 4)) std::memcpy(&x, p, 4);
    return x;
  };
  std::ostringstream r;
  r << "queue " << q << " (vcpu" << params_.index << ", " << job_.outstanding()
    << " commands in flight): SQ " << q << " driver tail " << d.sq_tail(q) << ", " << device_sq
    << "; CQ " << q << " (" << d.cq_entries() << " entries) driver head " << d.cq_head(q) << ", "
    << device_cq;
  if (d.dbbuf_active()) {
    r << "; shadow doorbells: SQ tail " << rd(d.shadow_buffer_addr() + fw::dbbuf_sq_offset(q, dstrd))
      << ", CQ head " << rd(d.shadow_buffer_addr() + fw::dbbuf_cq_offset(q, dstrd))
      << "; EventIdx: SQ " << rd(d.eventidx_buffer_addr() + fw::dbbuf_sq_offset(q, dstrd))
      << ", CQ " << rd(d.eventidx_buffer_addr() + fw::dbbuf_cq_offset(q, dstrd));
  } else {
    r << "; doorbell buffer inactive (MMIO doorbells)";
  }
  return r.str();
}

}  // namespace nvmesim::models
