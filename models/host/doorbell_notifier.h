// How a doorbell write gets the device's emulation going (hv.notify): one
// policy per mode, chosen once when the device is built. The emulation asks
// its policy at the few points where the modes differ (which queues are due,
// what a thread does when its pass ends).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <systemc>

#include "nvmesim/firmware/sim/enum_table.h"
#include "nvmesim/models/sim/param_defaults.h"
#include "nvmesim/models/sim/param_visit.h"

namespace nvmesim::models {

class HostThread;

// Where a doorbell's processing runs (hv.notify).
enum class NotifyMode {
  Sync,       // inside the vCPU's exit, on the vCPU's time
  Deferred,   // the exit schedules it on a host thread (QEMU's main loop)
  Ioeventfd,  // an ioeventfd wakes the host thread; the value is not passed
  Timer,      // QEMU 2.x hw/block/nvme.c: the exit arms a timer; SQs and CQs are processed when it fires
};
inline constexpr fw::EnumEntry<NotifyMode> notify_modes[] = {
    {NotifyMode::Sync, "sync"}, {NotifyMode::Deferred, "deferred"},
    {NotifyMode::Ioeventfd, "ioeventfd"}, {NotifyMode::Timer, "timer"}};
inline const char* to_string(NotifyMode mode) { return fw::enum_name(notify_modes, mode); }

// Ming Lin's ioeventfd bug (qemu-devel, Google vendor-extension thread): a
// handler that never reads (clears) its eventfd, in two readings:
// LostWakeups (later signals wake nobody) or Spin (QEMU's level-triggered
// poll: the fd stays readable, so the thread never sleeps and re-runs the
// handler every iteration).
enum class EventfdFault : uint8_t { None, LostWakeups, Spin };
// hv.fault's names.
inline constexpr fw::EnumEntry<EventfdFault> eventfd_faults[] = {{EventfdFault::None, "none"},
                                                                 {EventfdFault::LostWakeups, "eventfd_not_cleared"},
                                                                 {EventfdFault::Spin, "eventfd_spin"}};

// What a policy drives: the device's queues, its host threads and its
// emulation (implemented by the device model).
class NotifyTarget {
 public:
  virtual ~NotifyTarget() = default;
  virtual unsigned thread_count() const = 0;
  virtual unsigned thread_of(uint16_t qid) const = 0;  // the host thread that owns queue qid
  virtual HostThread& thread(unsigned index) = 0;
  virtual bool emulating(unsigned index) const = 0;    // that thread's emulation is running
  // Runs thread `index`'s emulation now, on the caller's time (`delay`).
  virtual void emulate_inline(unsigned index, sc_core::sc_time& delay) = 0;
  // Work for the emulation to look at: SQ qid was rung; CQ qid was rung
  // (read_shadow_head: its shadow head is read first, as QEMU's nvme_cq_notifier does).
  virtual void mark_sq(uint16_t qid) = 0;
  virtual void mark_cq(uint16_t qid, bool read_shadow_head) = 0;
};

class DoorbellNotifier {
 public:
  virtual ~DoorbellNotifier() = default;
  virtual NotifyMode mode() const = 0;

  // A BAR0 doorbell write for queue qid reached the device in the vCPU's
  // exit (its work is marked): start the processing. `delay` is the exit's
  // offset from now (Sync runs the emulation in it and advances it).
  virtual void doorbell_written(uint16_t qid, bool sq, sc_core::sc_time& delay) = 0;

  // ioeventfd (Ioeventfd mode only): the eventfd of doorbell `index`
  // (2 * qid, + 1 for a CQ head) was signalled and its work marked. Returns
  // false when the signal woke nobody (the LostWakeups fault).
  virtual bool accepts_ioeventfd() const { return false; }
  virtual bool eventfd_signalled(uint32_t /*index*/, uint16_t /*qid*/,
                                 const sc_core::sc_time& /*delay*/) {
    return true;
  }

  // The emulation of thread `index` starts; returns the eventfd handlers
  // it re-ran (the Spin fault), whose work it marked.
  virtual unsigned on_emulation_start(unsigned /*index*/) { return 0; }
  // A pass over the queues of thread `index` starts (CQ ids below
  // cq_limit may hold completions).
  virtual void on_pass_start(unsigned /*index*/, uint16_t /*cq_limit*/) {}
  // May the pass process SQ qid (post to CQ cqid) now?
  virtual bool sq_due(uint16_t /*qid*/) { return true; }
  virtual bool cq_due(uint16_t /*cqid*/) { return true; }
  // SQ qid still holds commands after its share of the pass; a backend
  // completion for CQ cqid was queued (`local`: the emulation's offset).
  virtual void sq_work_left(uint16_t /*qid*/, const sc_core::sc_time& /*local*/) {}
  virtual void completion_queued(uint16_t /*cqid*/, const sc_core::sc_time& /*local*/) {}
  // The emulation of thread `index` ends.
  virtual void on_emulation_end(unsigned /*index*/) {}
  // The controller was reset (CC.EN 1 -> 0): queues, and their eventfds, are gone.
  virtual void on_controller_reset() {}
};

// How a doorbell reaches an emulation engine's host threads: QEMU's
// setting, hv.* though each device's engine (models/engine/
// emulation_engine.h) owns its copy; `queues` is the device's to set.
struct NotifierParams {
  NotifyMode mode;
  sc_core::sc_time timer_delay;  // Timer
  EventfdFault eventfd_fault;    // Ioeventfd
  uint16_t queues = 1;           // queue ids 0..queues-1

  NotifierParams() { set_param_defaults(*this); }  // the visit lines' defaults

  static constexpr const char* param_prefix = "hv";
  template <class V>
  void visit(V& v) {
    using namespace param_units;
    v.choice(mode, "notify", "deferred", notify_modes, "",
             "how a doorbell reaches the device: in the exit, deferred to its thread, ioeventfd, "
             "or QEMU 2.x's timer");
    v.time(timer_delay, "timer_delay", "500ns", 0, 1 * MS,
           "hv.notify=timer: delay of QEMU's SQ/CQ timers (QEMU 2.x's 500 ns)");
    v.choice(eventfd_fault, "fault", "none", eventfd_faults, "",
             "inject Ming Lin's uncleared ioeventfd: eventfd_not_cleared loses later wake-ups, "
             "eventfd_spin keeps the fd readable so its thread spins (as QEMU's poll saw it)");
  }
};
std::unique_ptr<DoorbellNotifier> make_doorbell_notifier(const NotifierParams& params,
                                                         NotifyTarget& target);

}  // namespace nvmesim::models
