#include "nvmesim/models/host/host_thread.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "nvmesim/models/sim/activations.h"
#include "nvmesim/models/host/big_lock.h"
#include "nvmesim/models/host/host_cpus.h"
#include "nvmesim/models/sim/kernel_time.h"
#include "nvmesim/models/sim/lookahead.h"
#include "nvmesim/traces/tracer.h"

using namespace sc_core;

namespace nvmesim::models {

HostThread::HostThread(sc_module_name name, const Params& params, HostCpus* cpus)
    : sc_module(name), params_(params), cpus_(cpus), jitter_stream_(params.jitter_seed) {
  if (cpus_) cpu_id_ = cpus_->add_thread(this->name());
  SC_HAS_PROCESS(HostThread);
  SC_THREAD(run);
}

sc_time HostThread::cpu(const sc_time& t) const { return cpus_ ? cpus_->stretch(t) : t; }

void HostThread::set_spinning(bool on) {
  if (on && params_.dispatch_cost == SC_ZERO_TIME)
    throw std::logic_error(std::string(name()) + ": a spinning thread needs a non-zero dispatch cost");
  spinning_ = on;
  if (on) activations::notify(kick_event_, SC_ZERO_TIME);  // a sleeping thread starts spinning now
}

// uniform (0, 1] -> exponential with the configured mean.
sc_time HostThread::jitter_draw() {
  if (params_.dispatch_jitter == SC_ZERO_TIME) return SC_ZERO_TIME;
  return sc_time::from_value(uint64_t(-std::log(next_uniform()) * double(params_.dispatch_jitter.value()) + 0.5));
}

sc_time HostThread::wake_draw(const sc_time& notified) {
  if (params_.wakeup == WakeupModel::Fixed) return jitter_draw();
  const sc_time at = kernel_now() + notified;
  return wakeup_draw(at > sleep_start_ ? at - sleep_start_ : SC_ZERO_TIME, next_uniform());
}

sc_time HostThread::stall_draw() {
  if (params_.dispatch_stall_share <= 0 || params_.dispatch_stall_max == SC_ZERO_TIME) return SC_ZERO_TIME;
  if (next_uniform() > params_.dispatch_stall_share) return SC_ZERO_TIME;
  return sc_time::from_value(uint64_t((1.0 - next_uniform()) * double(params_.dispatch_stall_max.value())));
}

void HostThread::kick(const sc_time& delay) {
  sc_time at = kernel_now() + delay;
  // A sleeping thread runs its wake-up delay after the earliest signal of
  // this sleep; the extra delay is drawn once per sleep, so more signals do
  // not wake it sooner.
  if (!busy_ && !polling_ && !spinning_) {
    if (!has_request_ && !wake_drawn_) {
      wake_drawn_ = true;
      sleep_jitter_ = wake_draw(delay);
      const sc_time stall = stall_draw();
      if (stall != SC_ZERO_TIME) {
        sleep_jitter_ += stall;
        stall_time_ += stall;
        ++stalls_;
      }
      // Every core taken: wait for one (host.wakeup_wait; drawn only then,
      // so runs without it keep their random sequence).
      if (cpus_ && cpus_->wakeup_wait(1.0) != SC_ZERO_TIME) {
        const sc_time wait = cpus_->wakeup_wait(1.0 - next_uniform());
        sleep_jitter_ += wait;
        core_wait_due_ = wait;
        ++core_waits_;
        if (wait != SC_ZERO_TIME) {  // a core that frees first ends it (core_freed)
          waiting_core_ = true;
          cpus_->wait_for_core(this);
        }
      }
    }
    at += fixed_latency() + sleep_jitter_;
    if (!has_request_ || at < request_time_) wake_at_ = at;
  }
  if (!has_request_ || at < request_time_) {
    has_request_ = true;
    request_time_ = at;
    activations::notify(kick_event_, at - kernel_now());
  }
}

// QEMU's timer_mod notifies the thread's loop (util/qemu-timer.c
// timerlist_rearm -> timerlist_notify -> qemu_notify_event / aio_notify): a
// thread asleep in ppoll wakes after its wake-up delay, as for any other
// notification, and runs the timer then if it has expired; a running or
// polling thread sees the deadline in its next poll and wakes on time.
void HostThread::arm_timer(const sc_time& delay, const sc_time& notified) {
  timer_armed_ = true;
  sc_time at = kernel_now() + delay;
  if (!busy_ && !polling_ && !spinning_) {
    if (!wake_drawn_) {  // the sleep's first notification: its wake-up is on its way
      sleep_jitter_ = wake_draw(notified);  // once per sleep, as a kick's
      wake_drawn_ = true;
      wake_at_ = kernel_now() + notified + fixed_latency() + sleep_jitter_;
    }
    at = std::max(at, wake_at_);
  }
  timer_time_ = at;
  activations::notify(kick_event_, at - kernel_now());
}

void HostThread::sync(sc_time& local) {
  if (local != SC_ZERO_TIME) {
    activations::wait(local);
    local = SC_ZERO_TIME;
  }
}

void HostThread::account_busy(const sc_time& polled) {
  if (!busy_) return;
  const sc_time ran = kernel_now() - busy_start_;
  const sc_time poll = std::min(polled, ran);
  busy_time_ += ran - poll;
  poll_time_ += poll;
  busy_start_ = kernel_now();
}

// QEMU's adjust_polling_time(): keep the window when the event came within
// it, shrink it when waiting took longer than poll-max, grow it otherwise.
void HostThread::adjust_polling(const sc_time& block) {
  if (params_.poll_max == SC_ZERO_TIME) return;
  if (block <= poll_ns_) return;
  if (block > params_.poll_max) {
    poll_ns_ = params_.poll_shrink ? sc_time::from_value(poll_ns_.value() / params_.poll_shrink)
                                   : SC_ZERO_TIME;
  } else if (poll_ns_ < params_.poll_max && block < params_.poll_max) {
    const unsigned grow = params_.poll_grow ? params_.poll_grow : 2;
    poll_ns_ = poll_ns_ == SC_ZERO_TIME ? sc_time(4, SC_US)  // QEMU starts at 4 us
                                        : sc_time::from_value(poll_ns_.value() * grow);
    poll_ns_ = std::min(poll_ns_, params_.poll_max);
  }
}

// util/aio-posix.c poll_set_started: every handler's io_poll_begin when
// polling starts; io_poll_end when it stops, each followed by one more
// io_poll "in case ->io_poll_end() raced with the event".
bool HostThread::set_poll_started(bool started) {
  if (started == poll_started_ || poll_handlers_.empty()) return false;
  poll_started_ = started;
  bool found = false;
  for (const PollHandler& h : poll_handlers_) {
    if (started) {
      h.begin();
    } else if (h.end()) {
      found = true;
    }
  }
  return found;
}

// Requests are kept in variables, not only in the event, so a kick that
// fires while the thread is working is not lost.
void HostThread::wait_for_request() {
  auto due = [this] {
    const sc_time now = kernel_now();
    return (has_request_ && request_time_ <= now) || (timer_armed_ && timer_time_ <= now);
  };
  auto next_deadline = [this](sc_time& at) {
    bool any = false;
    if (has_request_) { at = request_time_; any = true; }
    if (timer_armed_ && (!any || timer_time_ < at)) { at = timer_time_; any = true; }
    return any;
  };
  if (due() || spinning_) return;  // spinning: poll() returned at once
  const sc_time start = kernel_now();
  // Busy-poll first: a request during the window is served at once.
  if (poll_ns_ != SC_ZERO_TIME) {
    set_poll_started(true);  // try_poll_mode; it stays started while polls find work
    polling_ = true;
    if (cpus_) cpus_->set_runnable(cpu_id_, true);
    if (auto* t = traces::active())
      t->thread_state(params_.trace_id, start.value(), traces::ThreadState::Polling);
    const sc_time poll_end = start + poll_ns_;
    while (!due() && kernel_now() < poll_end) {
      sc_time at;
      const sc_time until = next_deadline(at) && at < poll_end ? at : poll_end;
      activations::wait(until - kernel_now(), kick_event_);
    }
    polling_ = false;
    poll_time_ += kernel_now() - start;
    if (due()) {
      ++poll_hits_;
      adjust_polling(kernel_now() - start);
      return;
    }
    // aio_poll disables poll mode before blocking; the last poll after
    // io_poll_end finding work makes the wait's timeout 0: no sleep.
    if (set_poll_started(false)) {
      adjust_polling(kernel_now() - start);
      return;
    }
    // The window closed: a pending request now pays the wake-up.
    if (has_request_) {
      if (params_.wakeup == WakeupModel::Fixed) {
        request_time_ += params_.dispatch_latency;
      } else {  // its draw is this sleep's, at the idle time until the request is due
        sleep_start_ = kernel_now();
        sleep_jitter_ = wake_draw(request_time_ - kernel_now());
        wake_drawn_ = true;
        request_time_ += sleep_jitter_;
        wake_at_ = request_time_;
      }
    }
  } else if (set_poll_started(false)) {  // the window shrank to 0 while poll mode was on
    return;
  }
  sleep_start_ = kernel_now();
  if (cpus_) cpus_->set_runnable(cpu_id_, false);
  if (auto* t = traces::active())
    t->thread_state(params_.trace_id, kernel_now().value(), traces::ThreadState::Sleeping);
  sleep_until_due();
  adjust_polling(kernel_now() - start);
}

void HostThread::sleep_until_due() {
  for (;;) {
    const sc_time now = kernel_now();
    if (((has_request_ && request_time_ <= now) || (timer_armed_ && timer_time_ <= now)) || spinning_) break;
    if (has_request_ || timer_armed_) {
      const sc_time at = !timer_armed_ || (has_request_ && request_time_ <= timer_time_) ? request_time_ : timer_time_;
      activations::wait(at - now, kick_event_);
    } else {
      activations::wait(kick_event_);
    }
  }
  ++sleep_wakeups_;
}

// The dispatch's end `local` from now, when the thread then sleeps with
// nothing asked of it and nothing else is due before that end
// (models/sim/lookahead.h): it lets the lock go and goes to sleep at that
// time without waiting for it first, as wait_for_request would after the
// wait. Not with a trace (its writer orders what it is handed by the
// kernel's time at hand-over), shared host cores (they account runnable
// threads by the kernel's time) or polling. True when it slept.
bool HostThread::end_and_sleep(const sc_time& local) {
  if (!params_.end_ahead || local == SC_ZERO_TIME || has_request_ || timer_armed_ || spinning_ ||
      poll_ns_ != SC_ZERO_TIME || poll_started_ || (cpus_ && cpus_->cores()) || traces::active() ||
      activity_due_within(local))
    return false;
  const sc_time end = kernel_now() + local;
  if (params_.bql) params_.bql->release_mainloop(local);
  busy_time_ += end - busy_start_;
  busy_ = false;
  if (cpus_) cpus_->set_runnable(cpu_id_, false);
  sleep_start_ = end;
  sleep_until_due();
  adjust_polling(kernel_now() - end);
  return true;
}

// The wake-up keeps its own delay; only the wait for a core is cut short,
// to now. The thread holds the freed core from now (it is runnable).
void HostThread::core_freed() {
  waiting_core_ = false;
  if (!has_request_ || core_wait_due_ == SC_ZERO_TIME) return;
  const sc_time now = kernel_now();
  const sc_time at = std::max(now, request_time_ - core_wait_due_);
  if (at >= request_time_) return;
  core_wait_due_ -= request_time_ - at;
  request_time_ = at;
  wake_at_ = at;
  cpus_->set_runnable(cpu_id_, true);  // only HostCpus calls this
  activations::notify(kick_event_, at - now);
}

void HostThread::run() {
  activations::begin(activations::HostThread);
  for (bool slept = false;;) {
    if (!slept) wait_for_request();
    if (waiting_core_) {  // the drawn wait ended before a core freed
      cpus_->cancel_wait(this);
      waiting_core_ = false;
    }
    core_wait_ += core_wait_due_;
    core_wait_due_ = SC_ZERO_TIME;
    has_request_ = false;
    wake_drawn_ = false;
    if (timer_armed_ && timer_time_ <= kernel_now()) timer_armed_ = false;
    busy_ = true;
    if (cpus_) cpus_->set_runnable(cpu_id_, true);
    ++dispatches_;
    const sc_time start = kernel_now();
    busy_start_ = start;
    if (auto* t = traces::active())
      t->thread_state(params_.trace_id, start.value(), traces::ThreadState::Working);
    if (params_.bql) params_.bql->acquire_mainloop();
    sc_time local = cpu(params_.dispatch_cost);
    if (work_) work_(local);
    slept = end_and_sleep(local);
    if (slept) continue;
    sync(local);
    if (params_.bql) params_.bql->release_mainloop();
    busy_time_ += kernel_now() - busy_start_;
    busy_ = false;
    if (cpus_ && poll_ns_ == SC_ZERO_TIME && !spinning_) cpus_->set_runnable(cpu_id_, false);
    if (auto* t = traces::active())
      t->thread_state(params_.trace_id, kernel_now().value(),
                      spinning_                   ? traces::ThreadState::Working
                      : poll_ns_ != SC_ZERO_TIME ? traces::ThreadState::Polling
                                                 : traces::ThreadState::Sleeping);
  }
}

}  // namespace nvmesim::models
