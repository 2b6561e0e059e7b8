// QEMU's global mutex (the "BQL"): the main loop holds it while it runs
// device emulation, and a vCPU whose MMIO exit is handled in QEMU holds it
// for the handler (under TCG also to take an interrupt and for its EOI:
// hv.bql_interrupts). One excludes the other, so heavy MMIO traffic steals
// main-loop time and a busy main loop lengthens exits. ioeventfd exits and
// iothreads do not take it.
#pragma once

#include <systemc>

#include "firmware/statistics.h"
#include "models/activations.h"
#include "models/kernel_time.h"
#include "models/stat_time.h"

namespace nvmesim::models {

class BigLock : public stats::Group {
 public:
  // The main loop takes the lock (waiting while a vCPU's handler holds it).
  // Waiters are served in order: once the main loop waits, handlers that
  // arrive later queue behind it (no starvation by back-to-back exits).
  void acquire_mainloop() {
    mainloop_waiting_ = true;
    while (reserved_until_ > kernel_now())
      activations::wait(reserved_until_ - kernel_now());
    mainloop_waiting_ = false;
    held_by_mainloop_ = true;
  }
  void release_mainloop() {
    held_by_mainloop_ = false;
    activations::notify(released_, sc_core::SC_ZERO_TIME);
  }
  // A vCPU's MMIO handler holds the lock for `hold`, starting no earlier
  // than now; returns how long it waited for the lock. Called from a vCPU
  // thread whose local time is synchronised.
  // The part of the wait still to come (a reservation ahead) is returned,
  // to be added to the caller's delay; waiting for the main loop passes
  // simulated time here.
  sc_core::sc_time hold_for_handler(const sc_core::sc_time& hold) {
    const sc_core::sc_time start = kernel_now();
    while (held_by_mainloop_ || mainloop_waiting_) activations::wait(released_);
    const sc_core::sc_time now = kernel_now();
    const sc_core::sc_time at = reserved_until_ > now ? reserved_until_ : now;
    reserved_until_ = at + hold;
    contended_ += at - start;
    ++vcpu_holds_;
    return at - now;
  }
  sc_core::sc_time vcpu_wait_time() const { return contended_; }

 private:
  bool held_by_mainloop_ = false;
  bool mainloop_waiting_ = false;
  sc_core::sc_time reserved_until_;
  sc_core::sc_event released_;
  TimeStat contended_{*this, "vcpu_wait",
                      "time vCPUs waited for the lock (MMIO handlers; interrupts with hv.bql_interrupts), all vCPUs"};
  stats::Scalar vcpu_holds_{*this, "vcpu_holds", stats::Unit::Count,
                            "times a vCPU took the lock: MMIO handled in QEMU, and with hv.bql_interrupts each "
                            "interrupt's delivery and EOI"};
};

}  // namespace nvmesim::models
