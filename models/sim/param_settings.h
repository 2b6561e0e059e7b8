// Settings by name for a component user's platform without platform/'s
// Config: "nvme0.mqes=63" applied to one instance's Params through its
// visit lines (models/sim/param_visit.h), so a platform with two
// controllers names each one's parameters under its instance prefix
// (nvme0.*, nvme1.*) where the application, with one device, says nvme.*.
//
//   models::NvmeControllerModel::Params p0;
//   // nvme0.mqes, nvme0.clock (the engine's table); nvme1.* left for the other
//   models::apply_param_settings("nvme0", {"nvme0.mqes=63", "nvme0.clock=2", "nvme1.mdts=3"}, p0, p0.engine);
//   p0.resolve_auto();
//
// A value is read as a visit line's default is (models/sim/param_defaults.h:
// times with ns, us, ms or s, sizes with k, m, g, t, on/off, a choice's
// name, "auto") and must lie in the line's range; what cannot be read, is
// out of range or names no parameter of the prefix throws
// std::invalid_argument naming the setting. (The application's Config reads
// more: "cyc" times at hv.cpu_ghz, fio's unit spellings.)
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "nvmesim/models/sim/param_defaults.h"

namespace nvmesim::models {

namespace param_settings_detail {

// Visits P's lines and sets the one named `name` (without its prefix) to `value`.
class Setter {
 public:
  Setter(std::string setting, std::string name, std::string value)
      : setting_(std::move(setting)), name_(std::move(name)), value_(std::move(value)) {}
  bool found() const { return found_; }

  template <class F>
  void time(F& field, const char* name, const char* def, double min, double max, const char* help,
            ParamOptions options = {}) {
    if (!match(name, options)) return;
    double ns = 0;
    read([&] { ParamDefaults().time(ns, name, value_.c_str(), min, max, help, options); });
    check(ns, min, max);
    ParamDefaults().time(field, name, value_.c_str(), min, max, help, options);
    (void)def;
  }
  template <class F>
  void size(F& field, const char* name, const char*, double min, double max, const char* help) {
    if (!match(name)) return;
    double bytes = 0;
    read([&] { ParamDefaults().size(bytes, name, value_.c_str(), min, max, help); });
    check(bytes, min, max);
    field = F(bytes);
  }
  template <class F>
  void integer(F& field, const char* name, const char*, const char* unit, double min, double max,
               const char* help, ParamOptions options = {}) {
    if (!match(name, options)) return;
    double v = 0;
    read([&] { ParamDefaults().integer(v, name, value_.c_str(), unit, min, max, help, options); });
    check(v, min, max);
    field = F(v);
  }
  template <class F>
  void real(F& field, const char* name, const char*, const char* unit, double min, double max,
            const char* help, ParamOptions options = {}) {
    if (!match(name, options)) return;
    double v = 0;
    read([&] { ParamDefaults().real(v, name, value_.c_str(), unit, min, max, help, options); });
    check(v, min, max);
    if (v != 0 && v < options.min_nonzero) check(v, options.min_nonzero, max);
    field = F(v);
  }
  void flag(bool& field, const char* name, const char*, const char* help) {
    if (match(name)) read([&] { ParamDefaults().flag(field, name, value_.c_str(), help); });
  }
  void text(std::string& field, const char* name, const char*, std::string (*check_text)(const std::string&),
            const char*) {
    if (!match(name)) return;
    if (check_text) {
      const std::string wrong = check_text(value_);
      if (!wrong.empty()) throw std::invalid_argument(setting_ + ": " + wrong);
    }
    field = value_;
  }
  template <class F, class Table>
  void choice(F& field, const char* name, const char*, const Table& table, const char* unit, const char* help) {
    if (match(name)) read([&] { ParamDefaults().choice(field, name, value_.c_str(), table, unit, help); });
  }
  template <class E, class Table>
  void choice_or_auto(std::optional<E>& field, const char* name, const char*, const Table& table, AutoChoice a,
                      const char* unit, const char* help) {
    if (match(name))
      read([&] { ParamDefaults().choice_or_auto(field, name, value_.c_str(), table, a, unit, help); });
  }

 private:
  // A name with a dot is whole (another component's, "host.cores"): not
  // under an instance prefix.
  bool match(const char* name, const ParamOptions& = {}) {
    if (found_) return false;  // the first table that has it
    if (std::string(name).find('.') != std::string::npos || name_ != name) return false;
    found_ = true;
    return true;
  }
  template <class Read>
  void read(Read&& r) {
    try {
      r();
    } catch (const std::logic_error&) {
      throw std::invalid_argument(setting_ + ": cannot read \"" + value_ + "\"");
    }
  }
  void check(double v, double min, double max) const {
    if (v < min || v > max)
      throw std::invalid_argument(setting_ + ": " + value_ + " is out of range (" + number(min) + ".." +
                                  number(max) + " in base units: ns, bytes)");
  }
  static std::string number(double v) {
    std::string s = std::to_string(v);
    s.erase(s.find_last_not_of('0') + 1);
    if (s.back() == '.') s.pop_back();
    return s;
  }

  std::string setting_, name_, value_;
  bool found_ = false;
};

}  // namespace param_settings_detail

// Applies each "prefix.name=value" of `settings` whose prefix is `prefix`
// to the one of `params` that has the line (a component whose visit table
// is split, as the controller's Params and its engine's are); settings of
// other prefixes are left for other instances. Returns how many it applied.
// Throws std::invalid_argument for a setting without '=', one under
// `prefix` that names no line, or a value that cannot be read or is out of
// range.
template <class... P>
unsigned apply_param_settings(const std::string& prefix, const std::vector<std::string>& settings, P&... params) {
  unsigned applied = 0;
  for (const std::string& s : settings) {
    const size_t eq = s.find('=');
    if (eq == std::string::npos) throw std::invalid_argument(s + ": not name=value");
    const std::string name = s.substr(0, eq);
    if (name.compare(0, prefix.size() + 1, prefix + ".") != 0) continue;
    param_settings_detail::Setter setter(s, name.substr(prefix.size() + 1), s.substr(eq + 1));
    (params.visit(setter), ...);
    if (!setter.found()) throw std::invalid_argument(s + ": no parameter " + name);
    ++applied;
  }
  return applied;
}

}  // namespace nvmesim::models
