// fio's latency_target search (io_u.c lat_target_init, lat_target_check,
// lat_target_success, __lat_target_failed, lat_target_failed): the job's
// effective queue depth (td->latency_qd) starts at 1; each latency_window
// the share of the window's completions whose latency was within
// latency_target is compared with latency_percentile. Success doubles the
// depth until a window fails, then bisects between the last good depth
// (latency_qd_low) and the first bad one (latency_qd_high); failure halves
// towards latency_qd_low. When a success leaves the depth unchanged the
// search has converged: one more window at that depth (fio resets its
// statistics then), and the job ends (unless latency_run keeps searching).
//
// The latency judged is fio's total latency (account_io_completion's tnsec:
// io_u->start_time to the reap), not clat. A rule without time passing in
// it: the job (models/guest/fio_job.cpp) quiesces and stops as it says.
#pragma once

#include <cstdint>

namespace nvmesim::models {

class FioLatencyTarget {
 public:
  // What the job must do after a check or a completion.
  enum class Action {
    None,
    Quiesce,   // the depth went down: reap every I/O in flight, then new_cycle
    FinalRun,  // converged: quiesce, then one last window at this depth
    Done,      // the last window ended: the job stops issuing
  };

  // lat_target_init. target_ns 0: no search (the depth is iodepth).
  void setup(uint64_t target_ns, uint64_t window_us, double percentile, bool run, uint32_t iodepth,
             uint64_t now_us) {
    target_ns_ = target_ns;
    window_us_ = window_us;
    percentile_ = percentile;
    run_ = run;
    iodepth_ = iodepth;
    end_run_ = false;
    done_ = false;
    if (target_ns_) {
      qd_ = 1;
      qd_high_ = iodepth;
      qd_low_ = 1;
      stable_ = 0;
      new_cycle(now_us);
    } else {
      qd_ = iodepth;
    }
  }
  bool enabled() const { return target_ns_ != 0; }
  uint32_t depth() const { return qd_; }  // td->latency_qd
  uint32_t depth_low() const { return qd_low_; }
  uint32_t depth_high() const { return qd_high_; }
  bool done() const { return done_; }
  bool final_run() const { return end_run_; }
  uint64_t windows() const { return windows_; }  // windows judged so far
  // Set when a 100th-percentile job failed at depth 1 (fio's lat_fatal:
  // the job ends with ETIMEDOUT).
  bool fatal() const { return fatal_; }

  // lat_new_cycle: a window starts now.
  void new_cycle(uint64_t now_us) {
    window_start_us_ = now_us;
    window_ios_ = 0;
    window_failed_ = 0;
  }

  // account_io_completion: an I/O's total latency, at its reap. With
  // latency_percentile=100 one I/O over the target fails the window at once.
  Action completed(uint64_t lat_ns) {
    if (!target_ns_) return Action::None;
    ++window_ios_;
    if (lat_ns <= target_ns_) return Action::None;
    if (percentile_ == 100.0) {
      if (qd_ == 1) {
        fatal_ = true;
        return Action::Done;
      }
      return failed() ? Action::None : Action::Quiesce;
    }
    ++window_failed_;
    return Action::None;
  }

  // lat_target_check, from the job's loop once it has completed an I/O.
  Action check(uint64_t now_us) {
    if (!target_ns_ || done_ || now_us - window_start_us_ < window_us_) return Action::None;
    ++windows_;
    // fio divides by the window's completions; none is 0/0, NaN, which
    // compares false: a failure.
    const bool ok = window_ios_ && double(window_ios_ - window_failed_) / double(window_ios_) * 100.0 >= percentile_;
    if (ok) return success(now_us);
    // At depth 1 fio neither lowers the depth nor starts a new window.
    return failed() ? Action::None : Action::Quiesce;
  }

 private:
  // lat_target_success.
  Action success(uint64_t now_us) {
    const uint32_t qd = qd_;
    qd_low_ = qd_;
    // Stuck one below the failing depth: after 3 successes in a row, try one more.
    if (qd_ + 1 == qd_high_ && ++stable_ >= 3) {
      ++qd_high_;
      stable_ = 0;
    }
    // Doubling until a window fails (qd_high still iodepth), bisecting after.
    qd_ = qd_high_ != iodepth_ ? (qd_ + qd_high_) / 2 : qd_ * 2;
    if (qd_ > iodepth_) qd_ = iodepth_;
    Action a = Action::None;
    if (!run_ && qd_ == qd) {
      if (end_run_) {
        done_ = true;
        a = Action::Done;
      } else {
        end_run_ = true;
        a = Action::FinalRun;
      }
    }
    new_cycle(now_us);
    return a;
  }
  // __lat_target_failed: true at depth 1 (nothing lower to try). Else the
  // depth goes halfway down to latency_qd_low; the job quiesces and calls
  // new_cycle (fio starts the window after its quiesce).
  bool failed() {
    if (qd_ == 1) return true;
    qd_high_ = qd_;
    if (qd_ == qd_low_) --qd_low_;
    qd_ = (qd_ + qd_low_) / 2;
    stable_ = 0;
    return false;
  }

  uint64_t target_ns_ = 0, window_us_ = 0;
  double percentile_ = 100;
  bool run_ = false;
  uint32_t iodepth_ = 1, qd_ = 1, qd_low_ = 1, qd_high_ = 1, stable_ = 0;
  bool end_run_ = false, done_ = false, fatal_ = false;
  uint64_t window_start_us_ = 0, window_ios_ = 0, window_failed_ = 0, windows_ = 0;
};

}  // namespace nvmesim::models
