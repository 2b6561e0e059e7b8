// Running an experiment: build the platform from a configuration, simulate,
// and write the results.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

namespace nvmesim::platform {

class Config;
struct FioJobs;

struct RunOptions {
  std::string output_format = "normal";  // normal | json | json+
  std::string output_file;               // empty: standard output
  bool host_stats = false;               // add wall time, peak RSS, I/Os per wall second
  bool default_experiment = false;       // no experiment options given: run the default comparison
  std::shared_ptr<const FioJobs> fio;    // --job: the job sections (names, per-vCPU workloads)
  std::vector<std::string> notices;      // printed to standard error before the run
  // Traces (traces/README.md): files, window, signal patterns.
  std::string vcd_file, timeline_file;   // empty: not written
  uint64_t trace_start_ps = 0, trace_stop_ps = UINT64_MAX;
  std::vector<std::string> trace_signals;
};

// Runs the configured experiment and writes its results to `out`. Returns
// the process exit code (0 on success).
int run_experiment(const Config& config, const RunOptions& options, std::ostream& out);

}  // namespace nvmesim::platform
