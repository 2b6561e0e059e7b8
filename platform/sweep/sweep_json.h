// A JSON tree for sweeps: nvmesim's JSON output is parsed (by nlohmann/json's
// SAX parser), flattened into CSV columns and written back as one JSONL line.
// The tree is ours, not nlohmann::json, because numbers keep their text: a
// value read and written again is byte-for-byte the same (nlohmann::json
// would re-print 0.1000 as 0.1 and 1e-07 as 1e-07's shortest form).
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace nvmesim::platform::sweep {

struct JsonError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Json {
  enum Kind { Null, Bool, Number, String, Array, Object };
  Kind kind = Null;
  bool boolean = false;
  std::string text;  // Number: the literal as written; String: the decoded text
  std::vector<Json> items;                           // Array
  std::vector<std::pair<std::string, Json>> fields;  // Object, in document order

  static Json string(std::string s);
  static Json number(std::string literal);
  static Json object() { Json j; j.kind = Object; return j; }
  const Json* find(const std::string& key) const;  // Object field, or nullptr
};

// Parses one JSON text (surrounding white space allowed). Throws JsonError
// "offset N: ..." on anything else.
Json parse_json(const std::string& text);

// Compact form: no white space, strings escaped (", \, control characters).
std::string to_json(const Json& value);
std::string json_quote(const std::string& s);

// Leaves of `value` as (dotted name, text): objects join keys with '.',
// arrays use the index ("utilization.vcpu.0.busy"); numbers as written,
// strings decoded, true/false, null as "". `prefix` names the root.
void flatten(const Json& value, const std::string& prefix,
             std::vector<std::pair<std::string, std::string>>& out);

}  // namespace nvmesim::platform::sweep
