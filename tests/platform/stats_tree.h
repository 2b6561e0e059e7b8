// A statistics tree written by hand, for tests that build a RunResults
// without running a System: put_stat(tree, "vcpu0.read_ios", 4).
#pragma once

#include <cstdint>
#include <string>

#include "nvmesim/firmware/sim/statistics.h"

namespace nvmesim::test {

// Sets the scalar at "group.path.stat", making its groups and stat.
inline void put_stat(stats::GroupValues& tree, const std::string& path, uint64_t value,
                     stats::Unit unit = stats::Unit::Count) {
  stats::GroupValues* g = &tree;
  size_t from = 0;
  for (size_t dot; (dot = path.find('.', from)) != std::string::npos; from = dot + 1) {
    const std::string name = path.substr(from, dot - from);
    stats::GroupValues* next = nullptr;
    for (auto& c : g->groups)
      if (c.name == name) next = &c;
    if (!next) {
      g->groups.push_back({name, {}, {}});
      next = &g->groups.back();
    }
    g = next;
  }
  const std::string stat = path.substr(from);
  for (auto& s : g->stats)
    if (s.name == stat) {
      s.entries = {{"", value}};
      return;
    }
  g->stats.push_back({stat, unit, "", {{"", value}}});
}

}  // namespace nvmesim::test
