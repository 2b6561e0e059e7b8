// The reference table of every statistic (docs/metrics.md, "Statistics"):
// one row per stat of a statistics tree, instance numbers written as <N>
// ("vcpu<N>.ios"), so the docs are checked against the groups themselves.
#pragma once

#include <string>

#include "nvmesim/firmware/sim/statistics.h"

namespace nvmesim::platform::report {

// Markdown rows "| `group.stat` | unit | description |", in tree order, each
// (normalised) name once.
std::string stats_table(const stats::GroupValues& tree);

}  // namespace nvmesim::platform::report
