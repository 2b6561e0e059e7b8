// The fio-like job of a vCPU (Vcpu::run and what it calls): fio's do_io
// loop, submission batches, the driver's completion handling, reaping, and
// verify=pattern.
#include <algorithm>
#include <cstring>

#include "nvmesim/models/sim/run_control.h"
#include "nvmesim/models/sim/activations.h"
#include "nvmesim/models/guest/guest.h"
#include "nvmesim/models/sim/kernel_time.h"
#include "nvmesim/models/guest/vcpu.h"
#include "nvmesim/traces/tracer.h"

using namespace sc_core;

namespace nvmesim::models {

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
  if (guest_.bringup().ok) run_job();
  set_runnable(false);
  results_.done = now();
  results_.finished = true;
  activations::notify(finished_event_, SC_ZERO_TIME);
  guest_.vcpu_finished();
}

bool Vcpu::can_issue(uint32_t pending) const {
  if (inflight_ + pending >= params_.iodepth) return false;  // fio's queue is full until it reaps
  if (params_.number_ios && results_.issued + pending >= params_.number_ios) return false;
  if (params_.runtime != SC_ZERO_TIME && now() >= results_.start + params_.runtime) return false;
  if (run_control::stop_requested()) return false;  // a signal: drain, as fio (models/sim/run_control.h)
  return true;
}

void Vcpu::submit_batch() {
  fw::VirtioBlkDriver* vb = guest_.virtio();
  if (vb && virtqueue_shared()) {
    submit_batch_shared(*vb);
    return;
  }
  unsigned n = 0;
  batch_tags_.clear();
  while (n < params_.batch_submit && can_issue() && (n == 0 || !rate_wait(false))) {
    const NextIo io = workload_.next();
    const sc_time started = now();
    if (!issue(io, started)) break;  // SQ full: publish what we have
    ++n;
    guest_work(params_.submit_cost);
  }
  // One SQ doorbell update per batch; virtio-blk kicks once per batch
  // (virtio_queue_rq: kick_prepare on the batch's last request).
  if (n) {
    trace_update(true, vb ? vb->kick(virtqueue(), this) : guest_.driver().ring_sq(params_.qid));
    submitted(n);
  }
}

// io_submit returned (the doorbell's exit, if any, included): fio's
// issue_time for the batch (engines/libaio.c fio_libaio_queued) and its
// depth marks (ioengines.c td_io_commit, io_u_mark_submit).
void Vcpu::submitted(unsigned n) {
  const sc_time t = now();
  for (const uint16_t tag : batch_tags_) issue_time_[tag] = t;
  batch_tags_.clear();
  results_.depths.mark_submit(n, inflight_);
}

// A virtqueue shared with other jobs' vCPUs: virtio_queue_rq (or
// virtio_queue_rqs for a batch) adds the requests and decides the kick under
// one hold of the queue's lock, after the block layer's work on each, so no
// other vCPU's request slips between this batch's adds and its kick decision.
void Vcpu::submit_batch_shared(fw::VirtioBlkDriver& vb) {
  shared_batch_.clear();
  while (shared_batch_.size() < params_.batch_submit && can_issue(uint32_t(shared_batch_.size()))) {
    const NextIo io = workload_.next();
    shared_batch_.push_back({io, now()});
    guest_work(params_.submit_cost);
  }
  // Before the lock: nothing may run between its adds and its kick decision.
  if (guest_.watching_avail()) sync_local();
  unsigned n = 0;
  batch_tags_.clear();
  for (const PendingIo& p : shared_batch_) {
    if (!issue(p.io, p.started)) break;  // ring full: publish what we have
    ++n;
  }
  if (n) {
    trace_update(true, vb.kick(virtqueue(), this));
    submitted(n);
  }
}

bool Vcpu::virtqueue_shared() const {
  const fw::VirtioBlkDriver* vb = guest_.virtio();
  return vb && vb->last_bring_up().queues && vb->last_bring_up().queues < guest_.vcpu_count();
}

