#include "nvmesim/models/guest/vcpu.h"

#include "nvmesim/firmware/hv/halt_poll.h"

#include <algorithm>
#include <cstring>
#include <sstream>
#include <stdexcept>

#include "nvmesim/models/sim/activations.h"
#include "nvmesim/models/mem/address_map.h"
#include "nvmesim/models/guest/guest.h"
#include "nvmesim/models/host/host_cpus.h"
#include "nvmesim/models/sim/kernel_time.h"
#include "nvmesim/models/sim/lookahead.h"
#include "nvmesim/models/pcie/pcie_endpoint.h"
#include "nvmesim/traces/tracer.h"

using namespace sc_core;

namespace nvmesim::models {

Vcpu::Vcpu(sc_module_name name, const Params& params, Guest& guest)
    : sc_module(name), mmio_socket("mmio_socket"), params_(params), guest_(guest),
      workload_(params.job) {
  uint32_t tags = guest_.driver().config().max_outstanding_per_queue + 1;
  if (const auto* vc = guest_.virtio_config()) tags = std::max<uint32_t>(tags, vc->queue_size);
  start_time_.resize(tags);
  issue_time_.resize(tags);
  aio_ring_.resize(std::max<uint32_t>(tags, params.iodepth) + 1);  // at most iodepth wait unreaped
  batch_tags_.reserve(tags);
  is_write_.resize(tags);
  offset_.resize(tags);
  bytes_.resize(tags);
  reaped_.resize(tags);
  used_.reserve(tags);
  block_.resize(tags);
  expect_pattern_.resize(tags);
  if (params_.verify) written_.assign(params_.job.size / params_.job.bs, 0);
  {  // fio's rate / rate_iops (init.c __setup_rate): bytes per second, rate_iops times min_bs
    uint64_t rate[2], iops[2];
    fio_opt::parse_rate(params_.rate, true, rate);
    fio_opt::parse_rate(params_.rate_iops, false, iops);
    for (unsigned d = 0; d < 2; ++d) rate_bps_[d] = rate[d] ? rate[d] : iops[d] * params_.job.min_bs(d);
  }
  store_buffer_.reserve(64);
  if (params_.cpus) cpu_id_ = params_.cpus->add_thread(this->name());
  SC_HAS_PROCESS(Vcpu);
  SC_THREAD(run);
  thread_ = sc_get_current_process_handle();
  SC_METHOD(store_buffer_drain);
  sensitive << store_event_;
  dont_initialize();
}

sc_time Vcpu::now() const { return qk_.current_time(); }

// The quantum keeper's sync() waits even for a zero offset (a delta cycle);
// skip that: nothing to let pass.
void Vcpu::sync_local() {
  arm_store_drain();
  qk_.sync();
}

// A sync can be skipped when nothing else can run before the vCPU's
// present (models/sim/lookahead.h) and no store of its own is still buffered
// (its drain must reach the kernel, or a full barrier commit it).
bool Vcpu::must_sync(const sc_time& offset) const {
  return store_head_ < store_buffer_.size() || activity_due_within(offset);
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
    if (qk_.local_time() + remaining < qk_.quantum()) {  // within the quantum
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

void Vcpu::sync_shared_memory() { sync_local(); }

// ---------------------------------------------------------------- traces
void Vcpu::trace_update(bool sq, const fw::DoorbellUpdate& u) {
  auto* t = traces::active();
  if (!t || !u.updated) return;
  const uint64_t at = now().value();
  t->doorbell_update(params_.qid, sq, at, u.new_value, u.mmio, u.via_shadow, u.eventidx);
  t->queue_value(params_.qid, sq ? traces::QueueSignal::DriverSqTail : traces::QueueSignal::DriverCqHead,
                 at, u.new_value);
  t->queue_value(params_.qid, traces::QueueSignal::Outstanding, at, outstanding_);
}

// ---------------------------------------------------------------- MMIO
void Vcpu::mmio(tlm::tlm_command cmd, uint32_t offset, void* data, unsigned len) {
  tlm::tlm_generic_payload& p = mmio_payload_;
  p.set_command(cmd);
  p.set_address(kBar0Base + offset);
  p.set_data_ptr(static_cast<unsigned char*>(data));
  p.set_data_length(len);
  p.set_streaming_width(len);
  p.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  // An MMIO access is an exit: everything before it happened first.
  sync_local();
  sc_time delay = SC_ZERO_TIME;
  mmio_socket->b_transport(p, delay);  // may wait (device work inside the exit)
  qk_.set(delay);
  sync_local();
}

uint32_t Vcpu::mmio_read32(uint32_t offset) {
  uint32_t v = 0;
  mmio(tlm::TLM_READ_COMMAND, offset, &v, 4);
  return v;
}
uint64_t Vcpu::mmio_read64(uint32_t offset) {
  uint64_t v = 0;
  mmio(tlm::TLM_READ_COMMAND, offset, &v, 8);
  return v;
}
void Vcpu::mmio_write32(uint32_t offset, uint32_t value) {
  mmio(tlm::TLM_WRITE_COMMAND, offset, &value, 4);
}
void Vcpu::mmio_write64(uint32_t offset, uint64_t value) {
  mmio(tlm::TLM_WRITE_COMMAND, offset, &value, 8);
}

uint32_t Vcpu::mmio_read(uint32_t offset, unsigned size) {
  uint32_t v = 0;
  mmio(tlm::TLM_READ_COMMAND, offset, &v, size);
  return v;
}
void Vcpu::mmio_write(uint32_t offset, unsigned size, uint32_t value) {
  mmio(tlm::TLM_WRITE_COMMAND, offset, &value, size);
}

void Vcpu::program_msix_vector(uint16_t vector, uint64_t address, uint32_t data) {
  const uint64_t entry = guest_.msix_table_address() + uint64_t(vector) * PcieEndpoint::kMsixEntryBytes;
  const uint32_t fields[4] = {uint32_t(address), uint32_t(address >> 32), data, 0 /* unmasked */};
  for (unsigned i = 0; i < 4; ++i) {
    uint32_t v = fields[i];
    tlm::tlm_generic_payload p;
    p.set_command(tlm::TLM_WRITE_COMMAND);
    p.set_address(entry + 4 * i);
    p.set_data_ptr(reinterpret_cast<unsigned char*>(&v));
    p.set_data_length(4);
    p.set_streaming_width(4);
    if (mmio_socket->transport_dbg(p) != 4)
      throw std::logic_error(std::string(name()) + ": MSI-X table entry " + std::to_string(vector) +
                             " not writable");
  }
}

// ---------------------------------------------------------------- memory ordering
uint8_t* Vcpu::guest_memory(uint64_t gpa, uint32_t len) {
  uint8_t* p = guest_.memory().ptr(gpa, len);
  if (!p) throw std::logic_error("driver touched memory outside guest RAM");
  return p;
}

// x86: stores are not reordered with stores, and the SQ entry was written
// before: wmb() costs nothing and orders nothing the model could reorder.
void Vcpu::write_barrier() {}

// A shadow store sits in the store buffer for store_visibility; loads of
// other addresses may pass it (x86 store->load reordering) unless a full
// barrier drains it first.
void Vcpu::store_shadow(uint64_t gpa, uint32_t value) {
  if (params_.store_visibility == SC_ZERO_TIME) {
    sync_local();  // visible at once: at the vCPU's own time
    std::memcpy(guest_memory(gpa, 4), &value, 4);
    guest_.trace_shadow_store(gpa, value, kernel_now());
    return;
  }
  // The store enters the store buffer at the vCPU's local time and becomes
  // visible store_visibility later; no need to synchronise to buffer it.
  const sc_time at = now() + params_.store_visibility;
  if (store_head_ == store_buffer_.size()) {
    store_buffer_.clear();
    store_head_ = 0;
  }
  store_buffer_.push_back(PendingStore{gpa, value, at});
  store_drain_owed_ = true;
}

void Vcpu::arm_store_drain() {
  if (!store_drain_owed_) return;
  store_drain_owed_ = false;
  if (store_head_ < store_buffer_.size())
    activations::notify(store_event_, store_buffer_[store_head_].visible_at - kernel_now());
}

void Vcpu::store_buffer_drain() {
  activations::begin(activations::VcpuStoreCommit);
  commit_stores();
}

void Vcpu::commit_stores() {
  const sc_time t = kernel_now();
  while (store_head_ < store_buffer_.size() && store_buffer_[store_head_].visible_at <= t) {
    const PendingStore& s = store_buffer_[store_head_++];
    std::memcpy(guest_memory(s.gpa, 4), &s.value, 4);
    guest_.trace_shadow_store(s.gpa, s.value, s.visible_at);
  }
  if (store_head_ < store_buffer_.size())
    activations::notify(store_event_, store_buffer_[store_head_].visible_at - t);
}

void Vcpu::full_barrier() {
  if (store_head_ < store_buffer_.size()) {
    // mfence stalls until the store buffer has drained: one wait to then.
    const sc_time last = store_buffer_.back().visible_at;
    const sc_time t = now();
    const sc_time until = last > t ? last - kernel_now() : qk_.local_time();
    if (store_drain_owed_ && !activity_due_within(until)) {
      // Nobody can look before the stores are visible: they land now (each
      // at its time), no drain event, no wait.
      if (last > t) results_.guest_time += last - t;  // the vCPU stalls in mfence
      qk_.set(until);
      store_drain_owed_ = false;
      while (store_head_ < store_buffer_.size()) {
        const PendingStore& s = store_buffer_[store_head_++];
        std::memcpy(guest_memory(s.gpa, 4), &s.value, 4);
        guest_.trace_shadow_store(s.gpa, s.value, s.visible_at);
      }
      return;
    }
    if (last > t) {
      results_.guest_time += last - t;  // the vCPU stalls in mfence
      qk_.set(last - kernel_now());
    }
    sync_local();
    commit_stores();
    return;
  }
  sync_local();
}

// Only this vCPU writes its queue's shadow entries (the device writes them
// only at configuration), so reading them needs no synchronisation.
uint32_t Vcpu::load_shadow(uint64_t gpa) {
  // Store-to-load forwarding: our own buffered store is seen first.
  for (size_t i = store_buffer_.size(); i > store_head_; --i)
    if (store_buffer_[i - 1].gpa == gpa) return store_buffer_[i - 1].value;
  uint32_t v;
  std::memcpy(&v, guest_memory(gpa, 4), 4);
  return v;
}

uint32_t Vcpu::load_eventidx(uint64_t gpa) {
  // The device's value as of the vCPU's present.
  if (must_sync(qk_.local_time())) sync_local();
  uint32_t v;
  std::memcpy(&v, guest_memory(gpa, 4), 4);
  return v;
}

void Vcpu::wait_ns(uint64_t ns) {
  qk_.inc(sc_time::from_value(ns * 1000));
  sync_local();
  take_admin_interrupts();
}

void Vcpu::take_admin_interrupts() {
  while (admin_irqs_pending_) {
    --admin_irqs_pending_;
    qk_.inc(guest_.hypervisor().interrupt_exit(params_.index));
    qk_.inc(guest_.hypervisor().eoi_exit(params_.index));
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

bool Vcpu::wait_for_interrupt() {
  sync_local();
  const sc_time t0 = kernel_now();
  auto irq_due = [&] { return irq_pending_ && irq_time_ <= kernel_now(); };
  auto woken = [&] { return woken_ && wake_time_ <= kernel_now(); };
  // Reported as it starts, so trace writers need not hold events back.
  const bool idles = !irq_due() && !woken();
  // KVM halt polling: the vCPU thread keeps its core while it polls.
  const sc_time poll = idles ? halt_poll_window_ : SC_ZERO_TIME;
  bool scheduled_out = false;
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
    }
  }
  waits_on_device_ = false;
  sc_time idle = kernel_now() - t0;
  if (idles) {
    const Hypervisor::Params& hv = guest_.hypervisor().params();
    if (scheduled_out) {
      ++results_.halt_sleeps;
      idle += hv.halt_wakeup;  // kvm_vcpu_kick wakes the thread; it runs again after this
      qk_.inc(hv.halt_wakeup);
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
  r << "queue " << q << " (vcpu" << params_.index << ", " << outstanding_
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
