// JSON documents built with nlohmann::ordered_json (keys in insertion order)
// and written by nvmesim's own serializer, so that every number keeps the
// text nvmesim has always printed: nlohmann prints a double in its shortest
// round-trip form ("0.5"), while nvmesim's figures use fixed decimals
// ("0.500000", the text sweep CSV cells keep) and fio's json+ uses %f.
// A value that must be written as given (such a number, or a document
// written elsewhere) is held as a binary value with a subtype of its own.
#pragma once
// Files that build documents include <nlohmann/json.hpp> themselves: this
// header stays light (results.h includes it).

#include <nlohmann/json_fwd.hpp>
#include <string>

#include "nvmesim/firmware/sim/statistics.h"

namespace nvmesim::platform::report {

using Json = nlohmann::ordered_json;

// Written verbatim: a number's literal, or a whole JSON text.
Json raw(const std::string& json_text);
// printf("%.*f"); null when not finite.
Json fixed(double v, int decimals);
// A rate (iops, bw_bytes): at least three decimals and at least ten
// significant digits, so a slow run's 0.0004 I/Os per second is not 0.000
// and rate x time gives back the count.
Json rate(double v);
// A time held in integer picoseconds, as ns with three decimals (exact).
Json ns_from_ps(uint64_t ps);

struct JsonStyle {
  const char* key_separator = ": ";  // fio writes " : "
  // Objects and arrays of at most this many scalars go on one line (0: never).
  size_t inline_max = 12;
  unsigned indent = 2;  // spaces per level
};

// `level`: the indentation level the value starts at (nested documents).
std::string dump(const Json& value, const JsonStyle& style = {}, unsigned level = 0);
// A JSON string literal: quotes, backslashes and control characters escaped,
// other bytes as they are.
std::string quoted(const std::string& s);

// The statistics tree as an object keyed by group name; stats by name
// (vectors: an object by subname); times in ns.
Json stats_json(const stats::GroupValues& tree);

}  // namespace nvmesim::platform::report
