// What an engine (models/engine/device_engine.h) runs: a device's queues
// (NVMe's SQs and CQs, virtio-blk's virtqueues). The engine decides when a
// context's work runs and what each step costs; the device does the work of
// a pass. A context is the engine's share of the queues: one host thread's
// on QEMU's engine, the single one of the hardware engine.
#pragma once

#include <cstdint>
#include <systemc>

namespace nvmesim::models {

class QueueDevice {
 public:
  virtual ~QueueDevice() = default;

  // Fetch and start up to `budget` requests of submission queue qid (the
  // engine's share for this visit); returns how many it fetched.
  virtual unsigned serve_sq(uint16_t qid, unsigned budget) = 0;
  // SQ qid still holds requests it has not fetched.
  virtual bool sq_has_work(uint16_t qid) const = 0;
  // SQ qid exists (an admin command may have deleted it meanwhile).
  virtual bool sq_exists(uint16_t /*qid*/) const { return true; }
  // The rest of a pass of context ctx, after its SQs: the backend's
  // completions handed over, completions posted. Returns the completions
  // posted; sets `progress` when it did any work.
  virtual unsigned finish_pass(unsigned ctx, bool& progress) = 0;
  // Queue ids below this may hold completions (a notifier's pass start
  // looks at their timers).
  virtual uint16_t completion_queue_limit() const = 0;

  // Context ctx's work starts; `rerun_handlers`: eventfd handlers re-run
  // for a still-readable fd (hv.fault=eventfd_spin), their work marked.
  virtual void work_started(unsigned /*ctx*/, unsigned /*rerun_handlers*/) {}
  // A pass of context ctx starts at `start`; it ended (`end`) having
  // fetched `commands` and posted `completions` (`progress`: it found work).
  virtual void pass_started(unsigned /*ctx*/, const sc_core::sc_time& /*start*/) {}
  virtual void pass_ended(unsigned /*ctx*/, const sc_core::sc_time& /*start*/, const sc_core::sc_time& /*end*/,
                          bool /*progress*/, unsigned /*commands*/, unsigned /*completions*/) {}
  // The passes found nothing more: the device's own work before the
  // context's work ends (virtio.busy_poll's window). True: run the passes again.
  virtual bool after_passes(unsigned /*ctx*/) { return false; }
  // CQ qid was rung (read_shadow_head: through its eventfd, so its shadow
  // head is read first, as QEMU's nvme_cq_notifier does).
  virtual void mark_cq(uint16_t /*qid*/, bool /*read_shadow_head*/) {}
};

}  // namespace nvmesim::models
