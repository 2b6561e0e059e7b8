// What a Params struct needs to describe its configuration parameters,
// without depending on platform/ (the visitors live in platform/config/).
//
// A Params struct that the configuration fills has
//   static constexpr const char* param_prefix = "nvme";   // "" for fio's flat names
//   template <class V> void visit(V& v) { v.time(cmd_cost, "cmd_cost", "1us", 0, 1 * MS, "help"); ... }
// One line per parameter, in --list-params order, naming the field, the
// parameter (the prefix is added; a name with a dot is already whole, e.g.
// "host.cores"), its default as a user types it, unit, range and help:
//   v.time(field, name, default, min_ns, max_ns, help [, options])   sc_time or double ns
//   v.size(field, name, default, min_bytes, max_bytes, help)
//   v.integer(field, name, default, unit, min, max, help [, options])
//   v.real(field, name, default, unit, min, max, help [, options])
//   v.flag(field, name, default, help)                                bool, on/off
//   v.choice(field, name, default, table, unit, help)                  fw::EnumEntry table,
//                                                                      or an array of integers
//   v.choice_or_auto(field, name, default, table, AutoChoice, unit, help)
//                                                                      std::optional<E>: "auto" = empty
//   v.text(field, name, default, check, help)                          std::string; check(text)
//                                                                      returns "" or what is wrong
// The default is the visit line's text and nowhere else: it is what
// --list-params shows and what a Config starts from, and only text can say
// "5100cyc" (cycles at whatever hv.cpu_ghz is) or keep "1500ns" as written.
// So a visited field has no initializer of its own; a model built without
// a Config (unit tests) takes platform::defaults<P>() or sets its fields.
#pragma once

#include "nvmesim/firmware/sim/enum_table.h"

namespace nvmesim::models {

using fw::EnumEntry;

// Ranges are in base units: nanoseconds for times, bytes for sizes.
namespace param_units {
constexpr double NS = 1, US = 1e3, MS = 1e6, S = 1e9;
constexpr double KiB = 1024.0, MiB = KiB * 1024, GiB = MiB * 1024, TiB = GiB * 1024;
}  // namespace param_units

// Less common traits of a parameter (positional: C++17 has no designated
// initializers).
struct ParamOptions {
  bool count_suffixes = false;  // Integer: k, m, g multiply by 1024 (fio's counts)
  bool bare_ns = false;         // Time: a bare number is ns (a parameter that once took ns)
  const char* alias = "";       // another accepted (whole) name
  // Real: a value other than 0 must be at least this (a rate whose reciprocal,
  // a time, must fit the simulator's range; 0 keeps its own meaning).
  double min_nonzero = 0;
};

// Where "auto" stands among a choice_or_auto's names.
enum class AutoChoice { First, Last };

}  // namespace nvmesim::models
