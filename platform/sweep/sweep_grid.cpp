#include "nvmesim/platform/sweep/sweep_grid.h"
#include "nvmesim/platform/config/input_file.h"
#include "nvmesim/platform/config/user_text.h"

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace nvmesim::platform::sweep {

namespace {

constexpr size_t kMaxPoints = 1000000;

std::string trim(const std::string& s) {
  size_t a = 0, b = s.size();
  while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
  return s.substr(a, b - a);
}

bool is_decimal_integer(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

// One range bound: a decimal number held as an integer scaled by 10^decimals,
// and the unit text after it.
struct Bound {
  int64_t scaled = 0;
  int decimals = 0;
  std::string unit;
};

Bound parse_bound(const std::string& where, const std::string& text) {
  Bound b;
  size_t i = 0;
  bool neg = false;
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) neg = text[i++] == '-';
  const size_t digits0 = i;
  int64_t v = 0;
  bool frac = false;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '.' && !frac) {
      frac = true;
      continue;
    }
    if (!std::isdigit(static_cast<unsigned char>(c))) break;
    if (v > (INT64_MAX - 9) / 10) throw UsageError(where + ": " + quoted(text) + " is too large");
    v = v * 10 + (c - '0');
    if (frac) ++b.decimals;
  }
  if (i == digits0 || (frac && b.decimals == 0 && i == digits0 + 1))
    throw UsageError(where + ": " + quoted(text) + " is not a number with an optional unit");
  b.scaled = neg ? -v : v;
  b.unit = text.substr(i);
  return b;
}

std::string format_scaled(int64_t v, int decimals, const std::string& unit) {
  std::string digits = std::to_string(v < 0 ? -v : v);
  if (decimals > 0) {
    if (digits.size() <= size_t(decimals)) digits.insert(0, size_t(decimals) + 1 - digits.size(), '0');
    digits.insert(digits.size() - size_t(decimals), ".");
    while (digits.back() == '0') digits.pop_back();
    if (digits.back() == '.') digits.pop_back();
  }
  return (v < 0 ? "-" : "") + digits + unit;
}

}  // namespace

std::vector<std::string> expand_range(const std::string& name, const std::string& range) {
  const std::string where = "--grid " + name;
  const size_t c1 = range.find(':'), c2 = range.find(':', c1 + 1);
  if (c1 == std::string::npos || c2 == std::string::npos || range.find(':', c2 + 1) != std::string::npos)
    throw UsageError(where + ": a range is start:stop:step, got " + quoted(range));
  Bound b[3] = {parse_bound(where, trim(range.substr(0, c1))),
                parse_bound(where, trim(range.substr(c1 + 1, c2 - c1 - 1))),
                parse_bound(where, trim(range.substr(c2 + 1)))};
  if (b[0].unit != b[1].unit || b[0].unit != b[2].unit)
    throw UsageError(where + ": start, stop and step need the same unit, got " + quoted(range));
  int decimals = 0;
  for (const Bound& x : b) decimals = std::max(decimals, x.decimals);
  for (Bound& x : b)
    for (int k = x.decimals; k < decimals; ++k) {
      if (x.scaled > INT64_MAX / 10 || x.scaled < INT64_MIN / 10)
        throw UsageError(where + ": " + quoted(range) + " has too many digits");
      x.scaled *= 10;
    }
  if (b[2].scaled <= 0) throw UsageError(where + ": the step of " + quoted(range) + " must be > 0");
  if (b[1].scaled < b[0].scaled)
    throw UsageError(where + ": the stop of " + quoted(range) + " is below its start");
  const uint64_t span = uint64_t(b[1].scaled) - uint64_t(b[0].scaled);
  const uint64_t count = span / uint64_t(b[2].scaled) + 1;
  if (count > kMaxPoints)
    throw UsageError(where + ": " + quoted(range) + " has " + std::to_string(count) +
                     " values (at most " + std::to_string(kMaxPoints) + ")");
  std::vector<std::string> values;
  for (uint64_t k = 0; k < count; ++k)
    values.push_back(format_scaled(b[0].scaled + int64_t(k) * b[2].scaled, decimals, b[0].unit));
  return values;
}

