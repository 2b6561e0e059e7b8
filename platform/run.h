// Running an experiment: build the platform from a configuration, simulate,
// and write the results.
#pragma once

#include <iosfwd>
#include <string>

namespace nvmesim::platform {

class Config;

struct RunOptions {
  std::string output_format = "normal";  // normal | json
  std::string output_file;               // empty: standard output
  bool host_stats = false;               // add wall time, peak RSS, I/Os per wall second
  bool default_experiment = false;       // no experiment options given: run the default comparison
};

// Runs the configured experiment and writes its results to `out`. Returns
// the process exit code (0 on success).
int run_experiment(const Config& config, const RunOptions& options, std::ostream& out);

}  // namespace nvmesim::platform
