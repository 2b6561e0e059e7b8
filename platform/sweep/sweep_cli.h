// `nvmesim sweep`: runs a grid of experiments, each point its own nvmesim
// process, and writes DIR/results.csv and DIR/results.jsonl (see
// sweep_text() for the options, sweep_grid.h for the order and the per-point seeds).
#pragma once

#include <iosfwd>
#include <string>

namespace nvmesim::platform {

// argv[0] is "sweep". Returns 0 when every point succeeded, 1 when a point
// failed (or a plot could not be drawn), 2 on a usage error (one line on `err`).
int run_sweep_command(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

std::string sweep_help_text();

}  // namespace nvmesim::platform
