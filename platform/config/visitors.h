// The two visitors of a Params struct's visit() (the protocol is in
// models/sim/param_visit.h): ParamSpecBuilder adds each parameter to a
// ParamRegistry (so --list-params, docs and Config come from the structs),
// ConfigReader fills each field from a Config. describe_params<P>() and
// load_params<P>() run them over one struct.
#pragma once

#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <systemc>

#include "nvmesim/models/sim/param_visit.h"
#include "nvmesim/platform/config/enum_choice.h"
#include "nvmesim/platform/config/params.h"

namespace nvmesim::platform {

using models::AutoChoice;
using models::ParamOptions;

// The whole name: "prefix.name", a flat name when the prefix is empty, and
// `name` itself when it has a dot already ("host.cores" in HvParams).
std::string full_param_name(const char* prefix, const char* name);

class ParamSpecBuilder {
 public:
  ParamSpecBuilder(ParamRegistry& registry, const char* prefix) : registry_(registry), prefix_(prefix) {}

  template <class F>
  void time(F&, const char* name, const char* def, double min, double max, const char* help,
            ParamOptions options = {}) {
    add(name, ParamKind::Time, def, "time", min, max, {}, help, options);
  }
  template <class F>
  void size(F&, const char* name, const char* def, double min, double max, const char* help) {
    add(name, ParamKind::Size, def, "bytes", min, max, {}, help, {});
  }
  template <class F>
  void integer(F&, const char* name, const char* def, const char* unit, double min, double max,
               const char* help, ParamOptions options = {}) {
    add(name, ParamKind::Integer, def, unit, min, max, {}, help, options);
  }
  template <class F>
  void real(F&, const char* name, const char* def, const char* unit, double min, double max,
            const char* help, ParamOptions options = {}) {
    add(name, ParamKind::Real, def, unit, min, max, {}, help, options);
  }
  void flag(bool&, const char* name, const char* def, const char* help) {
    add(name, ParamKind::Bool, def, "", 0, 0, {}, help, {});
  }
  // Text with its check ("" or what is wrong with a value).
  void text(std::string&, const char* name, const char* def, std::string (*check)(const std::string&),
            const char* help) {
    add(name, ParamKind::Text, def, "", 0, 0, {}, help, {}, check);
  }
  // An enum (or bool) through its table.
  template <class E, size_t N>
  void choice(E&, const char* name, const char* def, const fw::EnumEntry<E> (&table)[N],
              const char* unit, const char* help) {
    std::vector<std::string> names;
    for (const auto& e : table) names.push_back(e.name);
    add(name, ParamKind::Choice, def, unit, 0, 0, std::move(names), help, {});
  }
  // An integer from a fixed list (pcie.lanes, nvme.lba_bytes, ...).
  template <class F, class I, size_t N, class = std::enable_if_t<std::is_integral_v<I>>>
  void choice(F&, const char* name, const char* def, const I (&values)[N], const char* unit,
              const char* help) {
    std::vector<std::string> names;
    for (I v : values) names.push_back(std::to_string(v));
    add(name, ParamKind::Choice, def, unit, 0, 0, std::move(names), help, {});
  }
  template <class E, size_t N>
  void choice_or_auto(std::optional<E>&, const char* name, const char* def,
                      const fw::EnumEntry<E> (&table)[N], AutoChoice where, const char* unit,
                      const char* help) {
    std::vector<std::string> names;
    if (where == AutoChoice::First) names.push_back("auto");
    for (const auto& e : table) names.push_back(e.name);
    if (where == AutoChoice::Last) names.push_back("auto");
    add(name, ParamKind::Choice, def, unit, 0, 0, std::move(names), help, {});
  }

 private:
  void add(const char* name, ParamKind kind, const char* def, const char* unit, double min,
           double max, std::vector<std::string> choices, const char* help, ParamOptions options,
           std::string (*check)(const std::string&) = nullptr);

  ParamRegistry& registry_;
  const char* prefix_;
};

class ConfigReader {
 public:
  ConfigReader(const Config& config, const char* prefix) : config_(config), prefix_(prefix) {}

  // sc_time fields take the nanoseconds as sc_time(ns, SC_NS); double fields the nanoseconds.
  template <class F>
  void time(F& field, const char* name, const char*, double, double, const char*, ParamOptions = {}) {
    const double ns = config_.time_ns(full(name));
    if constexpr (std::is_same_v<F, sc_core::sc_time>)
      field = sc_core::sc_time(ns, sc_core::SC_NS);
    else
      field = ns;
  }
  template <class F>
  void size(F& field, const char* name, const char*, double, double, const char*) {
    field = F(config_.size_bytes(full(name)));
  }
  template <class F>
  void integer(F& field, const char* name, const char*, const char*, double, double, const char*,
               ParamOptions = {}) {
    field = F(config_.integer(full(name)));
  }
  template <class F>
  void real(F& field, const char* name, const char*, const char*, double, double, const char*,
            ParamOptions = {}) {
    field = config_.real(full(name));
  }
  void flag(bool& field, const char* name, const char*, const char*) { field = config_.flag(full(name)); }
  void text(std::string& field, const char* name, const char*, std::string (*)(const std::string&), const char*) {
    field = config_.text(full(name));
  }
  template <class E, size_t N>
  void choice(E& field, const char* name, const char*, const fw::EnumEntry<E> (&table)[N], const char*,
              const char*) {
    const std::string n = full(name);
    field = parse_choice(table, n, config_.choice(n));
  }
  template <class F, class I, size_t N, class = std::enable_if_t<std::is_integral_v<I>>>
  void choice(F& field, const char* name, const char*, const I (&)[N], const char*, const char*) {
    field = F(config_.integer(full(name)));
  }
  template <class E, size_t N>
  void choice_or_auto(std::optional<E>& field, const char* name, const char*,
                      const fw::EnumEntry<E> (&table)[N], AutoChoice, const char*, const char*) {
    const std::string n = full(name);
    const std::string& text = config_.choice(n);
    if (text == "auto")
      field.reset();
    else
      field = parse_choice(table, n, text);
  }

 private:
  std::string full(const char* name) const { return full_param_name(prefix_, name); }

  const Config& config_;
  const char* prefix_;
};

// Adds the parameters of P to `registry`, in P::visit's order.
template <class P>
void describe_params(ParamRegistry& registry) {
  P params;
  ParamSpecBuilder builder(registry, P::param_prefix);
  params.visit(builder);
}

// P with every visited field read from `config` (the fields P does not visit
// keep their initializers).
template <class P>
P load_params(const Config& config) {
  P params;
  ConfigReader reader(config, P::param_prefix);
  params.visit(reader);
  return params;
}

// P at the builtin defaults, for a model built without a command line
// (unit tests).
template <class P>
P default_params() {
  return load_params<P>(Config{});
}

}  // namespace nvmesim::platform
