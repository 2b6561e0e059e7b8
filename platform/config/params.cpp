// Parameter registry, typed configuration, unit parsing and INI files.
#include "nvmesim/platform/config/params.h"
#include "nvmesim/platform/config/device_backend.h"
#include "nvmesim/platform/config/input_file.h"
#include "nvmesim/platform/config/user_text.h"
#include "nvmesim/models/guest/fio_options.h"

#include <algorithm>
#include <cerrno>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <istream>
#include <limits>
#include <sstream>

namespace nvmesim::platform {

namespace {

constexpr const char* kTimeUnits[] = {"ns", "us", "ms", "s", "cyc"};
constexpr double kTimeScale[] = {1.0, 1e3, 1e6, 1e9, 0.0};  // cyc: divided by GHz
constexpr int kCyc = 4;
constexpr const char* kTimeUnitList = "ns, us, ms, s or cyc";
constexpr const char* kSizeForm = "a byte count, optionally with k, m, g or t (binary; also KiB, MiB, GiB, TiB)";
constexpr const char* kCpuGhz = "hv.cpu_ghz";

std::string trim(const std::string& s) {
  const char* ws = " \t\r\n";
  size_t b = s.find_first_not_of(ws);
  if (b == std::string::npos) return {};
  size_t e = s.find_last_not_of(ws);
  return s.substr(b, e - b + 1);
}

// Shortest text that reads back as the same double, without an exponent
// below 1e16 ("2.3", "1000", "5000000", "0.0001").
// The shortest text that reads back as v: fixed between 1e-4 and 1e16 (as
// typed: 0.5, 5100), else the shortest round-trip form (1e-300, not 300
// digits of zeros).
std::string shortest(double v) {
  char buf[400];
  const double a = std::fabs(v);
  auto r = a == 0 || (a >= 1e-4 && a < 1e16) ? std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed)
                                             : std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

// "%.6g", for messages.
std::string short6(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string format_int(double v) {
  if (v >= 9.2e18) return std::to_string(std::numeric_limits<int64_t>::max());
  if (v <= -9.2e18) return std::to_string(std::numeric_limits<int64_t>::min());
  return std::to_string(static_cast<int64_t>(v));
}

// Parses a whole decimal number (from_chars: no leading '+', no spaces).
bool parse_double_prefix(const std::string& s, double& out, size_t& used) {
  const char* b = s.data();
  auto r = std::from_chars(b, b + s.size(), out);
  if (r.ec != std::errc() || !std::isfinite(out)) return false;
  used = static_cast<size_t>(r.ptr - b);
  return true;
}

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) out += sep;
    out += v[i];
  }
  return out;
}