// Builds one I/O on the job's queue (the NVMe SQ entry or the virtio chain).
bool Vcpu::issue(const NextIo& io, const sc_time& started) {
  const uint32_t lba = guest_.bringup().lba_bytes;
  fw::IoSpec spec;
  spec.opcode = io.write ? nvme::io::WRITE : nvme::io::READ;
  spec.slba = io.offset / lba;
  spec.nlb = io.bytes / lba;
  fw::VirtioBlkDriver* vb = guest_.virtio();
  // A device that busy-polls the avail ring (virtio.busy_poll) reads it at
  // any time: the avail->idx store must land at the vCPU's own time, not
  // ahead of the device in its quantum. (A shared queue synced before its lock.)
  if (vb && guest_.watching_avail() && !virtqueue_shared()) sync_local();
  const int32_t tag = vb ? vb->submit(virtqueue(), spec, this) : guest_.driver().submit(params_.qid, spec);
  if (tag < 0) return false;
  if (vb) guest_.avail_published(virtqueue(), now() - kernel_now());  // virtqueue_add stored avail->idx
  if (const unsigned d = io.write ? 1 : 0; rate_bps_[d]) {  // usec_for_io
    const uint64_t bytes = rate_issue_bytes_[d] += io.bytes, bps = rate_bps_[d];
    rate_next_us_[d] = bytes % bps * 1000000 / bps + bytes / bps * 1000000;
  }
  start_time_[tag] = started;
  issue_time_[tag] = started;  // until its io_submit returns (submitted)
  batch_tags_.push_back(uint16_t(tag));
  is_write_[tag] = io.write;
  offset_[tag] = io.offset;
  bytes_[tag] = uint32_t(io.bytes);
  if (auto* t = traces::active()) t->io_start(params_.qid, uint32_t(tag), io.write, started.value());
  if (params_.verify) {
    const uint64_t block = io.offset / params_.job.bs;
    block_[tag] = block;
    const uint64_t gpa = vb ? vb->data_buffer(virtqueue(), uint32_t(tag))
                            : guest_.driver().data_buffer(params_.qid, uint32_t(tag));
    uint8_t* buf = guest_memory(gpa, io.bytes);
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
  return true;
}

void Vcpu::handle_completions(bool from_interrupt) {
  if (from_interrupt) {
    const sc_time exit = guest_.hypervisor().interrupt_exit(params_.index);
    if (auto* t = traces::active()) {
      t->interrupt(params_.index, now().value());
      if (exit != SC_ZERO_TIME) t->vm_exit(params_.index, "interrupt", now().value(), (now() + exit).value());
    }
    qk_.inc(exit);
    take_interrupt_lock();  // hv.bql_interrupts: delivery under the global lock
    ++results_.interrupts;
    guest_work(params_.irq_entry);
  }
  if (fw::VirtioBlkDriver* vb = guest_.virtio()) {
    // vring_interrupt -> virtblk_done: every used entry, callbacks suppressed
    // through used_event meanwhile; no completion doorbell. On a shared
    // queue, the other jobs' I/Os complete here and wake their jobs.
    const uint16_t q = virtqueue();
    vb->interrupt(q, used_, this);
    for (const fw::VirtioBlkDriver::UsedRequest& c : used_) {
      Vcpu* owner = static_cast<Vcpu*>(c.submitter);
      if (!owner || owner == this) {
        finish_io(c);
      } else {
        guest_work(params_.complete_cost);
        owner->complete_remote(c, now());
      }
    }
  } else {
    // Consume every completion whose phase matches, finishing each I/O, then
    // publish the CQ head once (nvme_irq -> nvme_poll_cq -> nvme_ring_cq_doorbell).
    const unsigned n =
        guest_.driver().consume_completions(params_.qid, reaped_.data(), unsigned(reaped_.size()));
    for (unsigned i = 0; i < n; ++i) finish_io(reaped_[i]);
    trace_update(false, guest_.driver().update_cq_head(params_.qid));
  }
  if (from_interrupt) {
    const sc_time eoi = guest_.hypervisor().eoi_exit(params_.index);
    if (eoi != SC_ZERO_TIME)
      if (auto* t = traces::active()) t->vm_exit(params_.index, "eoi", now().value(), (now() + eoi).value());
    qk_.inc(eoi);
    take_interrupt_lock();  // ...and the xAPIC EOI write
  }
}

void Vcpu::take_interrupt_lock() {
  Hypervisor& hv = guest_.hypervisor();
  if (!hv.interrupts_take_lock()) return;
  sync_local();
  qk_.inc(hv.interrupt_lock(params_.index));
}

uint16_t Vcpu::virtqueue() const {
  const fw::VirtioBlkDriver* vb = guest_.virtio();
  const uint16_t queues = vb && vb->last_bring_up().queues ? vb->last_bring_up().queues : 1;
  return fw::VirtioBlkDriver::queue_of_cpu(params_.qid - 1u, queues);
}

void Vcpu::finish_io(const fw::Completion& c) {
  guest_work(params_.complete_cost);
  record_completion(c, now());
}

void Vcpu::complete_remote(const fw::Completion& c, const sc_time& at) {
  record_completion(c, at);
  if (!woken_ || at < wake_time_) wake_time_ = at;
  woken_ = true;
  activations::notify(irq_event_, at > kernel_now() ? at - kernel_now() : SC_ZERO_TIME);
}

void Vcpu::record_completion(const fw::Completion& c, const sc_time& end) {
  const uint64_t driver_ns = (end - start_time_[c.tag]).value() / 1000;
  results_.driver_lat[is_write_[c.tag] ? 1 : 0].add(driver_ns);
  if (auto* t = traces::active())
    t->io(params_.qid, c.tag, is_write_[c.tag], start_time_[c.tag].value(), end.value());
  --outstanding_;
  // Into the job's aio ring, for fio's next reap.
  AioEvent& e = aio_ring_[(aio_head_ + aio_count_++) % aio_ring_.size()];
  e = AioEvent{start_time_[c.tag], issue_time_[c.tag], offset_[c.tag], bytes_[c.tag], is_write_[c.tag] != 0};
  ++ready_;
  ++results_.ios;
  if (c.status && results_.errors++ == 0) results_.first_error_status = c.status;
  const uint64_t bytes = bytes_[c.tag];
  if (params_.verify && !c.status) {
    if (is_write_[c.tag]) {
      written_[block_[c.tag]] = 1;
    } else if (expect_pattern_[c.tag]) {
      ++results_.verified_reads;
      const uint64_t gpa = guest_.virtio() ? guest_.virtio()->data_buffer(virtqueue(), c.tag)
                                           : guest_.driver().data_buffer(params_.qid, c.tag);
      if (!check_pattern(guest_memory(gpa, params_.job.bs), block_[c.tag]))
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
    if (!io_interrupt_due() && !wait_for_interrupt()) continue;  // woken: another vCPU completed ours
    take_io_interrupt();
  }
  const uint32_t n = std::min(ready_, params_.batch_complete_max);
  ready_ -= n;
  inflight_ -= n;
  reap_events(n);
}

// io_getevents returned n events: fio stamps them once (io_u.c
// ios_completed, icd->time) and computes clat from issue_time, lat from
// start_time (io_u.c account_io_completion).
void Vcpu::reap_events(uint32_t n) {
  if (!n) return;
  const sc_time t = now();
  results_.depths.mark_complete(n);
  for (uint32_t i = 0; i < n; ++i) {
    const AioEvent& e = aio_ring_[aio_head_];
    aio_head_ = (aio_head_ + 1) % aio_ring_.size();
    --aio_count_;
    const uint64_t slat = (e.issued - e.started).value() / 1000;
    const uint64_t clat = (t - e.issued).value() / 1000;
    const uint64_t lat = (t - e.started).value() / 1000;
    const unsigned d = e.write ? 1 : 0;
    results_.slat[d].add(slat);
    results_.clat[d].add(clat);
    results_.lat[d].add(lat);
    if (io_sink_) io_sink_({(t - results_.start).value(), slat, clat, lat, e.write, e.bytes, e.offset});
  }
}

void Vcpu::quiesce() {
  while (inflight_) reap();
}

// The job sleeps (fio's usec_sleep): nothing of it is in flight, the vCPU
// halts until the time is up.
void Vcpu::sleep_for(const sc_time& d) {
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

// fio's rate_ddir (io_u.c): the next I/O's direction is due when its
// rate_next_io_time has passed; else, in a mixed job, the other direction
// if it is due; else the job quiesces and sleeps until the earlier of them
// (the sleep computed before the quiesce, as fio does), at most to the
// runtime's end.
bool Vcpu::rate_wait(bool sleep) {
  if (!rate_bps_[0] && !rate_bps_[1]) return false;
  const uint64_t now_us = (now() - results_.start).value() / 1000000;  // utime_since_now(&td->epoch)
  unsigned d = workload_.next_is_write() ? 1 : 0;
  if (rate_next_us_[d] <= now_us) return false;
  const unsigned od = d ^ 1;
  const uint32_t mix_other = od ? 100 - params_.job.rwmixread : params_.job.rwmixread;
  uint64_t usec;
  if (params_.job.rw == RwMode::RandRw && mix_other) {
    if (rate_next_us_[od] <= now_us) {
      if (sleep) workload_.force_write(od == 1);
      return false;
    }
    if (rate_next_us_[d] <= rate_next_us_[od]) {
      usec = rate_next_us_[d] - now_us;
    } else {
      usec = rate_next_us_[od] - now_us;
      d = od;
    }
  } else {
    usec = rate_next_us_[d] - now_us;
  }
  if (!sleep) return true;
  workload_.force_write(d == 1);
  quiesce();
  sc_time nap = sc_time(double(usec), SC_US);
  if (params_.runtime != SC_ZERO_TIME) {
    const sc_time end = results_.start + params_.runtime;
    nap = now() >= end ? SC_ZERO_TIME : std::min(nap, end - now());
  }
  sleep_for(nap);
  return false;
}

// fio's handle_thinktime (backend.c), thinktime_blocks_type=issue: after
// every thinktime_blocks I/Os issued, complete those in flight, spin
// thinktime_spin (guest work), sleep the rest of thinktime.
void Vcpu::think() {
  if (params_.thinktime == SC_ZERO_TIME) return;
  const uint64_t b = results_.issued;
  if (b < last_think_issued_ + params_.thinktime_blocks) return;
  quiesce();
  const sc_time spin = std::min(params_.thinktime_spin, params_.thinktime);
  if (spin != SC_ZERO_TIME) guest_work(spin);
  sleep_for(params_.thinktime - spin);
  last_think_issued_ = b;
}

// fio's do_io loop (backend.c): queue I/O while below iodepth (each I/O
// waiting for the rate first, a thinktime after it); with the queue full,
// reap (wait_for_completions) until at most iodepth_low are left; with
// nothing left to issue, reap what is in flight.
void Vcpu::run_job() {
  sync_local();
  results_.start = kernel_now();
  results_.end = results_.start;
  job_running_ = true;
  const uint32_t low = params_.iodepth_low && params_.iodepth_low < params_.iodepth ? params_.iodepth_low
                                                                                     : params_.iodepth;
  for (;;) {
    while (can_issue()) {
      rate_wait(true);
      if (!can_issue()) break;  // the runtime ended while it slept
      submit_batch();
      think();
    }
    if (inflight_ == 0) break;
    const bool full = inflight_ >= params_.iodepth;
    do reap();
    while (full && inflight_ > low);
  }
  job_running_ = false;
  sync_local();
}

}  // namespace nvmesim::models
