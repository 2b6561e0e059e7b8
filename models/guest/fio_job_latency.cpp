// The fio job's latency_target search (models/guest/fio_latency_target.h
// has the rule): where fio's do_io calls it, and what it asks of the job.
#include "nvmesim/models/guest/fio_job.h"
#include "nvmesim/models/guest/vcpu.h"

using namespace sc_core;

namespace nvmesim::models {

namespace {
uint64_t us_since(const sc_time& t, const sc_time& start) { return (t - start).value() / 1000000; }
}  // namespace

// lat_target_init, at the job's start (backend.c thread_main).
void FioJob::lat_start() {
  lat_target_.setup(params_.latency_target.value() / 1000, params_.latency_window.value() / 1000000,
                    params_.latency_percentile, params_.latency_run, params_.iodepth, 0);
  lat_quiesce_ = false;
  stats_.latency_target_depth.reset();
  stats_.latency_target_depth += depth_limit();
}

void FioJob::lat_completed(uint64_t lat_ns) {
  const FioLatencyTarget::Action a = lat_target_.completed(lat_ns);
  if (a == FioLatencyTarget::Action::Quiesce) lat_quiesce_ = true;
}

// do_io's lat_target_check, once an I/O has completed (fio skips it until
// bytes_done is non-zero). A lower depth drains the queue first
// (__lat_target_failed's io_u_quiesce: no storm of failures from I/Os
// queued at the higher depth), the window starting after it.
void FioJob::lat_check() {
  if (!lat_target_.enabled() || !stats_.ios) return;
  using A = FioLatencyTarget::Action;
  if (lat_quiesce_) {  // a latency_percentile=100 failure during the reap
    lat_quiesce_ = false;
    quiesce();
    lat_target_.new_cycle(us_since(cpu_.current_time(), stats_.start));
  }
  const A a = lat_target_.check(us_since(cpu_.current_time(), stats_.start));
  if (a == A::Quiesce || a == A::FinalRun) {
    quiesce();
    lat_target_.new_cycle(us_since(cpu_.current_time(), stats_.start));
  }
  stats_.latency_target_windows.reset();
  stats_.latency_target_windows += lat_target_.windows();
  stats_.latency_target_depth.reset();
  stats_.latency_target_depth += lat_target_.depth();
}

}  // namespace nvmesim::models
