// timeline-html reads the user's JSON: every field of every event kind, each
// missing, null or of every other JSON type, or out of range, gives either a
// page (a missing or null field takes its default) or a one-line error that
// names the event and the field; never an unchecked access (a thread_name
// event without "args" read past the object: a heap-buffer-overflow).
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <cstdio>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "nvmesim/platform/timeline/timeline_html.h"
#include "run_binary.h"
#include "text_file.h"

using nvmesim::platform::timeline_html;
using nvmesim::test::run_nvmesim;
using Json = nlohmann::json;

namespace {

// One well-formed event of each kind the reader looks at.
std::vector<Json> event_kinds() {
  return {
      {{"ph", "M"}, {"name", "thread_name"}, {"tid", 1}, {"args", {{"name", "q1"}}}},
      {{"ph", "M"}, {"name", "thread_sort_index"}, {"tid", 1}, {"args", {{"sort_index", 3}}}},
      {{"ph", "X"}, {"name", "work"}, {"tid", 1}, {"ts", 1.5}, {"dur", 2.0}},
      {{"ph", "B"}, {"name", "span"}, {"tid", 1}, {"ts", 4.0}},
      {{"ph", "E"}, {"tid", 1}, {"ts", 5.0}},
      {{"ph", "i"}, {"name", "tick"}, {"tid", 1}, {"ts", 6.0}},
      {{"ph", "b"}, {"name", "read"}, {"tid", 1}, {"ts", 7.0}, {"id", "0x1"}, {"args", {{"tag", 2}}}},
      {{"ph", "e"}, {"name", "read"}, {"tid", 1}, {"ts", 9.0}, {"id", "0x1"}},
  };
}

// Values of every JSON type and the edges of the numeric ranges.
std::vector<Json> hostile_values() {
  return {Json(nullptr), Json(true), Json(-1), Json(0), Json(2147483648LL), Json(-2147483649LL),
          Json(18446744073709551615ULL), Json(1e300), Json(-1e300), Json(0.5), Json(""), Json("x"),
          Json(std::string(5000, 'y')), Json::array(), Json::array({1, 2}), Json::object(),
          Json({{"name", 7}, {"tag", "t"}, {"sort_index", 1e40}})};
}

// What a call gives: "" for a page, else the error text.
std::string outcome(const Json& doc) {
  try {
    const std::string page = timeline_html(doc.dump(), "t");
    CHECK(page.find("</html>") != std::string::npos);
    return "";
  } catch (const std::runtime_error& e) {
    return e.what();
  }
}

}  // namespace

