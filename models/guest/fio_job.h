// One fio job (libaio) running on a vCPU: fio's do_io loop keeps `iodepth`
// I/Os unreaped, submitting them in batches of iodepth_batch_submit through
// the guest's driver (one SQ doorbell update or virtqueue kick per batch),
// and once its queue is full reaps iodepth_batch_complete_min..max of them
// from its aio ring (io_getevents), paced by fio's rate and thinktime and
// checked by verify=pattern. The driver's completion pass for the job's
// queue (nvme_irq's, virtblk_done's) hands finished I/Os to the aio ring;
// the CPU (models/guest/vcpu.h) runs it from its interrupt, or the job from
// its poll. The job's time is the CPU's: it runs guest work, syncs and
// halts through it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <systemc>
#include <vector>

#include "nvmesim/firmware/guest/driver.h"
#include "nvmesim/firmware/guest/virtio_blk_driver.h"
#include "nvmesim/models/guest/fio_latency_target.h"
#include "nvmesim/models/guest/fio_pacing.h"
#include "nvmesim/models/guest/fio_verify.h"
#include "nvmesim/models/guest/vcpu_params.h"
#include "nvmesim/models/guest/vcpu_stats.h"
#include "nvmesim/models/guest/workload.h"

namespace nvmesim::models {

class Guest;
class Vcpu;

// The job's verify settings from its options (models/guest/fio_job_verify.cpp),
// and the guest CPU throughput of a mode's checksum (GB/s; 0: not charged).
FioVerifyConfig fio_verify_config(const VcpuParams& p, uint32_t tags);
double fio_verify_gbps(VerifyMode m);

class FioJob {
 public:
  // fio's per-I/O logs (write_lat_log, ...): one sample at each I/O's reap.
  struct IoSample {
    uint64_t elapsed_ps;  // from its job's start, at the reap
    uint64_t slat_ns, clat_ns, lat_ns;  // fio's
    bool write;
    uint32_t bytes;
    uint64_t offset;
  };

  // The job of `cpu` (whose params and statistics group it uses).
  FioJob(Vcpu& cpu, const VcpuParams& params, VcpuStats& stats, Guest& guest);

  // fio's do_io loop (backend.c), from the job's start to its last reap.
  void run();
  // The driver's completion pass over the job's queue (nvme_irq ->
  // nvme_poll_cq, or vring_interrupt -> virtblk_done): each finished I/O
  // into its job's aio ring.
  void process_completions();
  // The I/O ended at `end` (now, or when another vCPU's interrupt handler
  // completed it): latency, statistics, into the aio ring.
  void record_completion(const fw::Completion& c, const sc_core::sc_time& end);

  void on_io(std::function<void(const IoSample&)> sink) { io_sink_ = std::move(sink); }
  uint32_t outstanding() const { return outstanding_; }
  // The virtqueue this job submits on (blk_mq_map_queues: vCPU % queues).
  uint16_t virtqueue() const;
  // Its submission sleeps for a tag of its shared virtqueue (wait_for_tag).
  bool waiting_for_tag() const { return waiting_for_tag_; }

