// Named machines and device mechanisms: sets of parameter values, each with
// its public source.
// `--preset NAME` applies one before config files and options, which
// override it.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace nvmesim::platform {

class Config;

struct Preset {
  std::string name;
  std::string description;
  std::string source;  // where the figures come from
  std::vector<std::pair<std::string, std::string>> values;
  // Costs `nvmesim validate` fits on a reference's iodepth=1 rows with this
  // preset (PARAM or PARAM@ROWS, platform/validate/validate.h); may be empty.
  std::vector<std::string> calibrate = {};
};

const std::vector<Preset>& presets();
// What the command runs when no --preset is given: the KVM model with the
// NVMe emulation of QEMU 7.2 (whose hw/nvme/ctrl.c doorbell, bottom-half and
// EventIdx handling, ioeventfd off by default and MSI by KVM_SIGNAL_MSI, are
// still those of current QEMU). `--preset=none` keeps the parameters' own
// defaults (the components' Params).
inline constexpr char kDefaultPresets[] = "kvm,qemu-7.2";
// Applies preset `names` (one name, or several separated by commas, applied
// in order) to `config`; "none" alone applies nothing; throws ConfigError
// naming the choices.
void apply_preset(const std::string& names, Config& config);
// The presets under a configuration: `names` applied in order, each value
// only where nothing else set the parameter (a value the user set equal to
// the preset's counts as the preset's, so a replayed dump reads the same).
void apply_preset_under(const std::string& names, Config& config);
// The report header's line naming the presets a run is built on ("model:
// --preset=kvm,qemu-7.2\n"), "" for none.
std::string model_line(const Config& config);
// "" when `names` is "none" or a comma-separated list of known presets, else
// what is wrong (the --preset parameter's check).
std::string preset_names_problem(const std::string& names);
std::string list_presets_text();
// The calibrations of presets `names` (comma-separated), in order.
std::vector<std::string> preset_calibrations(const std::string& names);

}  // namespace nvmesim::platform
