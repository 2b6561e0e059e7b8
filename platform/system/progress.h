// fio-style progress on a terminal: a run longer than about two seconds of
// wall time shows, on standard error, the I/Os done, the rate and the time
// left, rewritten in place; nothing when standard error is not a terminal
// (files, pipes, tests, sweeps) and nothing for a short run.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace nvmesim::platform {

class Progress {
 public:
  // `total_ios`: the run's I/Os (0: it runs for a simulated time instead,
  // `runtime_ns`). `label` prefixes the line ("dbbuf=off", or empty).
  // `quiet_s`: nothing is shown before this much wall time.
  Progress(uint64_t total_ios, double runtime_ns, std::string label, std::FILE* out = stderr,
           double quiet_s = 2.0);
  ~Progress();  // clears the line it wrote
  // Standard error is a terminal and NVMESIM_NO_PROGRESS is unset.
  static bool wanted();

  void update(uint64_t ios, double sim_ns);
  // The text for these figures after `wall_s` seconds (for tests).
  std::string line(uint64_t ios, double sim_ns, double wall_s) const;

 private:
  uint64_t total_ios_;
  double runtime_ns_;
  std::string label_;
  std::FILE* out_;
  std::chrono::steady_clock::time_point start_;
  double quiet_s_;
  double last_print_s_ = -1;
  bool printed_ = false;
};

}  // namespace nvmesim::platform