 private:
  bool can_issue(uint32_t pending = 0) const;  // pending: I/Os of this batch not yet issued
  void submit_batch();
  void submit_batch_virtio(fw::VirtioBlkDriver& vb);
  void submit_call();  // the batch's io_submit call: counted, its cost charged
  void submit_work(unsigned commands);  // the kernel's per-command work (on the SQPOLL thread with sqthread_poll)
  void submitted(unsigned n);  // the batch's io_submit returned
  void wait_for_tag();  // blk_mq_get_tag's sleep
  // issue_command on an NVMe queue, sleeping for a tag until one is free.
  int32_t issue_command_waiting(const NextIo& io, const sc_core::sc_time& started, uint64_t part_offset,
                                uint32_t part_bytes, uint32_t group);
  bool poll_cq();  // one poll of the job's CQ (guest.completion=poll): true if it found a completion
  // A request of the shared queue completed: wake the jobs sleeping for a tag.
  void wake_tag_waiters(uint16_t q);  // virtio.queues < numjobs: other jobs use this job's queue
  // NVMe commands issued, each waiting for its tag (virtio-blk: 0 when the
  // virtqueue has no room)
  unsigned issue(const NextIo& io, const sc_core::sc_time& started);
  // Largest NVMe command the block layer sends (MDTS x 4 KiB; 0: no limit):
  // a larger I/O is split into parts, one command and tag each.
  uint32_t max_command_bytes() const;
  // One command of an I/O (the whole I/O, or one of its parts): its tag, or -1.
  int32_t issue_command(const NextIo& io, const sc_core::sc_time& started, uint64_t part_offset,
                        uint32_t part_bytes, uint32_t group);
  // blk_add_rq_to_plug: a request of BLK_PLUG_FLUSH_SIZE or more in the plug
  // is dispatched (an SQ doorbell update) before the next one is added.
  void plug_add(uint32_t bytes);
  uint8_t* data_buffer(uint32_t tag, uint32_t bytes);
  void finish_io(const fw::Completion& c);
  // The fio I/O whose (last) command was on `tag` ended: driver latency, the
  // aio ring, fio's counts; verify's outcome as its parts found it.
  void io_done(uint32_t tag, uint16_t status, const sc_core::sc_time& end, bool checked, bool mismatch);
  void reap();
  void reap_events(uint32_t n);  // fio's reap of n I/Os from the aio ring, now
  void quiesce();  // fio's io_u_quiesce: reap until nothing is in flight
  // fio's rate_ddir: true when the next I/O must wait for the rate; with
  // `sleep`, quiesces and sleeps for it first (and returns false).
  bool rate_wait(bool sleep);
  void think();  // fio's handle_thinktime
  // fio's latency_target (models/guest/fio_job_latency.cpp): the depth the
  // job queues to (td->latency_qd; iodepth without a search), and
  // lat_target_check with what it asks of the job.
  uint32_t depth_limit() const { return lat_target_.enabled() ? lat_target_.depth() : params_.iodepth; }
  void lat_start();
  void lat_check();
  void lat_completed(uint64_t lat_ns);  // one reaped I/O's total latency
  void trace_update(bool sq, const fw::DoorbellUpdate& u);
  // verify (models/guest/fio_job_verify.cpp): the next I/O (the workload's,
  // or the verify phase's read-back); whether I/Os are left to issue
  // (number_ios, the read-back's blocks, verify_fatal's stop); the verify
  // phase's start; the guest CPU time of the checksums run so far.
  NextIo next_io();
  bool io_left(uint32_t pending) const;
  bool start_verify_phase();
  void charge_verify();

  Vcpu& cpu_;
  const VcpuParams& params_;
  VcpuStats& stats_;
  Guest& guest_;
  Workload workload_;
  FioRate rate_;
  FioThinktime thinktime_;
  FioVerify verify_;
  FioLatencyTarget lat_target_;
  bool lat_quiesce_ = false;  // a reap's failure lowered the depth: quiesce at the next check
  bool verify_phase_ = false;  // fio's do_verify: reading back what the job wrote
  bool verify_stop_ = false;   // verify_fatal: a mismatch ended the job

  // Per tag: what fio and the statistics need of the I/O on it.
  std::vector<sc_core::sc_time> start_time_;  // fio prepared it (io_u->start_time)
  std::vector<sc_core::sc_time> issue_time_;  // its io_submit returned (io_u->issue_time)
  std::vector<uint8_t> is_write_;
  std::vector<uint64_t> offset_;              // byte offset (fio's log_offset)
  std::vector<uint32_t> bytes_;
  std::vector<uint16_t> batch_tags_;          // tags of the batch being submitted
  // Split I/Os (bs above the controller's MDTS): per tag the group of its
  // I/O (kNoGroup: not split); per group the parts still in flight, the
  // first failed part's status, a mismatch verify found in a read part.
  static constexpr uint32_t kNoGroup = ~0u;
  std::vector<uint32_t> group_of_;
  struct SplitIo {
    uint32_t remaining = 0;
    uint16_t status = 0;
    bool checked = false, mismatch = false;
  };
  std::vector<SplitIo> groups_;
  std::vector<uint32_t> free_groups_;
  uint32_t plug_last_bytes_ = 0;  // the last request added to the batch's plug (0: none)
  // The job's aio ring: I/Os the driver completed, in completion order,
  // until fio reaps them (a tag may be reused by then, so each entry keeps
  // what fio's figures need).
  struct AioEvent {
    sc_core::sc_time started, issued;
    uint64_t offset;
    uint32_t bytes;
    bool write;
  };
  std::vector<AioEvent> aio_ring_;  // capacity: every tag; head/count index it
  size_t aio_head_ = 0, aio_count_ = 0;
  std::vector<fw::Completion> reaped_;  // one NVMe completion pass's CQEs
  std::vector<fw::VirtioBlkDriver::UsedRequest> used_;  // one virtio interrupt's used requests
  struct PendingIo {
    NextIo io;
    sc_core::sc_time started;
  };
  std::vector<PendingIo> shared_batch_;  // submit_batch_virtio's batch (kept: no allocation once grown)
  uint32_t outstanding_ = 0;  // submitted to the driver, not yet completed by it
  // fio's view: I/Os submitted and not yet reaped (what iodepth bounds), and
  // those completed by the driver, waiting in the aio ring for fio's reap.
  uint32_t inflight_ = 0, ready_ = 0;
  bool waiting_for_tag_ = false;
  std::function<void(const IoSample&)> io_sink_;
};

}  // namespace nvmesim::models
