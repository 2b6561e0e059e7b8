// Model Params at the configuration's defaults, for models built without a
// command line: the visit lines are the one place a default lives
// (models/sim/param_visit.h), so the tests read them from there.
#pragma once

#include "nvmesim/models/pcie/pcie_link.h"
#include "nvmesim/platform/config/visitors.h"

namespace nvmesim::test {

using platform::default_params;

// pcie.* at its defaults, with pcie.mode=link: gen3 x4, MPS 256, MRRS 512,
// 24 bytes per TLP, 700 ns read round trip.
inline models::PcieLinkParams default_link() {
  models::PcieLinkParams p = default_params<models::PcieLinkParams>();
  p.mode = models::PcieMode::Link;
  return p;
}

}  // namespace nvmesim::test
