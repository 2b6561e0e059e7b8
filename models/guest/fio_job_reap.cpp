// The fio job's completion side: the driver's completion pass for the job's
// queue, each finished I/O into the job's aio ring (with verify's check), and
// fio's reap of the ring, which stamps clat and lat.
#include <algorithm>

#include "nvmesim/models/guest/fio_job.h"
#include "nvmesim/models/guest/guest.h"
#include "nvmesim/models/guest/vcpu.h"
#include "nvmesim/traces/tracer.h"

using namespace sc_core;

namespace nvmesim::models {

void FioJob::process_completions() {
  if (fw::VirtioBlkDriver* vb = guest_.virtio()) {
    // vring_interrupt -> virtblk_done: every used entry, callbacks suppressed
    // through used_event meanwhile; no completion doorbell. On a shared
    // queue, the other jobs' I/Os complete here and wake their jobs. Each
    // request's tag is freed only once it has completed (blk_mq_end_request):
    // the completion work lets other vCPUs run, and one sharing the queue
    // must not reuse the tag (its data buffer, its job's record of the I/O)
    // of a request this handler has taken but not yet completed.
    const uint16_t q = virtqueue();
    vb->interrupt(q, used_, &cpu_);
    for (const fw::VirtioBlkDriver::UsedRequest& c : used_) {
      Vcpu* owner = static_cast<Vcpu*>(c.submitter);
      if (!owner || owner == &cpu_) {
        finish_io(c);
      } else {
        cpu_.guest_work(params_.complete_cost);
        if (owner->complete_remote(c, cpu_.current_time())) cpu_.send_ipi();
      }
      vb->end_request(q, c.tag);
      wake_tag_waiters(q);
    }
  } else {
    // Consume every completion whose phase matches, finishing each I/O, then
    // publish the CQ head once (nvme_irq -> nvme_poll_cq -> nvme_ring_cq_doorbell).
    const unsigned n =
        guest_.driver().consume_completions(params_.qid, reaped_.data(), unsigned(reaped_.size()));
    for (unsigned i = 0; i < n; ++i) finish_io(reaped_[i]);
    trace_update(false, guest_.driver().update_cq_head(params_.qid));
  }
}

// blk_mq_put_tag -> sbitmap_queue_clear wakes the tag's waiters: each
// retries its submission once its vCPU runs again.
void FioJob::wake_tag_waiters(uint16_t q) {
  if (!guest_.tag_waiters()) return;  // per request: no scan of the vCPUs unless a job sleeps for a tag
  for (Vcpu* v : guest_.vcpus())
    if (v != &cpu_ && v->job().waiting_for_tag() && v->virtqueue() == q && v->wake(cpu_.current_time()))
      cpu_.send_ipi();
}

void FioJob::finish_io(const fw::Completion& c) {
  cpu_.guest_work(params_.complete_cost);
  record_completion(c, cpu_.current_time());
}

void FioJob::record_completion(const fw::Completion& c, const sc_time& end) {
  const bool write = is_write_[c.tag] != 0;
  if (auto* t = traces::active()) t->io(params_.qid, c.tag, write, start_time_[c.tag].value(), end.value());
  --outstanding_;
  const uint32_t g = group_of_[c.tag];
  if (g == kNoGroup) {
    const bool checked = verify_.enabled() && !c.status && verify_.completed(c.tag, write);  // a read of a written block
    io_done(c.tag, c.status, end, checked,
            checked && !verify_.matches(c.tag, data_buffer(c.tag, verify_.block_bytes())));
    return;
  }
  // A part of a split I/O: the I/O ends with its last part, as the parent
  // bio's end_io runs once its chained pieces all ended (bio_chain,
  // bio_endio); its status is the first failed part's.
  SplitIo& s = groups_[g];
  if (c.status && !s.status) s.status = c.status;
  if (verify_.enabled() && !c.status && !write && verify_.completed(c.tag, false)) {
    s.checked = true;
    if (!verify_.matches(c.tag, data_buffer(c.tag, verify_.part_bytes(c.tag)))) s.mismatch = true;
  }
  if (--s.remaining) return;
  free_groups_.push_back(g);
  // A write's block holds its pattern once every part has landed.
  if (verify_.enabled() && write && !s.status) verify_.completed(c.tag, true);
  io_done(c.tag, s.status, end, s.checked, s.mismatch);
}

void FioJob::io_done(uint32_t tag, uint16_t status, const sc_time& end, bool checked, bool mismatch) {
  const bool write = is_write_[tag] != 0;
  const uint64_t driver_ns = (end - start_time_[tag]).value() / 1000;
  stats_.driver_lat[write ? 1 : 0].add(driver_ns);
  // Into the job's aio ring, for fio's next reap.
  AioEvent& e = aio_ring_[(aio_head_ + aio_count_++) % aio_ring_.size()];
  e = AioEvent{start_time_[tag], issue_time_[tag], offset_[tag], bytes_[tag], write};
  ++ready_;
  ++stats_.ios;
  if (status && stats_.errors++ == 0) stats_.first_error_status = status;
  if (checked) {
    ++stats_.verified_reads;
    stats_.verify_intervals += verify_.take_intervals();
    if (mismatch) {
      ++stats_.verify_errors;
      if (params_.verify_fatal) verify_stop_ = true;  // fio's verify_fatal: the job issues nothing more
    }
  }
  const uint64_t bytes = bytes_[tag];
  if (write) {
    ++stats_.write_ios;
    stats_.write_bytes += bytes;
  } else {
    ++stats_.read_ios;
    stats_.read_bytes += bytes;
  }
  stats_.end = end;
}

// fio's io_getevents(min, max) (fio io_u.c io_u_queued_complete): waits
// until iodepth_batch_complete_min I/Os are in the aio ring (the vCPU halts
// if none is coming sooner), then takes at most iodepth_batch_complete_max.
// With sqthread_poll fio's reap makes no system call: fio_ioring_getevents
// (fio engines/io_uring.c) reads the CQ ring and, short of its minimum, loops
// without io_uring_enter: the job spins (guest work, no halt), checking
// every guest.poll_interval, and pays no io_getevents call or per-event copy.
void FioJob::reap() {
  const uint32_t want = std::min(params_.batch_complete_min, inflight_);
  bool slept = false;
  while (ready_ < want) {
    if (params_.poll_completions) {
      poll_cq();
      continue;
    }
    if (params_.engine.sqthread_poll) {
      cpu_.guest_work(params_.poll_interval);  // the I/O interrupt preempts it (Vcpu::guest_work)
      continue;
    }
    cpu_.wait_for_io();
    slept = true;
  }
  const uint32_t n = std::min(ready_, params_.batch_complete_max);
  if (params_.engine.sqthread_poll) {
    stats_.reap_events += n;
    ready_ -= n;
    inflight_ -= n;
    reap_events(n);
    charge_verify();
    return;
  }
  // One io_getevents call returning n events (fio_libaio_getevents: one call
  // waits for min_nr and returns up to nr): its cost per call and per event
  // once it is woken (read_events copying each io_event out), before fio
  // stamps the events' time. Nothing is charged when both costs are zero.
  // A call short of its minimum slept (fs/aio.c read_events ->
  // wait_event_interruptible_hrtimeout -> schedule()); aio_complete's
  // wake_up put the task back, and the switch out and in is paid once it
  // runs, before it copies the events out.
  ++stats_.reap_calls;
  stats_.reap_events += n;
  sc_time cost = params_.reap_call_cost + params_.reap_event_cost * double(n);
  if (slept) {
    ++stats_.reap_sleeps;
    cost += params_.reap_sleep_cost;
  }
  if (cost != SC_ZERO_TIME) cpu_.guest_work(cost);
  ready_ -= n;
  inflight_ -= n;
  reap_events(n);
  charge_verify();  // fio verifies each read after its completion's stamp (io_u.c ios_completed -> end_io)
}

// io_getevents returned n events: fio stamps them once (io_u.c
// ios_completed, icd->time) and computes clat from issue_time, lat from
// start_time (io_u.c account_io_completion).
void FioJob::reap_events(uint32_t n) {
  if (!n) return;
  const sc_time t = cpu_.current_time();
  stats_.depths.mark_complete(n);
  for (uint32_t i = 0; i < n; ++i) {
    const AioEvent& e = aio_ring_[aio_head_];
    aio_head_ = (aio_head_ + 1) % aio_ring_.size();
    --aio_count_;
    const uint64_t slat = (e.issued - e.started).value() / 1000;
    const uint64_t clat = (t - e.issued).value() / 1000;
    const uint64_t lat = (t - e.started).value() / 1000;
    const unsigned d = e.write ? 1 : 0;
    stats_.slat[d].add(slat);
    stats_.clat[d].add(clat);
    stats_.lat[d].add(lat);
    lat_completed(lat);
    if (io_sink_) io_sink_({(t - stats_.start).value(), slat, clat, lat, e.write, e.bytes, e.offset});
  }
}

bool FioJob::poll_cq() {
  cpu_.guest_work(params_.poll_interval);
  cpu_.sync_local();
  const bool found = guest_.driver().completion_ready(params_.qid);
  cpu_.polled(found);
  if (found) process_completions();
  return found;
}

void FioJob::quiesce() {
  while (inflight_) reap();
}

}  // namespace nvmesim::models
