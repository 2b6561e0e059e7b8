// The visitor that gives a Params struct its defaults as values: it reads
// each visit line's default text (models/sim/param_visit.h) and sets the field
// to it, so `NvmeControllerModel::Params{}` or `PcieLinkParams{}` is a
// working configuration without platform/ (whose Config reads the same
// lines, with the user's values on top: tests/models/test_param_defaults.cpp
// checks that both agree).
//
//   struct FooParams {
//     ...
//     FooParams() { set_param_defaults(*this); }
//     template <class V> void visit(V& v) { ... }
//   };
//
// The default texts a visit line may use here: times with ns, us, ms or s
// (a bare number is ns), sizes with k, m, g, t (x1024), integers (with
// k, m, g when the line counts in fio's way), reals, on/off, a choice's
// name, "auto". A "cyc" time depends on the platform's hv.cpu_ghz and is
// refused (std::logic_error): model visit lines do not use it.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>

#include <systemc>

#include "nvmesim/models/sim/param_visit.h"

namespace nvmesim::models {

class ParamDefaults {
 public:
  template <class F>
  void time(F& field, const char* name, const char* def, double, double, const char*, ParamOptions = {}) {
    const double ns = time_ns(name, def);
    if constexpr (std::is_same_v<F, sc_core::sc_time>)
      field = sc_core::sc_time(ns, sc_core::SC_NS);
    else
      field = F(ns);
  }
  template <class F>
  void size(F& field, const char* name, const char* def, double, double, const char*) {
    field = F(scaled(name, def, 1024.0, "b"));
  }
  template <class F>
  void integer(F& field, const char* name, const char* def, const char*, double, double, const char*,
               ParamOptions options = {}) {
    field = F(options.count_suffixes ? scaled(name, def, 1024.0, "") : whole(name, def));
  }
  template <class F>
  void real(F& field, const char* name, const char* def, const char*, double, double, const char*, ParamOptions = {}) {
    field = F(number(name, def));
  }
  void flag(bool& field, const char* name, const char* def, const char*) {
    if (std::strcmp(def, "on") == 0)
      field = true;
    else if (std::strcmp(def, "off") == 0)
      field = false;
    else
      bad(name, def);
  }
  // A checked text (fio's bssplit, random_distribution): its default as written.
  void text(std::string& field, const char*, const char* def, std::string (*)(const std::string&), const char*) {
    field = def;
  }
  template <class E, size_t N>
  void choice(E& field, const char* name, const char* def, const fw::EnumEntry<E> (&table)[N], const char*,
              const char*) {
    field = pick(table, name, def);
  }
  template <class F, class I, size_t N, class = std::enable_if_t<std::is_integral_v<I>>>
  void choice(F& field, const char* name, const char* def, const I (&values)[N], const char*, const char*) {
    const int64_t v = whole(name, def);
    for (I allowed : values)
      if (int64_t(allowed) == v) {
        field = F(v);
        return;
      }
    bad(name, def);
  }
  template <class E, size_t N>
  void choice_or_auto(std::optional<E>& field, const char* name, const char* def,
                      const fw::EnumEntry<E> (&table)[N], AutoChoice, const char*, const char*) {
    if (std::strcmp(def, "auto") == 0)
      field.reset();
    else
      field = pick(table, name, def);
  }

 private:
  [[noreturn]] static void bad(const char* name, const char* def) {
    throw std::logic_error(std::string("parameter ") + name + ": default \"" + def +
                           "\" cannot be read without the platform's configuration");
  }
  // The number at the start of `def`; *rest: what follows it.
  static double leading(const char* name, const char* def, const char** rest) {
    char* end = nullptr;
    const double v = std::strtod(def, &end);
    if (end == def) bad(name, def);
    *rest = end;
    return v;
  }
  static double number(const char* name, const char* def) {
    const char* rest;
    const double v = leading(name, def, &rest);
    if (*rest) bad(name, def);
    return v;
  }
  static int64_t whole(const char* name, const char* def) {
    const double v = number(name, def);
    if (v != std::floor(v)) bad(name, def);
    return int64_t(v);
  }
  static double time_ns(const char* name, const char* def) {
    const char* unit;
    const double v = leading(name, def, &unit);
    if (!*unit || !std::strcmp(unit, "ns")) return v;
    if (!std::strcmp(unit, "us")) return v * 1e3;
    if (!std::strcmp(unit, "ms")) return v * 1e6;
    if (!std::strcmp(unit, "s")) return v * 1e9;
    bad(name, def);  // "cyc" among them
  }
  // A number with an optional k, m, g, t suffix (powers of `base`), or `plain`.
  static uint64_t scaled(const char* name, const char* def, double base, const char* plain) {
    const char* suffix;
    const double v = leading(name, def, &suffix);
    double mult = 1;
    const char s = char(*suffix | 0x20);  // lower case
    if (!*suffix || !std::strcmp(suffix, plain)) mult = 1;
    else if (s == 'k') mult = base;
    else if (s == 'm') mult = base * base;
    else if (s == 'g') mult = base * base * base;
    else if (s == 't') mult = base * base * base * base;
    else bad(name, def);
    if (*suffix && suffix[1] && std::strcmp(suffix, plain) != 0) bad(name, def);
    return uint64_t(v * mult);
  }
  template <class E, size_t N>
  static E pick(const fw::EnumEntry<E> (&table)[N], const char* name, const char* def) {
    for (const auto& e : table)
      if (std::strcmp(e.name, def) == 0) return e.value;
    bad(name, def);
  }
};

// Sets every field P::visit names to its visit line's default.
template <class P>
void set_param_defaults(P& params) {
  ParamDefaults d;
  params.visit(d);
}

}  // namespace nvmesim::models
