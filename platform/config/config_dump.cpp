#include "nvmesim/platform/config/config_dump.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "nvmesim/platform/config/user_text.h"

namespace nvmesim::platform {

namespace {

// "hv.exit_mmio" -> {"hv", "exit_mmio"}; "bs" -> {"", "bs"}.
std::pair<std::string, std::string> section_and_key(const std::string& name) {
  const size_t dot = name.find('.');
  if (dot == std::string::npos) return {"", name};
  return {name.substr(0, dot), name.substr(dot + 1)};
}

std::string ini_from_values(const std::vector<std::pair<std::string, std::string>>& values) {
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> by_section;
  for (const auto& [name, value] : values) {
    auto [section, key] = section_and_key(name);
    by_section[section].emplace_back(key, value);
  }
  std::ostringstream o;
  for (const auto& [section, items] : by_section) {
    if (!section.empty()) o << "[" << section << "]\n";
    for (const auto& [key, value] : items) o << key << " = " << value << "\n";
  }
  return o.str();
}

}  // namespace

std::string config_ini_text(const Config& config, const std::string& header) {
  std::ostringstream o;
  std::istringstream lines(header);
  for (std::string line; std::getline(lines, line);) o << "# " << line << "\n";
  o << "# Active lines are what the run set (its options, --config files and\n"
       "# presets, expanded); ';' lines are parameters it left at their default.\n";
  // fio's workload names first (no section), then by component.
  std::vector<std::pair<std::string, std::string>> values = config.effective();
  std::stable_sort(values.begin(), values.end(), [](const auto& a, const auto& b) {
    return section_and_key(a.first).first < section_and_key(b.first).first;
  });
  std::string section = "-";
  for (const auto& [name, value] : values) {
    auto [sec, key] = section_and_key(name);
    if (sec != section) {
      if (!sec.empty()) o << "\n[" << sec << "]\n";
      section = sec;
    }
    if (config.is_set(name)) o << key << " = " << value << "\n";
    else o << "; " << key << " = " << value << "\n";
  }
  return o.str();
}

bool looks_like_json(const std::string& text) {
  for (char c : text) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') continue;
    return c == '{';
  }
  return false;
}

std::string json_config_as_ini(const std::string& json_text, const std::string& source,
                               const ParamRegistry& registry) {
  const std::string what = "config file " + shown(source);
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::exception& e) {
    throw ConfigError(what + ": not valid JSON (" + std::string(e.what()).substr(0, 120) + ")");
  }
  if (!doc.is_object()) throw ConfigError(what + ": a JSON document must be an object");
  nlohmann::json config;
  bool comparison = false;
  if (doc.contains("runs")) {
    // The comparison: both runs share everything but nvme.dbbuf.
    const nlohmann::json& runs = doc["runs"];  // {"off": {...}, "spec": {...}}
    if (!runs.is_object() || runs.empty() || !runs.begin()->is_object() || !runs.begin()->contains("config"))
      throw ConfigError(what + ": \"runs\" holds no run with a \"config\" object");
    config = (*runs.begin())["config"];
    for (const nlohmann::json& run : runs) {
      if (!run.is_object() || !run.contains("config") || !run["config"].is_object())
        throw ConfigError(what + ": a run in \"runs\" has no \"config\" object");
      nlohmann::json a = config, b = run["config"];
      a.erase("nvme.dbbuf");
      b.erase("nvme.dbbuf");
      if (a != b) throw ConfigError(what + ": its runs differ in more than nvme.dbbuf (not a comparison of nvmesim's)");
    }
    comparison = true;
  } else if (doc.contains("config")) {
    config = doc["config"];
  } else {
    config = doc;  // the "config" object alone
  }
  if (!config.is_object()) throw ConfigError(what + ": \"config\" must be an object of parameter names and values");
  const Config defaults(registry);
  std::vector<std::pair<std::string, std::string>> values;
  for (const auto& [name, value] : config.items()) {
    if (!registry.find(name)) throw ConfigError(what + ": unknown key " + quoted(name) + " (see --list-params)");
    if (!value.is_string())
      throw ConfigError(what + ": " + quoted(name) + " must be a string, as the JSON's \"config\" writes it");
    const std::string text = value.get<std::string>();
    if (name == "nvme.dbbuf") {
      if (!comparison) values.emplace_back(name, text);
      continue;
    }
    Config probe(registry);
    try {
      probe.set(name, text);
    } catch (const ConfigError& e) {
      throw ConfigError(what + ": " + e.what());
    }
    // number_ios always: left unset beside a set size, size alone would set it.
    if (probe.text(name) != defaults.text(name) || name == "number_ios") values.emplace_back(name, text);
  }
  return ini_from_values(values);
}

}  // namespace nvmesim::platform
