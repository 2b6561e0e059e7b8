// NvmeControllerModel as a QueueDevice: what a pass of its engine does
// (the SQs a visit or an arbiter turn gives it, the backend's completions,
// the CQs to post), the backend's completions routed to the context that
// owns their queue, and the queues as a stall report sees them.
#include <sstream>

#include "nvmesim/firmware/nvme/controller_tag.h"
#include "nvmesim/firmware/nvme/eventidx.h"
#include "nvmesim/models/nvme/nvme_controller.h"
#include "nvmesim/models/sim/kernel_time.h"
#include "nvmesim/traces/tracer.h"

using namespace sc_core;

namespace nvmesim::models {

// cmd_cost and cqe_cost (or the stage cycles) are charged as each command
// is fetched and each CQE posted (on_command_fetched / on_completion_posting).
unsigned NvmeControllerModel::serve_sq(uint16_t qid, unsigned budget) {
  const unsigned n = firmware_->process_sq(qid, budget);
  if (n) {
    const uint16_t cqid = firmware_->sq_state(qid).cqid;
    if (cqid >= cq_scan_limit_) cq_scan_limit_ = uint16_t(cqid + 1);
  }
  if (auto* t = traces::active()) {
    const sc_time* local = engine_->offset();
    t->queue_value(qid, traces::QueueSignal::DeviceSqHead, (kernel_now() + (local ? *local : SC_ZERO_TIME)).value(),
                   firmware_->sq_state(qid).head);
  }
  return n;
}

unsigned NvmeControllerModel::finish_pass(unsigned ctx, bool& progress) {
  unsigned completions = 0;
  // Backend completions of this context's queues.
  ContextWork& w = work_[ctx];
  const bool post_each = params_.cqe_post == CqePost::Each ||
                         (params_.cqe_post == CqePost::EachWithIoeventfd && engine_->accepts_ioeventfd());
  for (size_t i = 0; i < w.done_count; ++i) {
    engine_->charge(EngineOp::BackendCompletion);  // the AIO completion's callback, nvme_rw_cb
    firmware_->complete_io(w.done[i].tag, w.done[i].status);
    const uint16_t sqid = slot_sq_[fw::tag_slot(w.done[i].tag)];
    const uint16_t cqid = firmware_->sq_state(sqid).cqid;
    engine_->completion_queued(cqid);
    if (post_each) {  // nvme_enqueue_req_completion -> nvme_post_cqes at once
      posted_before_ = firmware_->counters().completions_posted;
      completions += firmware_->post_completions(cqid);
    }
  }
  if (w.done_count) progress = true;
  w.done_count = 0;

  // Completion queues with completions to post. Only CQs that commands
  // went to (or that were rung) can hold completions.
  for (uint16_t cqid = 0; cqid < cq_scan_limit_; ++cqid) {
    if (engine_->context_of(cqid) != ctx || !engine_->cq_due(cqid)) continue;
    if (!cq_marked_[cqid] && !firmware_->cq_has_pending(cqid)) continue;
    cq_marked_[cqid] = 0;
    if (cq_notified_[cqid]) {  // QEMU's nvme_cq_notifier reads the shadow head first
      cq_notified_[cqid] = 0;
      firmware_->refresh_cq_head_from_shadow(cqid);
    }
    posted_before_ = firmware_->counters().completions_posted;
    const unsigned n = firmware_->post_completions(cqid);
    completions += n;
    if (n) progress = true;
  }
  return completions;
}

// Device bursts are traced on the track of the host thread or of the
// hardware engine that runs them.
void NvmeControllerModel::pass_started(unsigned ctx, const sc_time& start) {
  if (auto* t = traces::active()) t->hold_begin(traces::Hold::DeviceBurst, engine_->trace_id(ctx), start.value());
}

void NvmeControllerModel::pass_ended(unsigned ctx, const sc_time& start, const sc_time& end, bool progress,
                                     unsigned commands, unsigned completions) {
  auto* t = traces::active();
  if (progress) {
    ++counters_.bursts;
    if (t) t->device_burst(engine_->trace_id(ctx), start.value(), end.value(), commands, completions);
  }
  if (t) t->hold_end(traces::Hold::DeviceBurst, engine_->trace_id(ctx));
}

void NvmeControllerModel::on_backend_complete(uint32_t tag, uint16_t status) {
  const unsigned ctx = engine_->context_of(slot_sq_[fw::tag_slot(tag)]);
  ContextWork& w = work_[ctx];
  if (w.done_count < w.done.size()) w.done[w.done_count++] = Done{tag, status};
  engine_->work_arrived(ctx);
}

bool NvmeControllerModel::spin_will_fetch(uint16_t qid, uint16_t driver_tail) const {
  if (qid > params_.firmware.max_io_queues) return false;
  const HostThread* thread = engine_->host_thread(engine_->context_of(qid));
  if (!thread || !thread->spinning()) return false;
  const auto sq = firmware_->sq_state(qid);
  if (sq.exists && sq.head != driver_tail) return true;  // commands to fetch
  // Completions to post, into a CQ with room (a full one waits for the guest).
  const auto cq = firmware_->cq_state(qid);
  return cq.exists && cq.pending && !fw::Ring{cq.size}.full(cq.head, cq.tail);
}

std::string NvmeControllerModel::describe_sq(uint16_t qid, uint16_t driver_tail) const {
  const auto sq = firmware_->sq_state(qid);
  std::ostringstream r;
  r << "device head " << sq.head << " tail " << sq.tail;
  if (sq.exists && sq.tail != driver_tail) r << " (the device never saw the driver's tail)";
  return r.str();
}

std::string NvmeControllerModel::describe_cq(uint16_t qid) const {
  const auto cq = firmware_->cq_state(qid);
  std::ostringstream r;
  r << "device head " << cq.head << " tail " << cq.tail << ", " << cq.pending
    << " completions waiting to be posted";
  if (cq.exists && cq.pending && fw::Ring{cq.size}.full(cq.head, cq.tail))
    r << " (CQ " << qid << " is full as the device sees it: it waits for a CQ head update)";
  return r.str();
}

}  // namespace nvmesim::models
