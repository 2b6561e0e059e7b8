// What a results column is called on a plot or a slide: a label and a unit
// for every key of a run's JSON (the definitions of docs/metrics.md) and for
// every parameter (its --list-params unit). "per_io.sq_mmio" ->
// {"SQ MMIO doorbell writes per I/O", ""}, "lat_ns.mean" -> {"latency, mean", "ns"}.
#pragma once

#include <string>

namespace nvmesim::platform {

struct MetricLabel {
  std::string label;  // words, no key
  std::string unit;   // "" when the figure is a pure number, a ratio or a fraction
};

// Unknown columns get their own name and no unit.
MetricLabel metric_label(const std::string& column);

}  // namespace nvmesim::platform
