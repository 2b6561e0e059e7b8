// The physical range of each cost `nvmesim validate` may fit: where a
// fitted value can lie if the model has the mechanisms the real system has.
// A fit that lands outside means the cost is absorbing something the model
// lacks (the product brief: "A fitted cost that lands outside its physical
// range means a mechanism is missing"). One table, in cost_ranges.cpp, each
// range with its source; validation/published/README.md prints it too.
#pragma once

#include <string>
#include <vector>

namespace nvmesim::platform {

struct CostRange {
  const char* param;     // a time parameter (--list-params)
  double lo_ns, hi_ns;   // both ends inside the range
  const char* source;    // where the ends come from (public source, measurement, or "assumption")
};

// Every documented range, in the order docs print them.
const std::vector<CostRange>& cost_ranges();
// The range of `param`, or nullptr when none is documented.
const CostRange* cost_range(const std::string& param);
// lo_ns <= value_ns <= hi_ns.
bool in_physical_range(const CostRange& range, double value_ns);
// "1us..3.5us".
std::string range_text(const CostRange& range);
// What a report says beside a fitted value: "within its physical range
// 1us..3.5us", "outside its physical range 1us..3.5us" or "no range documented".
std::string range_note(const std::string& param, double value_ns);

}  // namespace nvmesim::platform