TEST_CASE("timeline-html hostile: every field of every event kind, every JSON type, never an unchecked read",
          "[traces][input]") {
  const std::vector<Json> kinds = event_kinds();
  size_t variants = 0, refused = 0;
  for (size_t k = 0; k < kinds.size(); ++k) {
    // The fields of this kind, its args' fields as "args.NAME", and "args" itself.
    std::vector<std::string> fields;
    for (const auto& [key, v] : kinds[k].items()) {
      fields.push_back(key);
      if (key == "args")
        for (const auto& [sub, w] : v.items()) fields.push_back("args." + sub);
    }
    fields.push_back("args");  // also on kinds without it
    for (const std::string& field : fields)
      for (int missing = 0; missing < 2; ++missing)
        for (const Json& value : missing ? std::vector<Json>{Json()} : hostile_values()) {
          std::vector<Json> events = kinds;
          Json& e = events[k];
          const bool in_args = field.rfind("args.", 0) == 0;
          Json& holder = in_args ? e["args"] : e;
          const std::string key = in_args ? field.substr(5) : field;
          if (missing) holder.erase(key);
          else holder[key] = value;
          const std::string error = outcome(Json{{"traceEvents", events}});
          ++variants;
          INFO("event kind " << k << " field " << field << (missing ? " missing" : " = " + value.dump().substr(0, 40)));
          if (missing || value.is_null()) {
            // A missing field takes its default, never an error.
            CHECK(error.empty());
          } else if (!error.empty()) {
            ++refused;
            // One line that names the event and the field.
            CHECK(error.find('\n') == std::string::npos);
            CHECK(error.rfind("traceEvents[" + std::to_string(k) + "]", 0) == 0);
            // The field, or (an args object of wrong fields) the field inside it.
            const bool inner = value.is_object() && !value.empty() &&
                               (error.find("\"name\"") != std::string::npos ||
                                error.find("\"sort_index\"") != std::string::npos ||
                                error.find("\"tag\"") != std::string::npos);
            CHECK((error.find("\"" + key + "\"") != std::string::npos || inner));
          }
        }
  }
  CHECK(variants > 500);
  CHECK(refused > 100);  // wrong types are refused, not taken as a default
  // Events that are not objects, and documents of other shapes.
  for (const Json& value : hostile_values()) {
    if (value.is_object()) continue;
    INFO(value.dump().substr(0, 40));
    const std::string error = outcome(Json{{"traceEvents", Json::array({kinds[0], value})}});
    CHECK(error == "traceEvents[1] is not an object");
    if (!(value.is_array() && value.empty()))  // [] is an empty trace
      CHECK(!outcome(Json{{"traceEvents", value}}).empty());
  }
  // A deep nesting is read and dropped without exhausting the stack.
  std::string deep = "{\"traceEvents\":[{\"ph\":\"X\",\"tid\":1,\"args\":";
  for (int d = 0; d < 100000; ++d) deep += "[";
  for (int d = 0; d < 100000; ++d) deep += "]";
  deep += "}]}";
  CHECK_NOTHROW(timeline_html(deep, "t"));
}

TEST_CASE("timeline-html hostile: through the binary, a missing args names the track by its id, a wrong type is exit 2",
          "[traces][binary][input]") {
  const std::string base = "/tmp/nvmesim_tlhostile_" + std::to_string(::getpid());
  const std::string in = base + ".json", out = base + ".html";
  struct Case {
    std::string event;
    int exit_code;
    std::string label_or_error;
  };
  const std::vector<Case> cases = {
      {R"({"ph":"M","name":"thread_name","tid":1})", 0, "tid 1"},
      {R"({"ph":"M","name":"thread_name","tid":7,"args":{}})", 0, "tid 7"},
      {R"({"ph":"M","name":"thread_name","tid":2,"args":{"name":null}})", 0, "tid 2"},
      {R"({"ph":"M","name":"thread_name","tid":1,"args":3})", 2, "traceEvents[0]: \"args\" is not an object"},
      {R"({"ph":"M","name":"thread_name","tid":1e20,"args":{"name":"a"}})", 2,
       "traceEvents[0]: \"tid\" is not an integer in [-2147483648, 2147483647]"},
      {R"({"ph":"M","name":"thread_sort_index","tid":1})", 0, ""},
      {R"({"ph":"X","tid":"one"})", 2, "traceEvents[0]: \"tid\" is not an integer in [-2147483648, 2147483647]"},
      {R"({"ph":"X","tid":1,"ts":"0"})", 2, "traceEvents[0]: \"ts\" is not a number"},
      {R"({"ph":"b","tid":1,"id":[1]})", 2, "traceEvents[0]: \"id\" is not a string or a number"},
  };
  for (const Case& c : cases) {
    INFO(c.event);
    std::remove(out.c_str());
    std::ofstream(in) << "{\"traceEvents\":[" << c.event << "]}";
    const auto r = run_nvmesim("timeline-html " + in + " " + out);
    CHECK(r.exit_code == c.exit_code);
    CHECK(r.out.empty());
    if (c.exit_code == 0) {
      CHECK(r.err.empty());
      if (!c.label_or_error.empty())
        CHECK(nvmesim::test::slurp(out).find("data-name=\"" + c.label_or_error + "\"") != std::string::npos);
    } else {
      CHECK(r.err == "nvmesim timeline-html: error: " + in + ": " + c.label_or_error + "\n");
      CHECK(::access(out.c_str(), F_OK) != 0);  // nothing written
    }
  }
  std::remove(in.c_str());
  std::remove(out.c_str());
}
