// The JSON serializer behind every JSON output (platform/report/json_out.h):
// nlohmann's ordered trees, nvmesim's number text.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "nvmesim/platform/report/json_out.h"

using namespace nvmesim::platform::report;

TEST_CASE("json out: fixed decimals and exact ns keep their text, keys their order", "[json]") {
  Json j;
  j["z"] = fixed(0.5, 6);
  j["a"] = fixed(1.0 / 3.0, 3);
  j["n"] = fixed(1.0 / 0.0, 3);  // not finite: null, as before
  j["t"] = ns_from_ps(1234567);
  j["u"] = uint64_t(18446744073709551615ull);
  j["s"] = std::string("a\"b\\c\x01");
  CHECK(dump(j) == "{\"z\": 0.500000, \"a\": 0.333, \"n\": null, \"t\": 1234.567, "
                   "\"u\": 18446744073709551615, \"s\": \"a\\\"b\\\\c\\u0001\"}");
  CHECK(dump(ns_from_ps(7)) == "0.007");
  // The text parses back to the same values.
  const Json back = Json::parse(dump(j));
  CHECK(back["z"].get<double>() == 0.5);
  CHECK(back["t"].get<double>() == 1234.567);
}

TEST_CASE("json out: long or nested containers go one item a line, fio's layout never inlines", "[json]") {
  Json j;
  j["list"] = {1, 2};
  j["obj"] = {{"x", {{"y", 1}}}};
  CHECK(dump(j) == "{\n  \"list\": [1, 2],\n  \"obj\": {\n    \"x\": {\"y\": 1}\n  }\n}");
  JsonStyle fio;
  fio.key_separator = " : ";
  fio.inline_max = 0;
  CHECK(dump(Json{{"a", 1}, {"b", Json::object()}}, fio) == "{\n  \"a\" : 1,\n  \"b\" : {}\n}");
  // An embedded document goes in as written.
  CHECK(dump(Json{{"doc", raw("{\n    \"k\": 1\n  }")}}) == "{\n  \"doc\": {\n    \"k\": 1\n  }\n}");
}
