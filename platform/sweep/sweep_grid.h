// Sweep grids: axes from `--grid name=v1,v2,...` or `--grid name=start:stop:step`
// (or a sweep file), expanded into points in grid order, each with its seed.
//
// Grid order: the first axis is the outermost loop, the last one varies
// fastest (`--grid a=1,2 --grid b=x,y` -> a=1 b=x, a=1 b=y, a=2 b=x, a=2 b=y).
//
// Point seed (the run's --seed): FNV-1a 64 over the text
//   <sweep seed in decimal> then, per axis in order, "\n<name>=<value>"
// shifted right by one bit (so it fits nvmesim's 0..2^63-1 seed range).
// A grid axis named `seed` gives the point's seed directly instead.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "nvmesim/platform/config/params.h"

namespace nvmesim::platform::sweep {

// A usage error: one line naming the option, exit status 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Axis {
  std::string name;
  std::vector<std::string> values;
};

using PointValues = std::vector<std::pair<std::string, std::string>>;  // axis order

struct Point {
  size_t id = 0;  // index in grid order
  PointValues values;
  uint64_t seed = 0;
};

// "name=v1,v2,..." or "name=start:stop:step". The name must be a parameter
// of `registry`. Ranges: start, stop and step are decimal numbers with the
// same unit suffix ("2000cyc:10000cyc:2000cyc", "4k:16k:4k", "1:8:1");
// stop >= start, step > 0; the values are start + k*step <= stop, computed
// exactly in decimal and written with the same suffix.
Axis parse_grid_arg(const std::string& arg, const ParamRegistry& registry = ParamRegistry::builtin());
std::vector<std::string> expand_range(const std::string& name, const std::string& range);

// A sweep file: one axis per line in the --grid syntax ("iodepth = 1,2,4";
// spaces around '=' and ',' are ignored), lines starting with "--" are fixed
// nvmesim options ("--number_ios=300"), '#' starts a comment.
void load_sweep_file(const std::string& path, std::vector<Axis>& axes,
                     std::vector<std::string>& fixed,
                     const ParamRegistry& registry = ParamRegistry::builtin());

// Refuses (UsageError, one line naming both options) two axes over one
// parameter in any spelling (a name and its alias: hv.poll_max and
// hv.poll_max_ns), and a fixed option (--NAME=V or --NAME V) that sets the
// parameter of an axis: the later setting on a point's command line would
// make the other inert.
void check_one_setting_per_parameter(const std::vector<Axis>& axes, const std::vector<std::string>& fixed,
                                     const ParamRegistry& registry = ParamRegistry::builtin());

// Throws UsageError for a repeated axis name.
std::vector<Point> expand_grid(const std::vector<Axis>& axes, uint64_t sweep_seed);
uint64_t point_seed(uint64_t sweep_seed, const PointValues& values);

// "iodepth=1 nvme.dbbuf=off"
std::string point_label(const PointValues& values);

}  // namespace nvmesim::platform::sweep
