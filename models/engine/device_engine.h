// What runs a device's queue processing, and when and at what cost: the
// engine. A device (NVMe, virtio-blk) is a QueueDevice (its pass over its
// queues) with its DMA; it tells its engine what reached it (a doorbell, an
// ioeventfd, a backend completion) and charges the engine's costs as its
// firmware does the work (EngineOp). Two engines:
//   EmulationEngine (models/engine/emulation_engine.h): QEMU's, host
//     threads woken by the hv.notify policy (models/host/doorbell_notifier.h),
//     per-operation CPU costs on the thread that does the work;
//   NvmeHwEngine (models/nvme/nvme_hw_engine.h): a controller's own clocked
//     process, the firmware's arbiter turns and SQE bursts, stage cycles.
// Both run a context's work the same way (run_work): passes over its queues
// until one finds nothing. The running work's time offset (from the
// kernel's present) is the engine's: DMA and costs add to it, sync() lets it
// pass.
#pragma once

#include <cstdint>
#include <systemc>

#include "nvmesim/firmware/sim/statistics.h"
#include "nvmesim/models/engine/queue_device.h"

namespace nvmesim::models {

class HostThread;

// A step of the work an engine charges for: a command fetched and parsed,
// an I/O handed to (submitted to) the backend, a completion posted, an
// MSI-X message sent, a backend completion handled (QEMU's AIO callback).
enum class EngineOp : uint8_t { Command, BackendHandoff, Completion, Msix, BackendCompletion };
inline constexpr unsigned kEngineOps = 5;

class DeviceEngine {
 protected:
  struct Context {
    unsigned index = 0;
    bool in_work = false;
    sc_core::sc_time local;  // the work's time offset while it runs
  };

 public:
  explicit DeviceEngine(QueueDevice& device) : device_(device) {}
  virtual ~DeviceEngine() = default;
  DeviceEngine(const DeviceEngine&) = delete;
  DeviceEngine& operator=(const DeviceEngine&) = delete;

  // ---- what reaches the device
  // SQ qid was rung (or its eventfd signalled): a pass looks at it.
  virtual void mark_sq(uint16_t qid) = 0;
  // A BAR0 doorbell write for queue qid reached the device in the vCPU's
  // exit (its work marked): start the processing. `delay`: the exit's offset
  // from now (work run inside the exit advances it).
  virtual void doorbell_written(uint16_t qid, bool sq, sc_core::sc_time& delay) = 0;
  // ioeventfd: the engine takes doorbells through eventfds (hv.notify=ioeventfd).
  virtual bool accepts_ioeventfd() const { return false; }
  // Doorbell `index`'s eventfd (2 * qid, + 1 for a CQ head) was signalled,
  // its work marked. False: the signal woke nobody (hv.fault=eventfd_not_cleared).
  virtual bool eventfd_signalled(uint32_t /*index*/, uint16_t /*qid*/, const sc_core::sc_time& /*delay*/) {
    return true;
  }
  // The backend finished a request of context ctx: its work should run.
  virtual void work_arrived(unsigned ctx) = 0;
  // The device was reset (CC.EN 1 -> 0, virtio status 0): the marks, and
  // the eventfds, go with the queues.
  virtual void reset() = 0;

  // ---- the running work (the firmware's callbacks charge it)
  // Its time offset from now; null when no work runs (nothing to charge).
  sc_core::sc_time* offset() { return running_ ? &running_->local : nullptr; }
  bool running() const { return running_ != nullptr; }
  unsigned running_context() const { return running_ ? running_->index : 0; }
  // Charge `op`'s cost to `offset` (null: count it, charge nothing). An op
  // the engine does not cost is skipped here, without a virtual call.
  void charge(EngineOp op, sc_core::sc_time* offset) {
    if (costed_[unsigned(op)]) charge_op(op, offset);
  }
  void charge(EngineOp op) { charge(op, offset()); }
  // Let the running work's time pass (the device's writes land, the host
  // acts in between) when it runs in a thread that can wait.
  void sync();
  // Whether the engine times submission-entry fetches itself
  // (sq_fetch_arrival); a plain read, asked per DMA.
  bool fetches_in_bursts() const { return fetches_in_bursts_; }
  // Let it pass now, whatever is due (a device's own spin, virtio.busy_poll).
  void pass_time();
  // Keeps the running work across a wait the device makes itself: another
  // context's work may run meanwhile.
  class KeepRunning {
   public:
    explicit KeepRunning(DeviceEngine& e) : e_(e), saved_(e.running_) {}
    ~KeepRunning() { e_.running_ = saved_; }
    KeepRunning(const KeepRunning&) = delete;
    KeepRunning& operator=(const KeepRunning&) = delete;

   private:
    DeviceEngine& e_;
    Context* saved_;
  };
  // The device's pass asks: may it post to CQ cqid now; a backend
  // completion for CQ cqid was queued.
  virtual bool cq_due(uint16_t /*cqid*/) { return true; }
  virtual void completion_queued(uint16_t /*cqid*/) {}
  // An engine that fetches submission entries in bursts times those reads
  // itself: when the entry at `addr` arrives (absolute).
  virtual sc_core::sc_time sq_fetch_arrival(uint64_t /*addr*/, uint32_t /*len*/) { return sc_core::SC_ZERO_TIME; }

  // ---- structure
  virtual unsigned context_count() const = 0;
  virtual unsigned context_of(uint16_t qid) const = 0;
  // Context ctx's host thread (null on a hardware engine).
  virtual HostThread* host_thread(unsigned /*ctx*/) const { return nullptr; }
  // Its trace track (a host thread's id, or the hardware engine's track 0).
  virtual unsigned trace_id(unsigned ctx) const = 0;
  // Trace tracks of the engine's own (the host threads' are their own).
  virtual unsigned own_tracks() const { return 0; }
  // Context ctx has SQs marked for its next pass.
  virtual bool sqs_marked(unsigned ctx) const = 0;
  // Work the engine will run as time passes by itself (host threads answer
  // for themselves).
  virtual bool work_pending() const { return false; }
  // Its own statistics group (null: none; host threads have theirs).
  virtual stats::Group* stats() { return nullptr; }

 protected:
  // Runs context c's work starting `local` after now; `local` comes back
  // advanced by the time it spent.
  void run_work(Context& c, sc_core::sc_time& local);
  // The SQ phase of a pass: the commands it fetched.
  virtual unsigned serve_sqs(Context& c) = 0;
  // Hooks of QEMU's notify policies (none on the hardware engine).
  virtual unsigned on_work_start(unsigned /*ctx*/) { return 0; }
  virtual void on_pass_start(unsigned /*ctx*/) {}
  virtual void on_work_end(unsigned /*ctx*/) {}
  // What charge() does for an op the engine costs.
  virtual void charge_op(EngineOp op, sc_core::sc_time* offset) = 0;

  QueueDevice& device_;
  // Set by the engine when it is built (read per command and per DMA, so
  // not asked through a virtual call): the ops it costs; whether sync() may
  // skip a wait that nothing could run within (models/sim/lookahead.h);
  // whether it times SQE fetches in bursts.
  bool costed_[kEngineOps] = {true, true, true, true, true};
  bool sync_lookahead_ = true;
  bool fetches_in_bursts_ = false;

 private:
  void run_passes(Context& c);
  Context* running_ = nullptr;  // kept across a wait: another context may run meanwhile
};

}  // namespace nvmesim::models
