// Running sweep points locally: each point is its own nvmesim process (SystemC
// elaborates once per process), up to `jobs` at a time (fork/exec + waitpid).
// A point's output goes to DIR/points/<id>.json, .err and .rc (its exit
// status), the same files an emitted Slurm or GNU parallel job writes.
#pragma once

#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "nvmesim/platform/sweep/sweep_grid.h"
#include "nvmesim/platform/sweep/sweep_output.h"

namespace nvmesim::platform::sweep {

// exe, the fixed options, --name=value per axis, --output-format=json and
// --seed=<point seed> (unless an axis is the seed).
std::vector<std::string> point_argv(const std::string& exe, const std::vector<std::string>& fixed,
                                    const Point& point);

// The path of the running executable (/proc/self/exe).
std::string self_exe();

struct RunnerOptions {
  std::string exe;
  std::vector<std::string> fixed;
  std::string dir;    // DIR; point files go to DIR/points
  unsigned jobs = 1;  // parallel workers
  size_t total = 0;   // points in the whole sweep (for progress; resumed ones count as done)
};

// Runs `todo` and calls `done` with each record as its process ends
// (completion order). Progress on `err`: one line per finished point, or one
// line rewritten in place when `err_is_tty`.
void run_points(const std::vector<Point>& todo, const RunnerOptions& options, std::ostream& err,
                bool err_is_tty, const std::function<void(const Record&)>& done);

// The record of point `id` from DIR/points/<id>.{json,err,rc}; false if the
// .rc file (written last) does not exist yet.
bool record_from_files(const std::string& dir, const Point& point, Record& record);

}  // namespace nvmesim::platform::sweep
