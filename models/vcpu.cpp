#include "models/vcpu.h"

#include <cstring>

#include "models/address_map.h"
#include "models/guest.h"
#include "models/host_cpus.h"
#include "traces/tracer.h"

using namespace sc_core;

namespace nvmesim::models {

Vcpu::Vcpu(sc_module_name name, const Params& params, Guest& guest)
    : sc_module(name), mmio_socket("mmio_socket"), params_(params), guest_(guest),
      workload_(params.job) {
  const uint32_t tags = guest_.driver().config().max_outstanding_per_queue + 1;
  start_time_.resize(tags);
  is_write_.resize(tags);
  reaped_.resize(tags);
  block_.resize(tags);
  expect_pattern_.resize(tags);
  if (params_.verify) written_.assign(params_.job.size / params_.job.bs, 0);
  store_buffer_.reserve(64);
  if (params_.cpus) cpu_id_ = params_.cpus->add_thread(this->name());
  SC_HAS_PROCESS(Vcpu);
  SC_THREAD(run);
  thread_ = sc_get_current_process_handle();
  SC_METHOD(commit_stores);
  sensitive << store_event_;
  dont_initialize();
}

sc_time Vcpu::now() const { return qk_.current_time(); }

// The quantum keeper's sync() waits even for a zero offset (a delta cycle);
// skip that: nothing to let pass.
void Vcpu::sync_local() {
  if (qk_.sync()) guest_.set_current(this);
}

void Vcpu::set_runnable(bool runnable) {
  if (params_.cpus) params_.cpus->set_runnable(cpu_id_, runnable);
}

void Vcpu::guest_work(const sc_time& work) {
  const sc_time t = params_.cpus ? params_.cpus->stretch(work) : work;
  results_.guest_time += t;
  if (in_interrupt_ || !job_running_ || params_.poll_completions) {
    qk_.inc(t);
    if (qk_.need_sync()) sync_local();
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
    // Longer: let time pass, waking for an interrupt raised meanwhile.
    sync_local();
    const sc_time start = sc_time_stamp();
    wait(remaining, irq_event_);
    guest_.set_current(this);
    remaining -= sc_time_stamp() - start;
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
  guest_.set_current(this);
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

// ---------------------------------------------------------------- memory ordering
// A shadow store sits in the store buffer for store_visibility; loads of
// other addresses may pass it (x86 store->load reordering) unless a full
// barrier drains it first.
void Vcpu::store_shadow(uint64_t gpa, uint32_t value) {
  if (params_.store_visibility == SC_ZERO_TIME) {
    sync_local();  // visible at once: at the vCPU's own time
    std::memcpy(guest_.guest_memory(gpa, 4), &value, 4);
    guest_.trace_shadow_store(gpa, value);
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
  store_event_.notify(store_buffer_[store_head_].visible_at - sc_time_stamp());
}

void Vcpu::commit_stores() {
  const sc_time t = sc_time_stamp();
  while (store_head_ < store_buffer_.size() && store_buffer_[store_head_].visible_at <= t) {
    const PendingStore& s = store_buffer_[store_head_++];
    std::memcpy(guest_.guest_memory(s.gpa, 4), &s.value, 4);
    guest_.trace_shadow_store(s.gpa, s.value);
  }
  if (store_head_ < store_buffer_.size())
    store_event_.notify(store_buffer_[store_head_].visible_at - t);
}

void Vcpu::full_barrier() {
  if (store_head_ < store_buffer_.size()) {
    // mfence stalls until the store buffer has drained: one wait to then.
    const sc_time last = store_buffer_.back().visible_at;
    const sc_time t = now();
    if (last > t) {
      results_.guest_time += last - t;  // the vCPU stalls in mfence
      qk_.set(last - sc_time_stamp());
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
  std::memcpy(&v, guest_.guest_memory(gpa, 4), 4);
  return v;
}

uint32_t Vcpu::load_eventidx(uint64_t gpa) {
  sync_local();
  uint32_t v;
  std::memcpy(&v, guest_.guest_memory(gpa, 4), 4);
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
  const sc_time at = sc_time_stamp() + delay;
  if (vector != params_.io_vector) {  // admin only: wakes the vCPU to take it
    irq_event_.notify(delay);
    return;
  }
  if (!irq_pending_ || at < irq_time_) irq_time_ = at;
  irq_pending_ = true;
  irq_event_.notify(delay);
}

void Vcpu::wait_for_interrupt() {
  sync_local();
  const sc_time t0 = sc_time_stamp();
  // Reported as it starts, so trace writers need not hold events back.
  const bool idles = !irq_pending_ || irq_time_ > t0;
  if (idles) {
    set_runnable(false);  // HLT gives the core back
    if (auto* t = traces::active()) t->vcpu_state(params_.index, t0.value(), traces::VcpuState::Idle);
  }
  while (!irq_pending_ || irq_time_ > sc_time_stamp()) {
    take_admin_interrupts();
    waits_on_device_ = !irq_pending_;
    if (irq_pending_)
      wait(irq_time_ - sc_time_stamp(), irq_event_);
    else
      wait(irq_event_);
  }
  waits_on_device_ = false;
  guest_.set_current(this);
  if (idles) set_runnable(true);
  const sc_time idle = sc_time_stamp() - t0;
  if (idles)
    if (auto* t = traces::active()) t->vcpu_state(params_.index, sc_time_stamp().value(), traces::VcpuState::Guest);
  if (idle != SC_ZERO_TIME) {
    results_.idle_time += idle;
    guest_.hypervisor().record_halt(params_.index, idle);
  }
  irq_pending_ = false;
}

// ---------------------------------------------------------------- verify
// The pattern depends on the block only, so every job writes the same bytes
// to a block and overlapping writes cannot make a correct read fail.
static uint64_t pattern_word(uint64_t block, uint64_t i) {
  uint64_t z = block * 0x9E3779B97F4A7C15ull + i + 1;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  return z ^ (z >> 27);
}

void Vcpu::fill_pattern(uint8_t* p, uint64_t block) const {
  for (uint64_t i = 0; i < params_.job.bs / 8; ++i) {
    const uint64_t w = pattern_word(block, i);
    std::memcpy(p + 8 * i, &w, 8);
  }
}

bool Vcpu::check_pattern(const uint8_t* p, uint64_t block) const {
  for (uint64_t i = 0; i < params_.job.bs / 8; ++i) {
    uint64_t w;
    std::memcpy(&w, p + 8 * i, 8);
    if (w != pattern_word(block, i)) return false;
  }
  return true;
}

// ---------------------------------------------------------------- the job
void Vcpu::run() {
  qk_.refresh_quantum();
  guest_.set_current(this);
  if (params_.index == 0) {
    guest_.bring_up();
  } else if (!guest_.ready()) {
    wait(guest_.ready_event());
  }
  guest_.set_current(this);
  set_runnable(true);
  if (guest_.bringup().ok) run_job();
  set_runnable(false);
  results_.finished = true;
  guest_.vcpu_finished();
}

bool Vcpu::can_issue() const {
  if (inflight_ >= params_.iodepth) return false;  // fio's queue is full until it reaps
  if (params_.number_ios && results_.issued >= params_.number_ios) return false;
  if (params_.runtime != SC_ZERO_TIME && now() >= results_.start + params_.runtime) return false;
  return true;
}

void Vcpu::submit_batch() {
  unsigned n = 0;
  while (n < params_.batch_submit && can_issue()) {
    const NextIo io = workload_.next();
    const sc_time started = now();
    const uint32_t lba = guest_.bringup().lba_bytes;
    fw::IoSpec spec;
    spec.opcode = io.write ? nvme::io::WRITE : nvme::io::READ;
    spec.slba = io.offset / lba;
    spec.nlb = io.bytes / lba;
    const int32_t tag = guest_.driver().submit(params_.qid, spec);
    if (tag < 0) break;  // SQ full: publish what we have
    start_time_[tag] = started;
    is_write_[tag] = io.write;
    if (auto* t = traces::active()) t->io_start(params_.qid, uint32_t(tag), io.write, started.value());
    if (params_.verify) {
      const uint64_t block = io.offset / params_.job.bs;
      block_[tag] = block;
      const uint64_t gpa = guest_.driver().data_buffer(params_.qid, uint32_t(tag));
      uint8_t* buf = guest_.guest_memory(gpa, io.bytes);
      if (io.write) {
        fill_pattern(buf, block);
      } else {
        expect_pattern_[tag] = written_[block];
        std::memset(buf, 0, io.bytes);  // so stale data cannot pass the check
      }
    }
    ++outstanding_;
    ++inflight_;
    ++results_.issued;
    ++n;
    guest_work(params_.submit_cost);
  }
  if (n) trace_update(true, guest_.driver().ring_sq(params_.qid));
}

void Vcpu::handle_completions(bool from_interrupt) {
  if (from_interrupt) {
    const sc_time exit = guest_.hypervisor().interrupt_exit(params_.index);
    if (auto* t = traces::active()) {
      t->interrupt(params_.index, now().value());
      if (exit != SC_ZERO_TIME) t->vm_exit(params_.index, "interrupt", now().value(), (now() + exit).value());
    }
    qk_.inc(exit);
    ++results_.interrupts;
    guest_work(params_.irq_entry);
  }
  // Consume every completion whose phase matches, finishing each I/O, then
  // publish the CQ head once (nvme_irq -> nvme_poll_cq -> nvme_ring_cq_doorbell).
  const unsigned n =
      guest_.driver().consume_completions(params_.qid, reaped_.data(), unsigned(reaped_.size()));
  for (unsigned i = 0; i < n; ++i) {
    guest_work(params_.complete_cost);
    const fw::Completion& c = reaped_[i];
    const sc_time end = now();
    const uint64_t lat_ns = (end - start_time_[c.tag]).value() / 1000;
    latency_.add(lat_ns);
    latency_dir_[is_write_[c.tag] ? 1 : 0].add(lat_ns);
    results_.lat_sum_sq[is_write_[c.tag] ? 1 : 0] += (long double)lat_ns * lat_ns;
    if (auto* t = traces::active())
      t->io(params_.qid, c.tag, is_write_[c.tag], start_time_[c.tag].value(), end.value());
    --outstanding_;
    ++ready_;  // into the job's aio ring, for fio's next reap
    ++results_.ios;
    if (c.status && results_.errors++ == 0) results_.first_error_status = c.status;
    const uint64_t bytes = params_.job.bs;
    if (params_.verify && !c.status) {
      if (is_write_[c.tag]) {
        written_[block_[c.tag]] = 1;
      } else if (expect_pattern_[c.tag]) {
        ++results_.verified_reads;
        const uint64_t gpa = guest_.driver().data_buffer(params_.qid, c.tag);
        if (!check_pattern(guest_.guest_memory(gpa, params_.job.bs), block_[c.tag]))
          ++results_.verify_errors;
      }
    }
    if (is_write_[c.tag]) {
      ++results_.write_ios;
      results_.write_bytes += bytes;
    } else {
      ++results_.read_ios;
      results_.read_bytes += bytes;
    }
    results_.end = end;
  }
  trace_update(false, guest_.driver().update_cq_head(params_.qid));
  if (from_interrupt) {
    const sc_time eoi = guest_.hypervisor().eoi_exit(params_.index);
    if (eoi != SC_ZERO_TIME)
      if (auto* t = traces::active()) t->vm_exit(params_.index, "eoi", now().value(), (now() + eoi).value());
    qk_.inc(eoi);
  }
}

bool Vcpu::io_interrupt_due() const { return irq_pending_ && irq_time_ <= now(); }

void Vcpu::take_io_interrupt() {
  irq_pending_ = false;
  in_interrupt_ = true;
  handle_completions(true);
  in_interrupt_ = false;
}

// fio's io_getevents(min, max) (fio io_u.c io_u_queued_complete): waits
// until iodepth_batch_complete_min I/Os are in the aio ring (the vCPU halts
// if none is coming sooner), then takes at most iodepth_batch_complete_max.
void Vcpu::reap() {
  const uint32_t want = std::min(params_.batch_complete_min, inflight_);
  while (ready_ < want) {
    if (params_.poll_completions) {
      guest_work(params_.poll_interval);
      sync_local();
      waits_on_device_ = !guest_.driver().completion_ready(params_.qid);
      if (!waits_on_device_) handle_completions(false);
      continue;
    }
    if (!io_interrupt_due()) wait_for_interrupt();
    take_io_interrupt();
  }
  const uint32_t n = std::min(ready_, params_.batch_complete_max);
  ready_ -= n;
  inflight_ -= n;
}

// fio's do_io loop (backend.c): queue I/O while below iodepth; with the
// queue full (or nothing left to issue), reap (wait_for_completions).
void Vcpu::run_job() {
  sync_local();
  results_.start = sc_time_stamp();
  results_.end = results_.start;
  job_running_ = true;
  for (;;) {
    while (can_issue()) submit_batch();
    if (inflight_ == 0) break;
    reap();
  }
  job_running_ = false;
  sync_local();
}

}  // namespace nvmesim::models
