// A host thread that runs device emulation (QEMU's main loop or an
// iothread): it sleeps until kicked, starts after a dispatch latency when it
// was asleep (at once when it is running or polling), runs the work until
// none is left, then busy-polls for a while before sleeping again, with
// QEMU's adaptive polling window (poll-max-ns, poll-grow, poll-shrink).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>
#include <systemc>

#include "nvmesim/firmware/sim/statistics.h"
#include "nvmesim/models/host/host_cpus.h"
#include "nvmesim/models/host/wakeup_distribution.h"
#include "nvmesim/models/sim/kernel_time.h"
#include "nvmesim/models/sim/stat_time.h"

namespace nvmesim::models {

class BigLock;

class HostThread : public sc_core::sc_module, public CoreWaiter {
 public:
  // The work: runs until nothing is left, adding the CPU time it spends to
  // `local` (an offset from kernel_now()); it may sync with sync().
  using Work = std::function<void(sc_core::sc_time& local)>;

  // hv.dispatch_* and the iothreads' polling, visited by HvParams
  // (platform/config/hv_params.h); the rest System sets per thread.
  struct Params {
    // Measured: a sleeping thread's wake-up delay is one draw per sleep from
    // the measured tables at the sleep's idle time (wakeup_distribution.h),
    // in place of dispatch_latency + dispatch_jitter. The application's
    // default (hv.wakeup); a bare model keeps the fixed delays it is given.
    WakeupModel wakeup = WakeupModel::Fixed;
    sc_core::sc_time dispatch_latency;  // asleep -> running (hv.wakeup=fixed)
    // Mean of an exponentially distributed extra wake-up delay (0: none): a
    // stand-in for the scheduler and lock waits a woken thread meets on a
    // busy host, which the model does not represent one by one.
    sc_core::sc_time dispatch_jitter;
    // A share of the wake-ups of a sleeping thread stall, each for a time
    // drawn uniformly from 0 to dispatch_stall_max: the host's scheduler (or
    // the hypervisor under it) keeps the woken thread off a core for up to a
    // time slice. Measured in a real QEMU with validation/qemu/trace_timing.py.
    double dispatch_stall_share = 0;
    sc_core::sc_time dispatch_stall_max;
    uint64_t jitter_seed = 1;  // deterministic: same seed, same delays
    sc_core::sc_time dispatch_cost;  // CPU time per dispatch (loop overhead)
    sc_core::sc_time poll_max;       // 0: never poll
    unsigned poll_grow{};      // QEMU: 0 means 2
    unsigned poll_shrink{};    // QEMU: 0 means drop to 0
    unsigned trace_id = 0;     // its index in traces
    BigLock* bql = nullptr;    // the main loop runs its work under QEMU's global lock
    // A dispatch may end ahead of the kernel, going to sleep at once when
    // nothing else is due before its end (System: with one vCPU; see run()).
    bool end_ahead = false;
  };

  HostThread(sc_core::sc_module_name name, const Params& params, HostCpus* cpus = nullptr);

  void set_work(Work work) { work_ = std::move(work); }
  // An AioContext poll handler's io_poll_begin / io_poll_end (util/aio-posix.c
  // poll_set_started): `begin` runs when the thread starts polling, `end`
  // when it stops before sleeping; `end` then polls once more
  // (poll_set_started's "Poll one last time" io_poll) and returns true when
  // it found work, which the thread then runs without sleeping.
  void add_poll_handler(std::function<void()> begin, std::function<bool()> end) {
    poll_handlers_.push_back({std::move(begin), std::move(end)});
  }
  // Between a poll_begin and its poll_end (QEMU's ctx->poll_started).
  bool poll_started() const { return poll_started_; }
  // One draw of the extra wake-up delay (SC_ZERO_TIME without jitter).
  sc_core::sc_time jitter_draw();
  // One draw of a wake-up stall: 0, or with probability dispatch_stall_share
  // a time uniform in [0, dispatch_stall_max). Draws nothing without stalls,
  // so runs without them keep their random sequence.
  sc_core::sc_time stall_draw();
  // Ask for the work to run `delay` after kernel_now(). While the thread
  // sleeps this adds the dispatch latency; requests coalesce to the earliest.
  void kick(const sc_core::sc_time& delay);
  // A timer (QEMU timer_mod): the work runs `delay` from now; a later
  // arming replaces an earlier one. Arming it wakes a sleeping thread, which
  // then runs no sooner than its wake-up delay (dispatch latency and jitter).
  // `notified`: when, from now, the arming happens (the caller's local offset).
  void arm_timer(const sc_core::sc_time& delay, const sc_core::sc_time& notified = sc_core::SC_ZERO_TIME);
  void cancel_timer() { timer_armed_ = false; }  // QEMU timer_del
  // A thread whose poll always finds a readable fd (Ming Lin's uncleared
  // eventfd): it never sleeps, each loop iteration is a dispatch (its cost
  // must not be zero) and it keeps its core. Cleared by a controller reset.
  void set_spinning(bool on);
  bool spinning() const { return spinning_; }
  // Bring `local` to zero by letting simulated time pass (an ordering point).
  static void sync(sc_core::sc_time& local);

