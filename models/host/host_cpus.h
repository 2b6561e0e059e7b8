// The host's cores, shared by vCPU threads and device-emulation threads.
// Processor sharing: while more threads are runnable than there are cores,
// each runnable thread progresses at cores/runnable of full speed, so CPU
// work started then takes proportionally longer (the fair-share view of a
// CFS scheduler, without modelling time slices). A busy-polling thread is
// runnable and takes its share like any other.
//
// Wake-up wait (host.wakeup_wait): a sleeping thread that wakes while every
// core is taken by another runnable thread waits for one. CFS lets a running
// thread keep its core for at least sched_min_granularity (Linux 6.1:
// 0.75 ms x (1 + log2(cores)), 1.5 ms on 2 cores) unless the waker preempts
// it, so the wait is drawn uniformly from 0 to host.wakeup_wait (the rest of
// the running thread's slice). 0 turns it off. The wait ends sooner when a
// core frees first: a thread that stops being runnable (a vCPU's HLT, a host
// thread going back to sleep) leaves its core idle, and the scheduler gives
// it to a waiting runnable thread at once (kernel/sched/core.c __schedule ->
// pick_next_task; fair.c newidle_balance pulls from another core's queue).
#pragma once

#include <algorithm>
#include <string>
#include <systemc>
#include <vector>

#include "nvmesim/firmware/sim/statistics.h"
#include "nvmesim/models/sim/kernel_time.h"
#include "nvmesim/models/sim/stat_time.h"

namespace nvmesim::models {

// A woken thread waiting for a core (host.wakeup_wait): told when one frees.
class CoreWaiter {
 public:
  virtual void core_freed() = 0;

 protected:
  ~CoreWaiter() = default;
};

class HostCpus : public stats::Group {
 public:
  // 0 cores: one core per thread. wakeup_wait: the longest wait for a core.
  explicit HostCpus(unsigned cores, sc_core::sc_time wakeup_wait = sc_core::SC_ZERO_TIME)
      : cores_(cores), wakeup_wait_(wakeup_wait) {}

  unsigned add_thread(const std::string& name) {
    names_.push_back(name);
    runnable_.push_back(false);
    return unsigned(names_.size() - 1);
  }
  void set_runnable(unsigned id, bool runnable) {
    if (runnable_[id] == runnable) return;
    account();
    runnable_[id] = runnable;
    runnable_count_ += runnable ? 1 : -1;
    // A core freed: the longest-waiting woken thread takes it.
    if (!runnable && !waiters_.empty() && runnable_count_ < int(cores_)) {
      CoreWaiter* first = waiters_.front();
      waiters_.erase(waiters_.begin());
      first->core_freed();
    }
  }
  // `w` woke while every core was taken and waits for one (in order).
  void wait_for_core(CoreWaiter* w) { waiters_.push_back(w); }
  // `w` got a core at the end of its drawn wait: no longer waiting.
  void cancel_wait(CoreWaiter* w) {
    waiters_.erase(std::remove(waiters_.begin(), waiters_.end(), w), waiters_.end());
  }
  // How long `work` of CPU time takes when it starts now.
  sc_core::sc_time stretch(const sc_core::sc_time& work) const {
    if (!cores_ || runnable_count_ <= int(cores_)) return work;
    return sc_core::sc_time::from_value(work.value() * uint64_t(runnable_count_) / cores_);
  }
  unsigned cores() const { return cores_; }
  // The wait for a core of a thread that wakes now (not runnable yet), for
  // `u` uniform in [0, 1): zero while a core is free.
  sc_core::sc_time wakeup_wait(double u) const {
    if (!cores_ || wakeup_wait_ == sc_core::SC_ZERO_TIME || runnable_count_ < int(cores_))
      return sc_core::SC_ZERO_TIME;
    return sc_core::sc_time::from_value(uint64_t(u * double(wakeup_wait_.value())));
  }
  // Simulated time during which runnable threads outnumbered the cores.
  sc_core::sc_time overcommitted_time() {
    account();
    return overcommitted_;
  }

 private:
  void update() override { account(); }
  void account() {
    const sc_core::sc_time now = kernel_now();
    if (cores_ && runnable_count_ > int(cores_)) overcommitted_ += now - last_;
    last_ = now;
  }
  unsigned cores_;
  sc_core::sc_time wakeup_wait_;
  std::vector<std::string> names_;
  std::vector<bool> runnable_;
  std::vector<CoreWaiter*> waiters_;
  int runnable_count_ = 0;
  sc_core::sc_time last_;
  TimeStat overcommitted_{*this, "overcommitted_time",
                          "time with more runnable threads than host cores (host.cores)"};
};

}  // namespace nvmesim::models