bool is_integer_text(const std::string& s) {
  int64_t v;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

std::string out_of_range(const std::string& text, const ParamSpec& spec) {
  return shown(text) + " is out of range (" + format_range(spec) + ")";
}

// A time other than 0 that would round to 0 at the kernel's resolution.
std::string below_resolution(const ParamSpec& spec) {
  return "is below the simulator's time resolution of 1 ps (0, or " +
         format_time_ns(std::max(spec.min, kTimeResolutionNs)) + ".." + format_time_ns(spec.max) + ")";
}

// Parses `text` (already trimmed) for `spec` into `out`. Returns an empty
// string on success, else the message detail (without the "--name: " prefix).
// The range of a `cyc` time is checked by Config::validate_all.
std::string parse_value(const ParamSpec& spec, const std::string& text, Config::Value& out) {
  const std::string q = quoted(text);
  switch (spec.kind) {
    case ParamKind::Time: {
      double num;
      size_t used;
      if (!parse_double_prefix(text, num, used))
        return q + " is not a time (a number with a unit: " + kTimeUnitList + ")";
      std::string unit = trim(text.substr(used));
      if (unit.empty() && spec.bare_ns) unit = "ns";  // the parameter's older, unit-less form
      if (unit.empty()) return q + " needs a unit (" + kTimeUnitList + ")";
      int idx = -1;
      for (int i = 0; i < 5; ++i)
        if (unit == kTimeUnits[i]) idx = i;
      if (idx < 0)
        return q + " has an unknown unit " + quoted(unit) + " (" + kTimeUnitList + ")";
      out.number = num;
      out.time_unit = idx;
      out.canonical = shortest(num) + kTimeUnits[idx];
      if (idx != kCyc) {
        double ns = num * kTimeScale[idx];
        if (ns < spec.min || ns > spec.max) return out_of_range(text, spec);
        if (ns != 0 && std::fabs(ns) < kTimeResolutionNs) return shown(text) + " " + below_resolution(spec);
      } else if (num < 0 && spec.min >= 0) {
        return out_of_range(text, spec);
      }
      return {};
    }
    case ParamKind::Size: {
      double num;
      size_t used;
      if (text.empty() || text[0] == '-' || !parse_double_prefix(text, num, used))
        return q + " is not a size (" + kSizeForm + ")";
      std::string suffix = trim(text.substr(used));
      std::string low = suffix;
      std::transform(low.begin(), low.end(), low.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      double mult = 0;
      if (low.empty() || low == "b") mult = 1;
      else if (low == "k" || low == "kb" || low == "kib") mult = 1024.0;
      else if (low == "m" || low == "mb" || low == "mib") mult = 1024.0 * 1024;
      else if (low == "g" || low == "gb" || low == "gib") mult = 1024.0 * 1024 * 1024;
      else if (low == "t" || low == "tb" || low == "tib") mult = 1024.0 * 1024 * 1024 * 1024;
      else
        return q + " has an unknown size suffix " + quoted(suffix) + " (k, m, g, t; also KiB, MiB, GiB, TiB)";
      double bytes = num * mult;
      if (bytes != std::floor(bytes)) return q + " is not a whole number of bytes";
      if (bytes >= 18446744073709551616.0) return out_of_range(text, spec);
      // Bare byte counts above 2^53 are read exactly.
      uint64_t exact = static_cast<uint64_t>(bytes);
      if (mult == 1) {
        uint64_t u;
        auto r = std::from_chars(text.data(), text.data() + used, u);
        if (r.ec == std::errc() && r.ptr == text.data() + used) exact = u;
      }
      if (bytes < spec.min || bytes > spec.max) return out_of_range(text, spec);
      out.bytes = exact;
      out.number = bytes;
      out.canonical = format_size(exact);
      return {};
    }
    case ParamKind::Integer: {
      int64_t v;
      std::string digits = text;
      int64_t mult = 1;
      if (spec.count_suffixes && !text.empty()) {
        const char last = char(std::tolower(static_cast<unsigned char>(text.back())));
        mult = last == 'k' ? 1024 : last == 'm' ? 1024 * 1024 : last == 'g' ? 1024 * 1024 * 1024 : 1;
        if (mult != 1) digits.pop_back();
      }
      auto r = std::from_chars(digits.data(), digits.data() + digits.size(), v);
      const bool whole = r.ec == std::errc() && r.ptr == digits.data() + digits.size() && !digits.empty();
      if (mult != 1) {
        if (!whole) return q + " is not an integer (optionally with k, m or g: x1024)";
        if (v > INT64_MAX / mult || v < INT64_MIN / mult) return out_of_range(text, spec);
        v *= mult;
      } else {
        if (r.ec == std::errc::result_out_of_range) return out_of_range(text, spec);
        if (!whole) return q + " is not an integer";
      }
      if (static_cast<double>(v) < spec.min || static_cast<double>(v) > spec.max)
        return out_of_range(text, spec);
      out.integer = v;
      out.number = static_cast<double>(v);
      out.canonical = std::to_string(v);
      return {};
    }
    case ParamKind::Real: {
      double v;
      size_t used;
      if (!parse_double_prefix(text, v, used) || used != text.size())
        return q + " is not a number";
      if (v < spec.min || v > spec.max) return out_of_range(text, spec);
      if (v != 0 && std::fabs(v) < spec.min_nonzero)
        return shown(text) + " is below " + shortest(spec.min_nonzero) + ", the smallest value other than 0 (0, or " +
               shortest(spec.min_nonzero) + ".." + shortest(spec.max) + ")";
      out.number = v;
      out.canonical = shortest(v);
      return {};
    }
    case ParamKind::Bool: {
      std::string low = text;
      std::transform(low.begin(), low.end(), low.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      if (low == "on" || low == "true" || low == "yes" || low == "1") out.number = 1;
      else if (low == "off" || low == "false" || low == "no" || low == "0") out.number = 0;
      else return q + " is not a boolean (on/off, true/false, yes/no, 1/0)";
      out.canonical = out.number != 0 ? "on" : "off";
      return {};
    }
    case ParamKind::Choice: {
      if (std::find(spec.choices.begin(), spec.choices.end(), text) == spec.choices.end())
        return q + " is not one of " + join(spec.choices, ", ");
      out.canonical = text;
      if (is_integer_text(text)) {
        std::from_chars(text.data(), text.data() + text.size(), out.integer);
        out.number = static_cast<double>(out.integer);
      }
      return {};
    }
    case ParamKind::Text:
      if (spec.check)
        if (const std::string e = spec.check(text); !e.empty()) return q + ": " + e;
      out.canonical = text;
      return {};
  }
  return "unsupported parameter kind";
}

bool integer_choice(const ParamSpec& spec) {
  if (spec.kind != ParamKind::Choice || spec.choices.empty()) return false;
  return std::all_of(spec.choices.begin(), spec.choices.end(), is_integer_text);
}

}  // namespace

const char* kind_name(ParamKind kind) {
  switch (kind) {
    case ParamKind::Time: return "time";
    case ParamKind::Size: return "size";
    case ParamKind::Integer: return "integer";
    case ParamKind::Real: return "real";
    case ParamKind::Bool: return "bool";
    case ParamKind::Choice: return "choice";
    case ParamKind::Text: return "text";
  }
  return "?";
}

void fit_namespace_to_size(std::vector<Config*> configs) {
  if (configs.empty() || !configs[0]->registry().find("nvme.capacity") || !configs[0]->registry().find("size"))
    return;
  uint64_t largest = 0;
  for (const Config* c : configs) {
    // The user's namespace (the device's own capacity, or its old spelling):
    // validate_all checks it.
    if (c->is_set(backend_value_param(*c, "capacity"))) return;
    largest = std::max(largest, c->size_bytes("size"));
  }
  const uint64_t capacity = configs[0]->size_bytes(backend_param(*configs[0], "capacity"));
  if (largest <= capacity) return;
  const uint64_t grown = (largest + 4095) / 4096 * 4096;  // whole 4 KiB pages (any LBA size divides them)
  for (Config* c : configs) c->set(backend_param(*c, "capacity"), std::to_string(grown));
}

std::string format_time_ns(double ns) {
  if (ns == 0) return "0ns";
  double a = std::fabs(ns);
  if (a >= 1e9) return short6(ns / 1e9) + "s";
  if (a >= 1e6) return short6(ns / 1e6) + "ms";
  if (a >= 1e3) return short6(ns / 1e3) + "us";
  return short6(ns) + "ns";
}

std::string time_value_text(double ns) {
  char b[64];
  std::snprintf(b, sizeof b, "%.1fns", ns);
  return b;
}

std::string format_size(uint64_t bytes) {
  static const char* suffix[] = {"t", "g", "m", "k"};
  static const int shift[] = {40, 30, 20, 10};
  if (bytes == 0) return "0";
  for (int i = 0; i < 4; ++i) {
    uint64_t unit = uint64_t{1} << shift[i];
    if (bytes % unit == 0) return std::to_string(bytes / unit) + suffix[i];
  }
  return std::to_string(bytes);
}

std::string format_range(const ParamSpec& spec) {
  switch (spec.kind) {
    case ParamKind::Time: return format_time_ns(spec.min) + ".." + format_time_ns(spec.max);
    case ParamKind::Size:
      return format_size(static_cast<uint64_t>(spec.min)) + ".." +
             format_size(static_cast<uint64_t>(spec.max));
    case ParamKind::Integer: return format_int(spec.min) + ".." + format_int(spec.max);
    case ParamKind::Real: return shortest(spec.min) + ".." + shortest(spec.max);
    case ParamKind::Bool: return "on|off";
    case ParamKind::Choice: return join(spec.choices, "|");
    case ParamKind::Text: return "-";
  }
  return "-";
}

// ---------------------------------------------------------------- registry

void ParamRegistry::add(ParamSpec spec) {
  if (spec.name.empty()) throw std::logic_error("ParamRegistry::add: empty name");
  if (index_.count(spec.name))
    throw std::logic_error("ParamRegistry::add: duplicate parameter '" + spec.name + "'");
  if (spec.kind == ParamKind::Choice && spec.choices.empty())
    throw std::logic_error("ParamRegistry::add: choice parameter '" + spec.name + "' has no choices");
  if (spec.min > spec.max)
    throw std::logic_error("ParamRegistry::add: '" + spec.name + "' has min > max");
  Config::Value v;
  std::string err = parse_value(spec, trim(spec.default_value), v);
  if (!err.empty())
    throw std::logic_error("ParamRegistry::add: default of '" + spec.name + "': " + err);
  if (!spec.alias.empty()) {
    if (index_.count(spec.alias))
      throw std::logic_error("ParamRegistry::add: duplicate parameter '" + spec.alias + "'");
    index_.emplace(spec.alias, specs_.size());
  }
  index_.emplace(spec.name, specs_.size());
  specs_.push_back(std::move(spec));
}

const ParamSpec* ParamRegistry::find(const std::string& name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &specs_[it->second];
}


// ------------------------------------------------------------------ config

Config::Config(const ParamRegistry& registry) : registry_(&registry) {
  values_.resize(registry.specs_.size());
  for (size_t i = 0; i < registry.specs_.size(); ++i) {
    const ParamSpec& spec = registry.specs_[i];
    std::string err = parse_value(spec, trim(spec.default_value), values_[i]);
    if (!err.empty())  // add() checked it already
      throw std::logic_error("Config: default of '" + spec.name + "': " + err);
  }
}

void Config::set(const std::string& name, const std::string& text) {
  auto it = registry_->index_.find(name);
  if (it == registry_->index_.end() || it->second >= values_.size())
    throw ConfigError("unknown parameter " + quoted(name) + " (see --list-params)");
  const ParamSpec& spec = registry_->specs_[it->second];
  Value v;
  std::string err = parse_value(spec, trim(text), v);
  if (!err.empty()) throw ConfigError("--" + name + ": " + err);
  v.user_set = true;
  values_[it->second] = std::move(v);
}

void Config::load_ini(const std::string& path) {
  const std::string text = read_input_file_as<ConfigError>(path, "config file " + shown(path));
  std::istringstream in(text);
  load_ini(in, path);
}

void Config::load_ini(std::istream& in, const std::string& source) {
  std::string line;
  std::string section;
  std::map<std::string, int> seen;  // full name -> line
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    const std::string where = "config file " + shown(source) + " line " + std::to_string(lineno) + ": ";
    if (lineno == 1) line = strip_bom(line);
    if (line.size() > kInputLineMax)
      throw ConfigError(where + "longer than " + std::to_string(kInputLineMax) + " bytes");
    // '#' anywhere, ';' at the start or after a blank, start a comment
    // (also after a section header: "[hv] ; host" as "[hv] # host").
    size_t hash = line.find('#');
    for (size_t semi = line.find(';'); semi != std::string::npos && semi < hash; semi = line.find(';', semi + 1))
      if (semi == 0 || line[semi - 1] == ' ' || line[semi - 1] == '\t') hash = semi;
    if (hash != std::string::npos) line.erase(hash);
    line = trim(line);
    if (line.empty()) continue;
    if (line[0] == '[') {
      if (line.back() != ']') throw ConfigError(where + "bad section header " + quoted(line));
      section = trim(line.substr(1, line.size() - 2));
      if (section.empty()) throw ConfigError(where + "empty section name");
      continue;
    }
    size_t eq = line.find('=');
    if (eq == std::string::npos)
      throw ConfigError(where + "expected 'name = value', got " + quoted(line));
    std::string key = trim(line.substr(0, eq));
    std::string value = trim(line.substr(eq + 1));
    if (key.empty()) throw ConfigError(where + "missing name before '='");
    std::string full = (section.empty() || section == "fio") ? key : section + "." + key;
    if (!registry_->find(full))
      throw ConfigError(where + "unknown key " + quoted(full) + " (see --list-params)");
    auto [pos, fresh] = seen.emplace(full, lineno);
    if (!fresh)
      throw ConfigError(where + quoted(full) + " is given twice (first on line " +
                        std::to_string(pos->second) + ")");
    try {
      set(full, value);
    } catch (const ConfigError& e) {
      std::string msg = e.what();
      if (msg.rfind("--", 0) == 0) msg.erase(0, 2);  // "name: detail"
      throw ConfigError(where + msg);
    }
  }
  if (in.bad()) throw ConfigError("config file " + shown(source) + ": read error");
}

size_t Config::index_of(const std::string& name) const {
  auto it = registry_->index_.find(name);
  if (it == registry_->index_.end() || it->second >= values_.size())
    throw std::logic_error("Config: unknown parameter '" + name + "'");
  return it->second;
}

const Config::Value& Config::checked(const std::string& name, ParamKind kind,
                                     const char* accessor) const {
  size_t i = index_of(name);
  const ParamSpec& spec = registry_->specs_[i];
  if (spec.kind != kind)
    throw std::logic_error(std::string("Config::") + accessor + ": '" + name + "' is a " +
                           kind_name(spec.kind) + " parameter");
  return values_[i];
}

double Config::time_ns(const std::string& name) const {
  const Value& v = checked(name, ParamKind::Time, "time_ns");
  if (v.time_unit == kCyc) return v.number / real(kCpuGhz);
  return v.number * kTimeScale[v.time_unit];
}

uint64_t Config::size_bytes(const std::string& name) const {
  return checked(name, ParamKind::Size, "size_bytes").bytes;
}

int64_t Config::integer(const std::string& name) const {
  size_t i = index_of(name);
  if (integer_choice(registry_->specs_[i])) return values_[i].integer;
  return checked(name, ParamKind::Integer, "integer").integer;
}

double Config::real(const std::string& name) const {
  return checked(name, ParamKind::Real, "real").number;
}

bool Config::flag(const std::string& name) const {
  return checked(name, ParamKind::Bool, "flag").number != 0;
}

const std::string& Config::choice(const std::string& name) const {
  return checked(name, ParamKind::Choice, "choice").canonical;
}

const std::string& Config::text(const std::string& name) const {
  return values_[index_of(name)].canonical;
}

bool Config::is_set(const std::string& name) const { return values_[index_of(name)].user_set; }
void Config::mark_from_preset(const std::string& name) { values_[index_of(name)].from_preset = true; }
bool Config::from_preset(const std::string& name) const { return values_[index_of(name)].from_preset; }

std::vector<std::pair<std::string, std::string>> Config::effective() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (size_t i = 0; i < values_.size(); ++i)
    out.emplace_back(registry_->specs_[i].name, values_[i].canonical);
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::pair<std::string, double>> Config::effective_numeric() const {
  std::vector<std::pair<std::string, double>> out;
  for (size_t i = 0; i < values_.size(); ++i) {
    const ParamSpec& spec = registry_->specs_[i];
    switch (spec.kind) {
      case ParamKind::Time: out.emplace_back(spec.name, time_ns(spec.name)); break;
      case ParamKind::Size: out.emplace_back(spec.name, static_cast<double>(values_[i].bytes)); break;
      case ParamKind::Integer:
      case ParamKind::Real:
      case ParamKind::Bool: out.emplace_back(spec.name, values_[i].number); break;
      case ParamKind::Choice:
      case ParamKind::Text: break;
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

void Config::validate_all() const {
  const bool has_ghz = registry_->find(kCpuGhz) != nullptr;
  for (size_t i = 0; i < values_.size(); ++i) {
    const ParamSpec& spec = registry_->specs_[i];
    const Value& v = values_[i];
    if (spec.kind != ParamKind::Time || v.time_unit != kCyc) continue;
    if (!has_ghz || !(real(kCpuGhz) > 0))
      throw ConfigError("--" + spec.name + ": " + quoted(v.canonical) + " is in cycles and needs " +
                        kCpuGhz + " > 0");
    double ghz = real(kCpuGhz);
    double ns = v.number / ghz;
    // Cycles at a decimal clock rarely divide exactly: allow rounding error.
    const double slack = 1e-9 * std::max(std::fabs(spec.min), std::fabs(spec.max));
    if (ns < spec.min - slack || ns > spec.max + slack)
      throw ConfigError("--" + spec.name + ": " + v.canonical + " (" + format_time_ns(ns) +
                        " at " + kCpuGhz + " " + shortest(ghz) + ") is out of range (" +
                        format_range(spec) + ")");
    if (ns != 0 && std::fabs(ns) < kTimeResolutionNs)
      throw ConfigError("--" + spec.name + ": " + v.canonical + " (" + format_time_ns(ns) + " at " + kCpuGhz +
                        " " + shortest(ghz) + ") " + below_resolution(spec));
  }
  auto has = [this](const char* n) { return registry_->find(n) != nullptr; };
  if (has("number_ios") && has("runtime") && integer("number_ios") == 0 && time_ns("runtime") == 0)
    throw ConfigError("number_ios and runtime are both 0");
  // An unset capacity grows to the jobs' size (fit_namespace_to_size). The
  // device's own (nvme.capacity, virtio.capacity), or its old spelling.
  if (has("size") && has("nvme.capacity")) {
    const std::string capacity = backend_value_param(*this, "capacity");
    if (is_set(capacity) && size_bytes("size") > size_bytes(capacity))
      throw ConfigError("--size: " + text("size") + " is larger than " + backend_param(*this, "capacity") + " (" +
                        text(capacity) + ")");
  }
  if (has("bs") && has("size") && size_bytes("bs") > size_bytes("size"))
    throw ConfigError("--bs: " + text("bs") + " is larger than size (" + text("size") + ")");
  // bssplit's and bsrange's largest size, for reads and for writes, must fit
  // size as bs must (else no offset fits it and no I/O could be drawn).
  if (has("bssplit") && has("bsrange") && has("size")) {
    models::fio_opt::BsSplitList split[2];
    models::fio_opt::BsRange range[2];
    const bool parsed = models::fio_opt::parse_bssplit(text("bssplit"), split).empty() &&
                        models::fio_opt::parse_bsrange(text("bsrange"), range).empty();
    for (unsigned d = 0; parsed && d < 2; ++d) {
      uint64_t largest = 0;
      for (const auto& e : split[d]) largest = std::max(largest, e.bs);
      const char* option = largest ? "bssplit" : "bsrange";
      if (!largest) largest = range[d].max;
      if (largest > size_bytes("size"))
        throw ConfigError(std::string("--") + option + ": " + text(option) + " has a block size of " +
                          format_size(largest) + ", larger than size (" + text("size") +
                          "; allowed block sizes up to size)");
    }
  }
  if (has("bs") && has("nvme.lba_bytes")) {
    int64_t lba = integer("nvme.lba_bytes");
    if (lba > 0 && size_bytes("bs") % static_cast<uint64_t>(lba) != 0)
      throw ConfigError("--bs: " + text("bs") + " is not a multiple of nvme.lba_bytes (" +
                        std::to_string(lba) + ")");
  }
  if (has("guest.io_queue_entries") && has("nvme.mqes") &&
      integer("guest.io_queue_entries") > integer("nvme.mqes") + 1)
    throw ConfigError("--guest.io_queue_entries: " + text("guest.io_queue_entries") +
                      " is more than the controller allows (nvme.mqes " + text("nvme.mqes") +
                      " is 0's based: at most " + std::to_string(integer("nvme.mqes") + 1) + ")");
}

}  // namespace nvmesim::platform
