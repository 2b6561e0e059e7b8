// Joining sweep outputs: records from local sweeps (DIR/results.jsonl, and
// the .partial file an interrupted sweep leaves) and from emitted jobs
// (DIR/points/<id>.* of the grid in DIR/sweep.json), laid out in grid order.
#pragma once

#include <string>
#include <vector>

#include "nvmesim/platform/sweep/sweep_output.h"

namespace nvmesim::platform::sweep {

// Every record found in `dir` (none if it holds no sweep output).
std::vector<Record> collect_records(const std::string& dir);

// Per point in grid order: a record with the same values (any axis order)
// and seed, status ok if there is one, else a failed one; else a "missing"
// record ("no result for this point in the merged directories").
std::vector<Record> assemble(const std::vector<Point>& points, const std::vector<Record>& found);

// The grid of several manifests: the axes of the first, each with the union
// of the values in the order first seen. Throws UsageError when their axis
// names differ.
std::vector<Axis> union_axes(const std::vector<std::pair<std::string, Manifest>>& manifests);

}  // namespace nvmesim::platform::sweep
