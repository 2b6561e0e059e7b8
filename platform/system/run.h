// Running an experiment: build the platform from a configuration, simulate,
// and write the results.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace nvmesim::platform {

class Config;
struct FioJobs;

struct RunOptions {
  std::string output_format = "normal";  // normal | json | json+
  std::string output_file;               // empty: standard output
  bool host_stats = false;               // add wall time, peak RSS, I/Os per wall second
  bool fail_on_stall = false;            // a stalled run (the watchdog's report) exits with 3
  bool default_experiment = false;       // nvme.dbbuf not set: run the comparison (off and spec)
  unsigned repeat = 0;                   // --repeat N (>= 2): seeds seed..seed+N-1 (platform/system/repeat.h)
  std::shared_ptr<const FioJobs> fio;    // --job: the job sections (names, per-vCPU workloads)
  std::vector<std::string> notices;      // printed to standard error before the run
  // Traces (traces/README.md): files, window, signal patterns.
  std::string vcd_file, timeline_file;   // empty: not written
  uint64_t trace_start_ps = 0, trace_stop_ps = UINT64_MAX;
  std::vector<std::string> trace_signals;
};

// What a run in a child process sends back besides its JSON: its derived
// figures (platform/report/derived_figures.h, read by key), its latency
// percentiles and its outcome. Plain data: it crosses a pipe.
struct RunSummary {
  static constexpr size_t kMaxFigures = 192;
  double figures[kMaxFigures];  // by the figure's row in figures::all(); an array's figure: NaN
  uint64_t p50, p99;            // fio's lat percentiles
  bool ok, stalled, dbbuf_active, interrupted, device_needs_reset;
  int interrupt_signal;  // the signal that cut the run short (interrupted), else 0
  char headline[512];  // run_headline(), cut to fit; "" for an ok run
  // The run's figure of `key` ("iops", "per_io.sq_mmio"); NaN when
  // undefined (a hit rate without the buffer). Throws std::out_of_range for
  // a key the table lacks.
  double figure(const std::string& key) const;
};

// Simulates `config` in a child process (SystemC elaborates once per
// process, so a process can run several configurations this way). Fills
// `summary` and `json` (the run's JSON results); false with `error` set
// when the child failed.
bool run_in_child(const Config& config, bool host_stats, RunSummary& summary, std::string& json,
                  std::string& error);

// What else a child run takes and gives back: the job file's sections, and
// (json+) the run's fio "jobs" entries with this groupid and these options
// added to their "job options", each written at nesting level 2. Returns 0,
// 2 when the assembled system refused the configuration (the child printed
// the one-line error), 1 with `error` set when the child failed.
struct ChildRun {
  bool host_stats = false;
  const FioJobs* fio = nullptr;
  bool json_plus = false;
  int groupid = 0;
  std::vector<std::pair<std::string, std::string>> extra_job_options;
  unsigned json_level = 2;  // the nesting level the run's JSON is written at
};
int run_in_child(const Config& config, const ChildRun& request, RunSummary& summary, std::string& json,
                 std::vector<std::string>& json_plus_jobs, std::string& error);

// The label of the progress line (platform/system/progress.h) of the child
// runs started next ("dbbuf=off", "seed=3"); "" for none.
void set_progress_label(const std::string& label);

// Runs the configured experiment and writes its results to `out`, or to
// options.output_file when one is given. Every output file (--output, --vcd,
// --timeline) is written under a temporary name and renamed into place only
// once complete, so a refused or failed run leaves existing files untouched.
// Returns the process exit code: 0 success, 1 internal error or failed
// bring-up, 2 usage, 3 stalled with --fail-on-stall, 4 I/Os failed (error
// status or verification), 130/143 interrupted by SIGINT/SIGTERM.
int run_experiment(const Config& config, const RunOptions& options, std::ostream& out);

}  // namespace nvmesim::platform
