// preset: the named presets (platform/config/presets.h) a run is built on.
// The command applies them under everything else the user sets (options,
// --config files), so a dumped configuration names them and replays them.
#pragma once

#include <string>

#include "nvmesim/models/sim/param_visit.h"
#include "nvmesim/platform/config/presets.h"

namespace nvmesim::platform {

struct PresetParams {
  std::string preset;

  static constexpr const char* param_prefix = "";
  template <class V>
  void visit(V& v) {
    v.text(preset, "preset", kDefaultPresets, preset_names_problem,
           "presets the run is built on, comma-separated, applied in order under every other setting "
           "(--list-presets); the default is the KVM model with QEMU 7.2's NVMe emulation; none = the "
           "parameters' own defaults");
  }
};

}  // namespace nvmesim::platform
