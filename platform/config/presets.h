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
// Applies preset `names` (one name, or several separated by commas, applied
// in order) to `config`; throws ConfigError naming the choices.
void apply_preset(const std::string& names, Config& config);
std::string list_presets_text();
// The calibrations of presets `names` (comma-separated), in order.
std::vector<std::string> preset_calibrations(const std::string& names);

}  // namespace nvmesim::platform
