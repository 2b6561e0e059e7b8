// --repeat N: the experiment (the default comparison, or one run) for seeds
// seed, seed+1, ..., seed+N-1, one after another, each run in a child
// process (run_in_child: SystemC elaborates once per process), then each
// figure's mean, 95% Student-t half-width, min and max over seed values
// (platform/report/seed_interval.h). docs/repeat.md describes the output.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>

namespace nvmesim::platform {

class Config;
struct RunOptions;

// --repeat's range: two seeds give the first interval; the cap keeps a typo
// (--repeat=10000) from queueing hours of runs.
constexpr unsigned kRepeatMin = 2, kRepeatMax = 1000;

// --repeat's value: "" and `n` set, or the one-line error naming the option
// and its range.
std::string parse_repeat(const std::string& text, unsigned& n);

// What the command line must not combine with --repeat (traces and fio's
// logs follow one run, json+ is one run's fio layout, a seed past the
// largest): "" or the one-line error.
std::string repeat_problem(const Config& config, const RunOptions& options);

struct RepeatOutcome {
  int code;      // the process exit status (run.h's run_experiment)
  bool written;  // the report was written to `out`
};

// Runs options.repeat seeds of the experiment and writes the report.
RepeatOutcome run_repeat(const Config& config, const RunOptions& options, std::ostream& out);

}  // namespace nvmesim::platform