Axis parse_grid_arg(const std::string& arg, const ParamRegistry& registry) {
  const size_t eq = arg.find('=');
  if (eq == std::string::npos)
    throw UsageError("--grid: " + quoted(arg) + " is not name=v1,v2,... or name=start:stop:step");
  Axis axis;
  axis.name = trim(arg.substr(0, eq));
  const std::string spec = trim(arg.substr(eq + 1));
  if (axis.name.empty()) throw UsageError("--grid: " + quoted(arg) + " has no parameter name");
  if (!registry.find(axis.name))
    throw UsageError("--grid: unknown parameter " + quoted(axis.name) + " (see --list-params)");
  if (spec.empty()) throw UsageError("--grid " + axis.name + ": no values");
  if (spec.find(',') == std::string::npos && spec.find(':') != std::string::npos) {
    axis.values = expand_range(axis.name, spec);
  } else {
    size_t start = 0;
    for (;;) {
      const size_t comma = spec.find(',', start);
      const std::string v = trim(spec.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
      if (v.empty()) throw UsageError("--grid " + axis.name + ": empty value in " + quoted(spec));
      axis.values.push_back(v);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  if (axis.name == "seed")
    for (const std::string& v : axis.values)
      if (!is_decimal_integer(v) || v.size() > 18)
        throw UsageError("--grid seed: " + quoted(v) + " is not a decimal integer below 10^18");
  return axis;
}

void load_sweep_file(const std::string& path, std::vector<Axis>& axes,
                     std::vector<std::string>& fixed, const ParamRegistry& registry) {
  const std::string text = read_input_file_as<UsageError>(path, "--sweep-file " + shown(path));
  std::istringstream in(text);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    const size_t hash = line.find('#');
    if (hash != std::string::npos) line.erase(hash);
    line = trim(line);
    if (line.empty()) continue;
    if (line.rfind("--", 0) == 0) {
      fixed.push_back(line);
      continue;
    }
    try {
      axes.push_back(parse_grid_arg(line, registry));
    } catch (const UsageError& e) {
      throw UsageError("sweep file " + shown(path) + " line " + std::to_string(n) + ": " + e.what());
    }
  }
}

namespace {

// The name a parameter is registered under (its alias resolves to it).
std::string canonical(const std::string& name, const ParamRegistry& registry) {
  const ParamSpec* spec = registry.find(name);
  return spec ? spec->name : name;
}

}  // namespace

void check_one_setting_per_parameter(const std::vector<Axis>& axes, const std::vector<std::string>& fixed,
                                     const ParamRegistry& registry) {
  for (size_t a = 0; a < axes.size(); ++a) {
    const std::string param = canonical(axes[a].name, registry);
    for (size_t b = 0; b < a; ++b)
      if (canonical(axes[b].name, registry) == param)
        throw UsageError("--grid " + axes[b].name + " and --grid " + axes[a].name + ": two axes over one parameter (" +
                         param + "); give one axis with all the values");
    for (const std::string& token : fixed) {
      if (token.rfind("--", 0) != 0) continue;  // a value of the option before
      const std::string name = token.substr(2, token.find('=') == std::string::npos ? std::string::npos
                                                                                   : token.find('=') - 2);
      if (registry.find(name) && canonical(name, registry) == param)
        throw UsageError("--grid " + axes[a].name + " and the fixed option " + shown(token) +
                         ": one parameter (" + param + ") both swept and fixed; drop one");
    }
  }
}

uint64_t point_seed(uint64_t sweep_seed, const PointValues& values) {
  for (const auto& [name, value] : values)
    if (name == "seed") return std::stoull(value);
  std::string text = std::to_string(sweep_seed);
  for (const auto& [name, value] : values) text += "\n" + name + "=" + value;
  uint64_t h = 14695981039346656037ull;  // FNV-1a 64 offset basis
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;  // FNV-1a 64 prime
  }
  return h >> 1;
}

std::vector<Point> expand_grid(const std::vector<Axis>& axes, uint64_t sweep_seed) {
  size_t total = 1;
  for (size_t a = 0; a < axes.size(); ++a) {
    for (size_t b = 0; b < a; ++b)
      if (axes[a].name == axes[b].name)
        throw UsageError("--grid: parameter " + quoted(axes[a].name) + " given twice");
    if (axes[a].values.empty()) throw UsageError("--grid " + axes[a].name + ": no values");
    total *= axes[a].values.size();
    if (total > kMaxPoints)
      throw UsageError("--grid: more than " + std::to_string(kMaxPoints) + " points");
  }
  std::vector<Point> points;
  if (axes.empty()) return points;
  std::vector<size_t> idx(axes.size(), 0);
  for (size_t id = 0; id < total; ++id) {
    Point p;
    p.id = id;
    for (size_t a = 0; a < axes.size(); ++a) p.values.emplace_back(axes[a].name, axes[a].values[idx[a]]);
    p.seed = point_seed(sweep_seed, p.values);
    points.push_back(std::move(p));
    for (size_t a = axes.size(); a-- > 0;) {  // odometer: last axis fastest
      if (++idx[a] < axes[a].values.size()) break;
      idx[a] = 0;
    }
  }
  return points;
}

std::string point_label(const PointValues& values) {
  std::string s;
  for (const auto& [name, value] : values) s += (s.empty() ? "" : " ") + name + "=" + value;
  return s;
}

}  // namespace nvmesim::platform::sweep
