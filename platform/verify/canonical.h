// Which settings the model can observe. Many combinations of the
// simulator's parameters resolve to the same model (every EventIdx policy
// with the doorbell buffer off, the "auto" values, the vendor and the spec
// buffer on an I/O queue): `nvmesim verify` searches each model once and
// gives its result to every combination that resolves to it.
#pragma once

#include <string>

#include "nvmesim/platform/verify/model.h"

namespace nvmesim::platform::verify {

// `c` with every setting the model never reads replaced by a fixed value:
// the doorbell buffer reduced to what the device covers and what the driver
// shadows, the EventIdx policies, the MMIO value handling and the device
// order dropped when the device does not cover the queue, the driver's
// barrier and need_event form dropped when it does not publish through the
// shadow. Equal canonical forms give the same states, transitions and
// counterexample.
ModelConfig canonical(const ModelConfig& c);

// The canonical form as text, for lookups (every field the model reads).
std::string model_key(const ModelConfig& c);

}  // namespace nvmesim::platform::verify
