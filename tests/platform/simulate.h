// One whole-platform run from parameter settings, for tests whose process
// runs a single System (SystemC elaborates once per process).
#pragma once

#include <utility>
#include <vector>

#include "nvmesim/platform/config/params.h"
#include "nvmesim/platform/system/system.h"

namespace nvmesim::test {

inline platform::RunResults simulate(const std::vector<std::pair<const char*, const char*>>& settings) {
  platform::Config c;
  for (const auto& [k, v] : settings) c.set(k, v);
  c.validate_all();
  platform::System system(c);
  return system.run();
}

}  // namespace nvmesim::test
