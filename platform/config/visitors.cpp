#include "nvmesim/platform/config/visitors.h"

namespace nvmesim::platform {

std::string full_param_name(const char* prefix, const char* name) {
  const std::string n = name;
  if (*prefix == '\0' || n.find('.') != std::string::npos) return n;
  return std::string(prefix) + "." + n;
}

void ParamSpecBuilder::add(const char* name, ParamKind kind, const char* def, const char* unit,
                           double min, double max, std::vector<std::string> choices, const char* help,
                           ParamOptions options, std::string (*check)(const std::string&)) {
  registry_.add({full_param_name(prefix_, name), kind, def, unit, min, max, std::move(choices), help,
                 options.count_suffixes, options.bare_ns, options.alias, check, options.min_nonzero});
}

}  // namespace nvmesim::platform
