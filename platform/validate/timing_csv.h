// Wake-up timing of the real system's device thread, measured at iodepth 1
// with QEMU's trace events (validation/qemu/run.sh with TRACE_TIMING=1, then
// validation/qemu/trace_timing.py --csv; validation/qemu/README.md defines
// the columns). `nvmesim validate --timing FILE` gives each reference row the
// figures measured for its numjobs and dbbuf, as measured inputs rather than
// fitted costs: the stalls (hv.dispatch_stall_share, hv.dispatch_stall_max)
// and, where the file has them, the main loop's CPU time per command and per
// completion posted (nvme.cmd_cost, nvme.cqe_cost).
#pragma once

#include <string>
#include <vector>

#include "nvmesim/platform/validate/reference_csv.h"

namespace nvmesim::platform {

struct TimingRow {
  unsigned line = 0;
  unsigned numjobs = 0;
  bool dbbuf = false;
  double wakeups = 0;          // doorbell wake-ups measured
  double reaction_p50_ns = 0;  // doorbell write -> first command fetched, median
  double stall_share = 0;      // share of the wake-ups later than the stall threshold
  double stall_max_ns = 0;     // twice their mean delay beyond the median (uniform stalls)
  // Optional (NaN when the file lacks them): the main loop from fetching a
  // command to queueing its completion, and from a queued completion to its
  // MSI-X, medians. It works through both without sleeping.
  double command_p50_ns = 0;
  double post_p50_ns = 0;
};

// A model parameter a timing line sets: a time in ns or a plain number.
struct MeasuredParam {
  std::string name;
  double value;
  bool is_time;
  std::string config_text() const;  // as Config::set takes it
};
// What a timing line sets, in the order validate prints it: the one list
// that row configurations, the refusal of --set and the output read.
std::vector<MeasuredParam> measured_params(const TimingRow& t);

// Throws ConfigError (file, line, column) on a missing column, a bad value,
// a line not measured at iodepth 1, a share outside 0..1 or a duplicate.
std::vector<TimingRow> read_timing_csv(const std::string& path);

// The timing line for a reference row (same numjobs and dbbuf), or null.
const TimingRow* timing_for(const std::vector<TimingRow>& timing, const ReferenceRow& row);

}  // namespace nvmesim::platform
