// QEMU's engine: the device's emulation runs on host threads (the main
// loop, iothreads: models/host/host_thread.h), each owning a share of the
// queues; a doorbell reaches it through the hv.notify policy
// (models/host/doorbell_notifier.h: in the vCPU's exit, deferred, ioeventfd,
// timer, with hv.fault's eventfd faults); each operation (a command fetched,
// an I/O submitted to the backend, a backend completion handled, a
// completion posted, an MSI sent) costs host CPU time on the thread that
// does the work (one table, by EngineOp), stretched when host cores are
// shared. A thread's pass visits the SQs that
// were rung (or still hold work) round robin, up to `sq_budget` commands each.
#pragma once

#include <memory>
#include <vector>

#include "nvmesim/models/engine/device_engine.h"
#include "nvmesim/models/host/doorbell_notifier.h"

namespace nvmesim::models {

class EmulationEngine : public DeviceEngine, private NotifyTarget {
 public:
  struct Params {
    NotifierParams notifier;                // hv.notify and its settings; notifier.queues queue ids
    std::vector<uint8_t> queue_context;     // by queue id: the index of its thread (missing: 0)
    sc_core::sc_time command_cost;          // per command (request) fetched and started
    sc_core::sc_time completion_cost;       // per completion posted
    sc_core::sc_time msix_cost;             // per MSI sent (hv.msi's ioctl or eventfd write)
    sc_core::sc_time backend_submit_cost;   // per I/O submitted to the backend
    sc_core::sc_time backend_complete_cost; // per backend completion handled
    unsigned sq_budget = 0;                 // commands per SQ per visit (0: all it holds)
    // sync() skips a wait nothing could run within (the NVMe model's rule);
    // without it every sync waits (virtio-blk's, whose busy poll watches memory).
    bool sync_lookahead = false;
  };

  // `threads`: at least one (thread 0 is the main loop, which owns every
  // queue `queue_context` does not place elsewhere).
  EmulationEngine(QueueDevice& device, const Params& params, std::vector<HostThread*> threads);
  ~EmulationEngine() override;

  const DoorbellNotifier& notifier() const { return *notifier_; }
  // What one `op` costs the thread that does it (before any stretching).
  const sc_core::sc_time& op_cost(EngineOp op) const { return op_cost_[unsigned(op)]; }
  // The time charged per op, when any of the MSI and backend costs is set
  // (else null: the statistics tree stays as it was without them).
  stats::Group* stats() override;

  void mark_sq(uint16_t qid) override;
  void doorbell_written(uint16_t qid, bool sq, sc_core::sc_time& delay) override {
    notifier_->doorbell_written(qid, sq, delay);
  }
  bool accepts_ioeventfd() const override { return notifier_->accepts_ioeventfd(); }
  bool eventfd_signalled(uint32_t index, uint16_t qid, const sc_core::sc_time& delay) override {
    return notifier_->eventfd_signalled(index, qid, delay);
  }
  void work_arrived(unsigned ctx) override;
  void reset() override;
  bool cq_due(uint16_t cqid) override { return notifier_->cq_due(cqid); }
  void completion_queued(uint16_t cqid) override;

  unsigned context_count() const override { return unsigned(threads_.size()); }
  unsigned context_of(uint16_t qid) const override {
    return qid < params_.queue_context.size() ? params_.queue_context[qid] : 0;
  }
  HostThread* host_thread(unsigned ctx) const override { return threads_[ctx].thread; }
  unsigned trace_id(unsigned ctx) const override;
  bool sqs_marked(unsigned ctx) const override { return !threads_[ctx].sq_list.empty(); }

 private:
  struct ThreadContext : Context {
    HostThread* thread = nullptr;
    std::vector<uint16_t> sq_list;  // SQs rung or still holding work, in the order they were rung
  };
  unsigned serve_sqs(Context& c) override;
  unsigned on_work_start(unsigned ctx) override { return notifier_->on_emulation_start(ctx); }
  void on_pass_start(unsigned ctx) override {
    notifier_->on_pass_start(ctx, device_.completion_queue_limit());
  }
  void on_work_end(unsigned ctx) override { notifier_->on_emulation_end(ctx); }
  void charge_op(EngineOp op, sc_core::sc_time* offset) override;

  // NotifyTarget (what the notification policy drives).
  unsigned thread_count() const override { return context_count(); }
  unsigned thread_of(uint16_t qid) const override { return context_of(qid); }
  HostThread& thread(unsigned index) override { return *threads_[index].thread; }
  bool emulating(unsigned index) const override { return threads_[index].in_work; }
  void emulate_inline(unsigned index, sc_core::sc_time& delay) override { run_work(threads_[index], delay); }
  void mark_cq(uint16_t qid, bool read_shadow_head) override { device_.mark_cq(qid, read_shadow_head); }

  Params params_;
  sc_core::sc_time op_cost_[kEngineOps];  // by EngineOp: the one table of what each op costs
  struct OpStats;
  std::unique_ptr<OpStats> op_stats_;
  std::vector<ThreadContext> threads_;  // sized once: the threads' work refers to its element
  std::vector<uint8_t> sq_marked_;      // by queue id: in its thread's sq_list
  std::unique_ptr<DoorbellNotifier> notifier_;
};

}  // namespace nvmesim::models
