#include "nvmesim/models/engine/emulation_engine.h"

#include <algorithm>
#include <stdexcept>

#include "nvmesim/models/host/host_thread.h"
#include "nvmesim/models/sim/stat_time.h"

using namespace sc_core;

namespace nvmesim::models {

// Count and host CPU time charged per op, over the engine's threads.
struct EmulationEngine::OpStats : stats::Group {
  stats::Scalar count[kEngineOps] = {
      {*this, "commands", stats::Unit::Count, "commands fetched and started (nvme.cmd_cost each)"},
      {*this, "backend_submits", stats::Unit::Count, "I/Os submitted to the backend (nvme.backend_submit_cost each)"},
      {*this, "completions", stats::Unit::Count, "completions posted (nvme.cqe_cost each)"},
      {*this, "msi", stats::Unit::Count, "MSI messages sent, masked ones not (hv.msi_ioctl_cost or hv.msi_irqfd_cost each)"},
      {*this, "backend_completions", stats::Unit::Count,
       "backend completions handled (nvme.backend_complete_cost each)"}};
  TimeStat time[kEngineOps] = {{*this, "command_time", "host CPU time charged for commands"},
                               {*this, "backend_submit_time", "host CPU time charged for backend submissions"},
                               {*this, "completion_time", "host CPU time charged for completions posted"},
                               {*this, "msi_time", "host CPU time charged for MSI messages sent"},
                               {*this, "backend_completion_time", "host CPU time charged for backend completions"}};
};

EmulationEngine::EmulationEngine(QueueDevice& device, const Params& params, std::vector<HostThread*> threads)
    : DeviceEngine(device), params_(params), threads_(threads.size()) {
  if (threads.empty()) throw std::invalid_argument("QEMU's engine needs a host thread");
  for (uint8_t& c : params_.queue_context)
    if (c >= threads.size()) c = 0;
  for (size_t i = 0; i < threads_.size(); ++i) {
    ThreadContext& c = threads_[i];
    c.index = unsigned(i);
    c.thread = threads[i];
    c.sq_list.reserve(params_.notifier.queues);
    c.thread->set_work([this, &c](sc_time& local) { run_work(c, local); });
  }
  sq_marked_.assign(params_.notifier.queues, 0);
  notifier_ = make_doorbell_notifier(params_.notifier, *this);
  op_cost_[unsigned(EngineOp::Command)] = params_.command_cost;
  op_cost_[unsigned(EngineOp::BackendHandoff)] = params_.backend_submit_cost;
  op_cost_[unsigned(EngineOp::Completion)] = params_.completion_cost;
  op_cost_[unsigned(EngineOp::Msix)] = params_.msix_cost;
  op_cost_[unsigned(EngineOp::BackendCompletion)] = params_.backend_complete_cost;
  // An MSI, a backend submission or completion costs only when its cost is
  // set; then the engine reports the time charged per op.
  bool extra = false;
  for (EngineOp op : {EngineOp::BackendHandoff, EngineOp::Msix, EngineOp::BackendCompletion})
    extra |= costed_[unsigned(op)] = op_cost_[unsigned(op)] != SC_ZERO_TIME;
  if (extra) op_stats_ = std::make_unique<OpStats>();
  // A policy that reads the kernel's present to decide what is due (timer) syncs.
  sync_lookahead_ = params_.sync_lookahead && notifier_->mode() != NotifyMode::Timer;
}

EmulationEngine::~EmulationEngine() = default;

stats::Group* EmulationEngine::stats() { return op_stats_.get(); }

void EmulationEngine::mark_sq(uint16_t qid) {
  if (qid < sq_marked_.size() && !sq_marked_[qid]) {
    sq_marked_[qid] = 1;
    threads_[context_of(qid)].sq_list.push_back(qid);
  }
}

// The AIO completion wakes the queue's thread.
void EmulationEngine::work_arrived(unsigned ctx) { threads_[ctx].thread->kick(SC_ZERO_TIME); }

void EmulationEngine::reset() {
  for (ThreadContext& c : threads_) c.sq_list.clear();
  std::fill(sq_marked_.begin(), sq_marked_.end(), 0);
  notifier_->on_controller_reset();
}

// Charged on the thread that does the work (its CPU time stretched when the
// host's cores are shared): the engine's host thread, or the vCPU's exit
// that runs it (hv.device_thread=vcpu).
void EmulationEngine::charge_op(EngineOp op, sc_time* offset) {
  if (!offset) return;
  const sc_time& cost = op_cost_[unsigned(op)];
  const sc_time t = running() ? threads_[running_context()].thread->cpu(cost) : cost;
  *offset += t;
  if (op_stats_) {
    ++op_stats_->count[unsigned(op)];
    op_stats_->time[unsigned(op)] += t;
  }
}

void EmulationEngine::completion_queued(uint16_t cqid) {
  const sc_time* local = offset();
  notifier_->completion_queued(cqid, local ? *local : SC_ZERO_TIME);
}

unsigned EmulationEngine::trace_id(unsigned ctx) const { return threads_[ctx].thread->params().trace_id; }

// The SQs that were rung (or still hold work), each up to its budget; the
// notify policy says which are due.
unsigned EmulationEngine::serve_sqs(Context& base) {
  ThreadContext& c = static_cast<ThreadContext&>(base);
  unsigned commands = 0;
  for (size_t i = 0; i < c.sq_list.size(); ++i) {
    const uint16_t qid = c.sq_list[i];
    if (!notifier_->sq_due(qid)) continue;  // its timer has not fired yet
    sq_marked_[qid] = 0;
    commands += device_.serve_sq(qid, params_.sq_budget);
    if (device_.sq_has_work(qid)) {
      sq_marked_[qid] = 1;  // keep it in the list
      notifier_->sq_work_left(qid, c.local);
    }
  }
  // Drop the unmarked, keep order (deterministic round robin).
  size_t kept = 0;
  for (size_t i = 0; i < c.sq_list.size(); ++i)
    if (sq_marked_[c.sq_list[i]]) c.sq_list[kept++] = c.sq_list[i];
  c.sq_list.resize(kept);
  return commands;
}

}  // namespace nvmesim::models