  bool busy() const { return busy_; }
  // Work is due or running (a request, an armed timer, a dispatch that is
  // not a spin): time passing will make it progress. A thread asleep,
  // polling or spinning on a stuck fd waits for someone else.
  bool work_pending() const { return has_request_ || timer_armed_ || (busy_ && !spinning_); }
  bool polling() const { return polling_; }
  uint64_t dispatches() const { return dispatches_; }
  uint64_t wakeups_from_sleep() const { return sleep_wakeups_; }
  uint64_t wakeups_while_polling() const { return poll_hits_; }
  sc_core::sc_time busy_time() const { return busy_time_; }
  // Work that runs long (a device's busy poll, virtio.busy_poll) books the
  // time it has run so far, so figures read meanwhile include it; `polled`
  // of it was the device busy-polling, booked as the thread's polling (the
  // thread is as occupied, and its utilisation shows it as polling).
  void account_busy(const sc_core::sc_time& polled = sc_core::SC_ZERO_TIME);
  sc_core::sc_time poll_time() const { return poll_time_; }
  sc_core::sc_time poll_window() const { return poll_ns_; }
  const Params& params() const { return params_; }
  stats::Group& stats() { return stats_; }
  // CPU work of `t` on this thread, stretched when the host's cores are shared.
  sc_core::sc_time cpu(const sc_core::sc_time& t) const;
  // HostCpus: a core freed while this woken thread waited for one.
  void core_freed() override;

 private:
  void run();
  void wait_for_request();
  bool end_and_sleep(const sc_core::sc_time& local);
  void sleep_until_due();
  void adjust_polling(const sc_core::sc_time& block);
  bool set_poll_started(bool started);  // true: a poll-end re-check found work

  struct PollHandler {
    std::function<void()> begin;
    std::function<bool()> end;
  };
  std::vector<PollHandler> poll_handlers_;
  bool poll_started_ = false;

  Params params_;
  HostCpus* cpus_;
  unsigned cpu_id_ = 0;
  Work work_;
  sc_core::sc_event kick_event_;
  bool has_request_ = false;
  sc_core::sc_time request_time_;  // absolute
  bool timer_armed_ = false;
  sc_core::sc_time timer_time_;    // absolute
  bool busy_ = false, polling_ = false, spinning_ = false;
  sc_core::sc_time busy_start_;     // absolute: busy time is booked from here
  sc_core::sc_time poll_ns_;        // the current adaptive polling window
  stats::Group stats_;  // "mainloop", "iothread0", ...
  stats::Scalar dispatches_{stats_, "dispatches", stats::Unit::Count, "times the thread started its work"};
  stats::Scalar sleep_wakeups_{stats_, "wakeups_from_sleep", stats::Unit::Count,
                               "requests served after sleeping (with the dispatch latency)"};
  stats::Scalar poll_hits_{stats_, "wakeups_while_polling", stats::Unit::Count,
                           "requests served while busy-polling"};
  TimeStat busy_time_{stats_, "busy_time", "time running the work"};
  TimeStat poll_time_{stats_, "poll_time", "time busy-polling"};
  stats::Scalar core_waits_{stats_, "core_waits", stats::Unit::Count,
                            "wake-ups that found every host core taken and waited for one (host.wakeup_wait)"};
  TimeStat core_wait_{stats_, "core_wait_time", "time waiting for a host core after a wake-up (host.wakeup_wait)"};
  bool waiting_core_ = false;      // in HostCpus' waiters
  sc_core::sc_time core_wait_due_;  // the wait in this sleep's wake-up, booked when it wakes
  stats::Scalar stalls_{stats_, "wakeup_stalls", stats::Unit::Count,
                        "wake-ups from sleep that stalled (hv.dispatch_stall_share)"};
  TimeStat stall_time_{stats_, "wakeup_stall_time", "time the stalled wake-ups added (hv.dispatch_stall_max)"};
  UniformStream jitter_stream_;
  double next_uniform() { return jitter_stream_.next(); }  // (0, 1]
  // This sleep's wake-up delay beyond the fixed dispatch latency: the
  // jitter (fixed), or the whole measured draw at the idle time the
  // notification at `notified` from now ends (measured).
  sc_core::sc_time wake_draw(const sc_core::sc_time& notified);
  sc_core::sc_time fixed_latency() const {
    return params_.wakeup == WakeupModel::Fixed ? params_.dispatch_latency : sc_core::SC_ZERO_TIME;
  }
  sc_core::sc_time sleep_start_;    // when the thread last went to sleep (absolute)
  sc_core::sc_time sleep_jitter_;  // this sleep's extra wake-up delay
  bool wake_drawn_ = false;         // this sleep's wake-up delay is drawn (by a kick or a timer's arming)
  sc_core::sc_time wake_at_;        // when this sleep's first notification wakes the thread (absolute)
};

}  // namespace nvmesim::models
