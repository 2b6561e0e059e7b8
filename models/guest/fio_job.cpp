// The fio job's loop and its submission side: fio's do_io, the batches
// handed to the guest's driver, and the rate and thinktime that pace them.
// Its completion side is in models/guest/fio_job_reap.cpp.
#include "nvmesim/models/guest/fio_job.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "nvmesim/models/guest/guest.h"
#include "nvmesim/models/guest/vcpu.h"
#include "nvmesim/models/sim/kernel_time.h"
#include "nvmesim/models/sim/run_control.h"
#include "nvmesim/traces/tracer.h"

using namespace sc_core;

namespace nvmesim::models {

namespace {
// Tags one queue can have in flight (the NVMe driver's, or a virtqueue's
// descriptors): the size of the per-tag vectors.
uint32_t tag_count(const Guest& guest) {
  uint32_t tags = guest.driver().config().max_outstanding_per_queue + 1;
  if (const auto* vc = guest.virtio_config()) tags = std::max<uint32_t>(tags, vc->queue_size);
  return tags;
}
}  // namespace

FioJob::FioJob(Vcpu& cpu, const VcpuParams& params, VcpuStats& stats, Guest& guest)
    : cpu_(cpu), params_(params), stats_(stats), guest_(guest), workload_(params.job),
      thinktime_(params.thinktime, params.thinktime_spin, params.thinktime_blocks),
      verify_(fio_verify_config(params, tag_count(guest))) {
  const uint32_t tags = tag_count(guest);
  start_time_.resize(tags);
  issue_time_.resize(tags);
  is_write_.resize(tags);
  offset_.resize(tags);
  bytes_.resize(tags);
  group_of_.assign(tags, kNoGroup);
  groups_.resize(tags);
  for (uint32_t g = tags; g-- > 0;) free_groups_.push_back(g);
  batch_tags_.reserve(tags);
  aio_ring_.resize(std::max<uint32_t>(tags, params.iodepth) + 1);  // at most iodepth wait unreaped
  reaped_.resize(tags);
  used_.reserve(tags);
  rate_.setup(params.rate, params.rate_iops, params.job);
}

// fio's do_io loop (backend.c): queue I/O while below iodepth (each I/O
// waiting for the rate first, a thinktime after it); with the queue full,
// reap (wait_for_completions) until at most iodepth_low are left; with
// nothing left to issue, reap what is in flight.
void FioJob::run() {
  cpu_.sync_local();
  stats_.start = kernel_now();
  stats_.end = stats_.start;
  lat_start();
  const uint32_t low = params_.iodepth_low && params_.iodepth_low < params_.iodepth ? params_.iodepth_low
                                                                                     : params_.iodepth;
  for (;;) {
    while (can_issue()) {
      rate_wait(true);
      if (!can_issue()) break;  // the runtime ended while it slept
      submit_batch();
      charge_verify();
      think();
      lat_check();
    }
    if (inflight_ == 0) {
      if (start_verify_phase()) continue;  // fio's do_verify, after do_io
      break;
    }
    const bool full = inflight_ >= depth_limit();
    do reap();
    while (full && inflight_ > low);
    lat_check();
  }
  cpu_.sync_local();
}

bool FioJob::can_issue(uint32_t pending) const {
  if (inflight_ + pending >= depth_limit()) return false;  // fio's queue is full until it reaps (queue_full)
  if (lat_target_.done()) return false;  // the latency_target search ended the job
  if (!io_left(pending)) return false;  // number_ios, or the verify phase's blocks
  if (params_.runtime != SC_ZERO_TIME && cpu_.current_time() >= stats_.start + params_.runtime) return false;
  if (run_control::stop_requested()) return false;  // a signal: drain, as fio (models/sim/run_control.h)
  return true;
}

void FioJob::submit_batch() {
  fw::VirtioBlkDriver* vb = guest_.virtio();
  if (vb) {
    submit_batch_virtio(*vb);
    return;
  }
  unsigned n = 0;
  batch_tags_.clear();
  while (n < params_.batch_submit && can_issue() && (n == 0 || !rate_wait(false))) {
    const NextIo io = next_io();
    const sc_time started = cpu_.current_time();
    const unsigned commands = issue(io, started);  // NVMe: waits for tags (issue_command_waiting)
    if (!commands) break;  // no descriptors: publish what we have
    ++n;
    submit_work(commands);
  }
  plug_last_bytes_ = 0;  // blk_finish_plug dispatches the rest (the ring below)
  // One io_submit call per batch (fio's td_io_commit -> fio_libaio_commit),
  // its system call's own cost before its doorbell; one SQ doorbell update per
  // batch; virtio-blk kicks once per batch (virtio_queue_rq: kick_prepare on
  // the batch's last request).
  if (n) {
    submit_call();
    // A device polling the SQ shadow tails (nvme.sq_poll) sees the store at
    // the vCPU's own time, as a busy-polled avail ring.
    const bool watched = !vb && guest_.watching_avail();
    if (watched) cpu_.sync_local();
    trace_update(true, vb ? vb->kick(virtqueue(), &cpu_) : guest_.driver().ring_sq(params_.qid));
    if (watched) guest_.avail_published(params_.qid, cpu_.current_time() - kernel_now());
    submitted(n);
  }
}

// Each NVMe command (nvme_queue_rq) costs the kernel its work: the block
// path's guest.submit_cost, or for NVMe passthrough (fio's io_uring_cmd:
// drivers/nvme/host/ioctl.c nvme_uring_cmd_io -> blk_mq_alloc_request,
// nvme_map_user_request, blk_execute_rq_nowait; no bio split or merge, one
// command per I/O) guest.uring_cmd_share of it. With fio's sqthread_poll the
// kernel's SQPOLL thread does that work (io_uring/sqpoll.c io_sq_thread ->
// io_submit_sqes) on a CPU of its own, which the model does not simulate:
// the time is counted (sqpoll_time), not spent on the job's vCPU.
void FioJob::submit_work(unsigned commands) {
  const double per = params_.engine.uring_cmd ? params_.engine.uring_cmd_share : 1.0;
  const sc_time cost = per == 1.0 && commands == 1 ? params_.submit_cost : params_.submit_cost * (per * commands);
  if (params_.engine.sqthread_poll) {
    stats_.sqpoll_time += cost;
    return;
  }
  cpu_.guest_work(cost);
}

// The batch's io_submit system call: its cost per call (guest.submit_call_cost;
// each command's own is guest.submit_cost), on this vCPU. A zero cost
// charges nothing, not even a zero step (guest_work would take a due interrupt).
// With sqthread_poll fio makes no call: the SQPOLL thread polls the SQ ring
// (fio engines/io_uring.c fio_ioring_commit calls io_uring_enter only for
// IORING_SQ_NEED_WAKEUP, set after the thread idled sq_thread_idle, 1 s by
// default: io_uring/sqpoll.c io_sq_offload_create; a busy job never sees it).
void FioJob::submit_call() {
  if (params_.engine.sqthread_poll) return;
  ++stats_.submit_calls;
  if (params_.submit_call_cost != SC_ZERO_TIME) cpu_.guest_work(params_.submit_call_cost);
}

// io_submit returned (the doorbell's exit, if any, included): fio's
// issue_time for the batch (engines/libaio.c fio_libaio_queued) and its
// depth marks (ioengines.c td_io_commit, io_u_mark_submit).
void FioJob::submitted(unsigned n) {
  const sc_time t = cpu_.current_time();
  for (const uint16_t tag : batch_tags_) issue_time_[tag] = t;
  batch_tags_.clear();
  stats_.depths.mark_submit(n, inflight_);
}

// virtio-blk: the block layer's work on each request comes first, then
// virtio_queue_rq (or virtio_queue_rqs for a batch) adds them, each add
// storing avail->idx (virtqueue_add_split), and decides the kick, under one
// hold of the queue's lock (drivers/block/virtio_blk.c). So the device can
// see a request only once its submission's cost is spent, and on a queue
// shared with other jobs' vCPUs no other request slips between this batch's
// adds and its kick decision.
void FioJob::submit_batch_virtio(fw::VirtioBlkDriver& vb) {
  shared_batch_.clear();
  // Its I/Os' starts are reported at fio's start, before the kernel's work
  // on them: the trace keeps later events until they are handed over.
  traces::Tracer* tr = traces::active();
  const unsigned vcpu = cpu_.params().index;
  if (tr) tr->hold_begin(traces::Hold::VcpuSubmit, vcpu, cpu_.current_time().value());
  while (shared_batch_.size() < params_.batch_submit && can_issue(uint32_t(shared_batch_.size()))) {
    const NextIo io = next_io();
    shared_batch_.push_back({io, cpu_.current_time()});
    submit_work(1);
  }
  // One io_submit call, even if it sleeps for a tag and kicks more than once.
  if (!shared_batch_.empty()) submit_call();
  // Before the lock: nothing may run between its adds and its kick decision.
  // A device that busy-polls the avail ring (virtio.busy_poll) reads it at
  // any time: the avail->idx stores must land at the vCPU's own time, not
  // ahead of the device in its quantum.
  if (guest_.watching_avail()) cpu_.sync_local();
  unsigned n = 0;
  batch_tags_.clear();
  for (const PendingIo& p : shared_batch_) {
    while (!issue(p.io, p.started)) {
      // No tag (the other jobs on the queue hold them) or too few
      // descriptors: blk_mq_get_tag sleeps on the tag's wait queue
      // (io_schedule) until blk_mq_put_tag frees one, the requests already
      // added dispatched first (blk_mq_run_hw_queue before it sleeps).
      if (n) {
        trace_update(true, vb.kick(virtqueue(), &cpu_));
        submitted(n);
        n = 0;
      }
      wait_for_tag();
    }
    ++n;
  }
  if (n) {
    trace_update(true, vb.kick(virtqueue(), &cpu_));
    submitted(n);
  }
  if (tr) tr->hold_end(traces::Hold::VcpuSubmit, vcpu);
}

// Sleeps until the queue's interrupt handler completes a request (its own
// interrupt, if this vCPU takes the queue's, or another vCPU's wake-up);
// with polled completions (guest.completion=poll) the job polls its CQ
// until a completion frees a tag.
void FioJob::wait_for_tag() {
  ++stats_.tag_waits;
  waiting_for_tag_ = true;
  ++guest_.tag_waiters();
  if (params_.poll_completions) {
    while (!poll_cq()) {
    }
  } else {
    cpu_.wait_for_io();
  }
  --guest_.tag_waiters();
  waiting_for_tag_ = false;
}

// One command on an NVMe queue, waiting for a tag as blk-mq does: with
// every tag of the queue taken (entries - 1: drivers/nvme/host/pci.c sizes
// the tag set at q_depth - 1), blk_mq_get_tag (block/blk-mq-tag.c) runs the
// hardware queue (blk_mq_run_hw_queue) and sleeps in io_schedule, whose
// sched_submit_work -> blk_flush_plug dispatches the plug: the commands this
// io_submit added so far get their SQ doorbell update before the job sleeps.
// fio's io_submit (libaio, no IOCB_NOWAIT) blocks in the kernel meanwhile, so
// the batch's slat includes the wait. blk_mq_put_tag at the completion frees
// the tag (the job's own interrupt: one NVMe queue per job).
int32_t FioJob::issue_command_waiting(const NextIo& io, const sc_time& started, uint64_t part_offset,
                                      uint32_t part_bytes, uint32_t group) {
  fw::Driver& d = guest_.driver();
  for (;;) {
    const int32_t tag = issue_command(io, started, part_offset, part_bytes, group);
    if (tag >= 0) return tag;
    if (*d.last_submit_error())
      throw std::logic_error(std::string("the driver refused a command: ") + d.last_submit_error());
    trace_update(true, d.ring_sq(params_.qid));
    wait_for_tag();
  }
}

uint16_t FioJob::virtqueue() const {
  const fw::VirtioBlkDriver* vb = guest_.virtio();
  const uint16_t queues = vb && vb->last_bring_up().queues ? vb->last_bring_up().queues : 1;
  return fw::VirtioBlkDriver::queue_of_cpu(params_.qid - 1u, queues);
}

// Builds one I/O on the job's queue (the NVMe SQ entries or the virtio
// chain). An I/O above the controller's largest transfer is split as the
// block layer splits its bio (block/blk-merge.c __bio_split_to_limits:
// pieces of max_hw_sectors, which drivers/nvme/host/core.c
// nvme_set_queue_limits takes from MDTS), each piece a request with its own
// tag, all in the same plug; the I/O completes with its last piece.
unsigned FioJob::issue(const NextIo& io, const sc_time& started) {
  fw::VirtioBlkDriver* vb = guest_.virtio();
  const uint32_t max = vb ? 0 : max_command_bytes();
  unsigned commands = 1;
  if (vb) {
    if (issue_command(io, started, 0, uint32_t(io.bytes), kNoGroup) < 0) return 0;
  } else if (!max || io.bytes <= max) {
    plug_add(uint32_t(io.bytes));
    issue_command_waiting(io, started, 0, uint32_t(io.bytes), kNoGroup);
  } else {
    commands = unsigned((io.bytes + max - 1) / max);
    // A group per I/O whose parts are not all completed: at most iodepth
    // (fio's unreaped I/Os), fewer than the groups (tag_count).
    if (free_groups_.empty()) throw std::logic_error("split I/O: no free group");
    const uint32_t g = free_groups_.back();
    free_groups_.pop_back();
    groups_[g] = SplitIo{commands, 0, false, false};
    // The parts go one by one (the bio split off each time, the rest
    // resubmitted: __bio_split_to_limits, submit_bio_noacct), each waiting
    // for its tag: parts beyond the free tags wait for earlier ones to complete.
    for (unsigned p = 0; p < commands; ++p) {
      const uint64_t off = uint64_t(p) * max;
      const uint32_t len = uint32_t(std::min<uint64_t>(max, io.bytes - off));
      plug_add(len);
      issue_command_waiting(io, started, off, len, g);
    }
  }
  rate_.issued(io.write ? 1 : 0, io.bytes);
  ++inflight_;
  ++stats_.issued;
  return commands;
}

uint32_t FioJob::max_command_bytes() const {
  const uint8_t mdts = guest_.bringup().mdts;  // 2^MDTS pages of CC.MPS = 0 (4 KiB)
  return mdts ? 4096u << mdts : 0;
}

// blk_add_rq_to_plug (block/blk-mq.c): with the plug's last request of
// BLK_PLUG_FLUSH_SIZE (128 KiB) or more, blk_mq_flush_plug_list dispatches
// the plug before the new request joins it; nvme_queue_rqs / nvme_queue_rq
// (bd->last) write the SQ doorbell once per dispatch.
void FioJob::plug_add(uint32_t bytes) {
  constexpr uint32_t kPlugFlushSize = 128 * 1024;
  if (plug_last_bytes_ >= kPlugFlushSize) trace_update(true, guest_.driver().ring_sq(params_.qid));
  plug_last_bytes_ = bytes;
}

int32_t FioJob::issue_command(const NextIo& io, const sc_time& started, uint64_t part_offset,
                              uint32_t part_bytes, uint32_t group) {
  const uint32_t lba = guest_.bringup().lba_bytes;
  fw::IoSpec spec;
  spec.opcode = io.write ? nvme::io::WRITE : nvme::io::READ;
  spec.slba = (io.offset + part_offset) / lba;
  spec.nlb = part_bytes / lba;
  fw::VirtioBlkDriver* vb = guest_.virtio();
  const int32_t tag = vb ? vb->submit(virtqueue(), spec, &cpu_) : guest_.driver().submit(params_.qid, spec);
  if (tag < 0) return -1;
  if (vb) guest_.avail_published(virtqueue(), cpu_.current_time() - kernel_now());  // virtqueue_add stored avail->idx
  start_time_[tag] = started;
  issue_time_[tag] = started;  // until its io_submit returns (submitted)
  batch_tags_.push_back(uint16_t(tag));
  is_write_[tag] = io.write;
  offset_[tag] = io.offset;
  bytes_[tag] = uint32_t(io.bytes);
  group_of_[tag] = group;
  if (auto* t = traces::active()) t->io_start(params_.qid, uint32_t(tag), io.write, started.value());
  if (verify_.enabled())
    verify_.prepare(uint32_t(tag), io.write, io.offset, data_buffer(uint32_t(tag), part_bytes), part_bytes,
                    uint32_t(part_offset));
  ++outstanding_;
  return tag;
}

// The I/O's data buffer in guest memory, as the CPU sees it.
uint8_t* FioJob::data_buffer(uint32_t tag, uint32_t bytes) {
  const fw::VirtioBlkDriver* vb = guest_.virtio();
  const uint64_t gpa = vb ? vb->data_buffer(virtqueue(), tag) : guest_.driver().data_buffer(params_.qid, tag);
  return cpu_.guest_memory(gpa, bytes);
}

// fio's rate_ddir (io_u.c): the next I/O's direction is due when its
// rate_next_io_time has passed; else, in a mixed job, the other direction
// if it is due; else the job quiesces and sleeps until the earlier of them
// (the sleep computed before the quiesce, as fio does), at most to the
// runtime's end.
bool FioJob::rate_wait(bool sleep) {
  if (!rate_.limited()) return false;
  const uint64_t now_us = (cpu_.current_time() - stats_.start).value() / 1000000;  // utime_since_now(&td->epoch)
  const unsigned d = workload_.next_is_write() ? 1 : 0;
  const uint32_t other_share = d ? params_.job.rwmixread : 100 - params_.job.rwmixread;
  const FioRate::Pace pace = rate_.pace(now_us, d, params_.job.rw == RwMode::RandRw && other_share);
  if (!pace.wait) {
    if (sleep && pace.dir != d) workload_.force_write(pace.dir == 1);
    return false;
  }
  if (!sleep) return true;
  workload_.force_write(pace.dir == 1);
  quiesce();
  sc_time nap = sc_time(double(pace.wait_us), SC_US);
  if (params_.runtime != SC_ZERO_TIME) {
    const sc_time end = stats_.start + params_.runtime;
    const sc_time now = cpu_.current_time();
    nap = now >= end ? SC_ZERO_TIME : std::min(nap, end - now);
  }
  cpu_.halt_for(nap);
  return false;
}

// fio's handle_thinktime (backend.c): complete the I/Os in flight, spin,
// sleep the rest; each part at most to the runtime's end (runtime_left).
void FioJob::think() {
  const uint64_t issued = stats_.issued;
  if (!thinktime_.due(issued)) return;
  quiesce();
  auto runtime_left = [this](const sc_time& part) {
    if (params_.runtime == SC_ZERO_TIME) return part;
    const sc_time end = stats_.start + params_.runtime, now = cpu_.current_time();
    return now >= end ? SC_ZERO_TIME : std::min(part, end - now);
  };
  const sc_time spin = runtime_left(thinktime_.spin());
  if (spin != SC_ZERO_TIME) cpu_.guest_work(spin);
  cpu_.halt_for(runtime_left(thinktime_.spin() + thinktime_.sleep() - spin));  // thinktime - the spin done
  thinktime_.taken(issued);
}

void FioJob::trace_update(bool sq, const fw::DoorbellUpdate& u) {
  auto* t = traces::active();
  if (!t || !u.updated) return;
  const uint64_t at = cpu_.current_time().value();
  t->doorbell_update(params_.qid, sq, at, u.new_value, u.old_value, u.mmio, u.via_shadow, u.eventidx);
  t->queue_value(params_.qid, sq ? traces::QueueSignal::DriverSqTail : traces::QueueSignal::DriverCqHead,
                 at, u.new_value);
  t->queue_value(params_.qid, traces::QueueSignal::Outstanding, at, outstanding_);
}

}  // namespace nvmesim::models
