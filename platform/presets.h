// Named machines from the seeds: sets of parameter values with their source.
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
};

const std::vector<Preset>& presets();
// Applies preset `name` to `config`; throws ConfigError naming the choices.
void apply_preset(const std::string& name, Config& config);
std::string list_presets_text();

}  // namespace nvmesim::platform
