// QEMU's global mutex (the "BQL"): the main loop holds it while it runs
// device emulation, and a vCPU whose MMIO exit is handled in QEMU holds it
// for the handler (under TCG also to take an interrupt and for its EOI:
// hv.bql_interrupts). One excludes the other, so heavy MMIO traffic steals
// main-loop time and a busy main loop lengthens exits. ioeventfd exits and
// iothreads do not take it.
#pragma once

#include <systemc>

#include "nvmesim/firmware/sim/statistics.h"
#include "nvmesim/models/sim/activations.h"
#include "nvmesim/models/sim/kernel_time.h"
#include "nvmesim/models/sim/stat_time.h"
#include "nvmesim/traces/tracer.h"

namespace nvmesim::models {

class BigLock : public stats::Group {
 public:
  // QEMU's lock is a pthread mutex (qemu_mutex_lock_iothread): a thread
  // that finds it taken sleeps in futex_wait and runs again `handoff` after
  // the holder's unlock wakes it (the host scheduler's wake-up). 0: at once.
  explicit BigLock(const sc_core::sc_time& handoff = sc_core::SC_ZERO_TIME) : handoff_(handoff) {}

  // The main loop takes the lock (waiting while a vCPU's handler holds it).
  // Without a handoff, waiters are served in order: once the main loop
  // waits, handlers that arrive later queue behind it; with one, the
  // handler that runs first takes it.
  void acquire_mainloop() {
    mainloop_waiting_ = true;
    bool waited = false;
    while (reserved_until_ > kernel_now()) {
      waited = true;
      activations::wait(reserved_until_ - kernel_now());
    }
    if (waited && handoff_ != sc_core::SC_ZERO_TIME) {
      reserved_until_ = kernel_now() + handoff_;  // nobody takes it meanwhile: it is ours once we run
      activations::wait(handoff_);
      ++handoffs_;
    }
    mainloop_waiting_ = false;
    held_by_mainloop_ = true;
    // Taken again in the unlock's own delta cycle: the waiter, woken in the
    // next one, would find it held and sleep on; that unlock wakes nobody.
    if (wakeup_pending_ && kernel_now() == released_at_ && sc_core::sc_delta_count() == released_delta_) {
      activations::cancel(waiter_wakeup_);
      wakeup_pending_ = false;
    }
  }
  // `after`: the main loop lets go that long from now (nothing else runs
  // before then: see HostThread::run).
  void release_mainloop(const sc_core::sc_time& after = sc_core::SC_ZERO_TIME) {
    held_by_mainloop_ = false;
    // With one vCPU and no trace, an unlock nobody waits for (the one waiter
    // waits for waiter_wakeup_) leaves released_ alone: its notification
    // would wake nobody, only add an empty delta cycle or timed step that the
    // lookahead counts as activity due. (Not with several vCPUs or a trace:
    // SystemC orders same-time events by its queue's history.)
    if (released_waiters_ != 0 || !one_waiter_ || traces::active()) activations::notify(released_, after);
    if (one_waiter_waiting_ && !wakeup_pending_) {  // it runs its wake-up after the unlock
      wakeup_pending_ = true;
      released_at_ = kernel_now() + after;
      released_delta_ = sc_core::sc_delta_count();
      activations::notify(waiter_wakeup_, after + handoff_);
    }
  }
  // With one vCPU (System), its wait for an unfair lock (a handoff) is one
  // timed wait: the unlock that wakes it notifies its running again a
  // handoff later, instead of a wait for the unlock and one for the
  // handoff. The same times: the outputs are unchanged.
  void set_one_waiter(bool on) { one_waiter_ = on; }
  // A vCPU's MMIO handler holds the lock for `hold`, starting no earlier
  // than `offset` from now (the vCPU's present; nothing else runs before it);
  // returns how long it waited for the lock. The part of the wait still to
  // come (a reservation ahead) is returned, to be added to the caller's
  // delay; waiting for the main loop passes simulated time here (the offset
  // first, which then comes back 0).
  sc_core::sc_time hold_for_handler(const sc_core::sc_time& hold) {
    sc_core::sc_time offset;
    return hold_for_handler(hold, offset);
  }
  sc_core::sc_time hold_for_handler(const sc_core::sc_time& hold, sc_core::sc_time& offset) {
    const sc_core::sc_time start = kernel_now() + offset;
    const bool fair = handoff_ == sc_core::SC_ZERO_TIME;
    if (offset != sc_core::SC_ZERO_TIME && one_waiter_ && !fair && held_by_mainloop_) {
      // Nothing runs before the offset has passed, so the main loop still
      // holds the lock then: the one waiter's wait for the unlock and the
      // handoff covers the offset too (the same wake-up, one wait less).
      offset = sc_core::SC_ZERO_TIME;
    } else if (offset != sc_core::SC_ZERO_TIME && (held_by_mainloop_ || (fair && mainloop_waiting_))) {
      activations::wait(offset);  // it waits for the lock: be at the present first
      offset = sc_core::SC_ZERO_TIME;
    }
    for (bool waited = false;;) {
      if (one_waiter_ && !fair && held_by_mainloop_) {
        one_waiter_waiting_ = true;
        activations::wait(waiter_wakeup_);  // the unlock, then the handoff
        one_waiter_waiting_ = false;
        wakeup_pending_ = false;
        ++handoffs_;
        if (!held_by_mainloop_) break;
        continue;
      }
      while (held_by_mainloop_ || (fair && mainloop_waiting_)) {
        waited = true;
        ++released_waiters_;
        activations::wait(released_);
        --released_waiters_;
      }
      if (!waited || fair) break;
      // Woken by the unlock, the thread runs after its wake-up; a main loop
      // that took the lock again meanwhile keeps it (a pthread mutex is not
      // fair: the unlocking thread may lock again before the woken waiter
      // runs), and the waiter sleeps again.
      activations::wait(handoff_);
      ++handoffs_;
      if (!held_by_mainloop_) break;
    }
    const sc_core::sc_time now = kernel_now() + offset;
    const sc_core::sc_time at = reserved_until_ > now ? reserved_until_ : now;
    reserved_until_ = at + hold;
    contended_ += at - start;
    ++vcpu_holds_;
    return at - now;
  }
  sc_core::sc_time vcpu_wait_time() const { return contended_; }

 private:
  sc_core::sc_time handoff_;
  stats::Scalar handoffs_{*this, "handoffs", stats::Unit::Count,
                          "takes of the lock that waited and paid the wake-up (hv.bql_handoff)"};
  bool held_by_mainloop_ = false;
  bool one_waiter_ = false;          // set_one_waiter
  bool one_waiter_waiting_ = false;  // the vCPU waits for waiter_wakeup_
  bool wakeup_pending_ = false;      // waiter_wakeup_ is notified, by the unlock at released_at_
  sc_core::sc_time released_at_;
  sc_dt::uint64 released_delta_ = 0;
  sc_core::sc_event waiter_wakeup_;
  bool mainloop_waiting_ = false;
  sc_core::sc_time reserved_until_;
  sc_core::sc_event released_;
  unsigned released_waiters_ = 0;  // processes waiting for released_
  TimeStat contended_{*this, "vcpu_wait",
                      "time vCPUs waited for the lock (MMIO handlers; interrupts with hv.bql_interrupts), all vCPUs"};
  stats::Scalar vcpu_holds_{*this, "vcpu_holds", stats::Unit::Count,
                            "times a vCPU took the lock: MMIO handled in QEMU, and with hv.bql_interrupts each "
                            "interrupt's delivery and EOI"};
};

}  // namespace nvmesim::models
