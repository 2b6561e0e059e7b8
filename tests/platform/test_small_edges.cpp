// Small edges (class 14 of issue 27): every real value echoes in its
// shortest form (never hundreds of digits) and reads back as itself; ';'
// and '#' comments behave alike wherever a blank precedes them (after a
// section header, after a value); verify's outputs are distinct files.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "nvmesim/platform/config/params.h"
#include "run_binary.h"
#include "temp_file.h"

using nvmesim::platform::Config;
using nvmesim::platform::ConfigError;
using nvmesim::platform::ParamKind;
using nvmesim::platform::ParamRegistry;
using nvmesim::test::run_nvmesim;
using nvmesim::test::TempFile;

TEST_CASE("small edges: every real and time value echoes short and reads back as itself", "[params][input]") {
  size_t checked = 0;
  const std::vector<double> mantissas = {1, 4.9, 2.5, 7.123456789};
  for (const auto& spec : ParamRegistry::builtin().all()) {
    if (spec.kind != ParamKind::Real && spec.kind != ParamKind::Time) continue;
    for (int exp = -324; exp <= 20; exp += 7)
      for (double m : mantissas) {
        char text[64];
        std::snprintf(text, sizeof text, "%.9ge%d%s", m, exp, spec.kind == ParamKind::Time ? "ns" : "");
        Config c;
        try {
          c.set(spec.name, text);
        } catch (const ConfigError&) {
          continue;  // out of range: refused with its field (tests/platform/test_numeric_edges.cpp)
        }
        const std::string echoed = c.text(spec.name);
        INFO(spec.name << " = " << text << " -> " << echoed);
        CHECK(echoed.size() <= 26);
        // The echo reads back as the same value.
        Config again;
        again.set(spec.name, echoed);
        CHECK(again.text(spec.name) == echoed);
        if (spec.kind == ParamKind::Real) CHECK(again.real(spec.name) == c.real(spec.name));
        else CHECK(again.time_ns(spec.name) == c.time_ns(spec.name));
        ++checked;
      }
  }
  CHECK(checked > 100);
}

TEST_CASE("small edges: a semicolon after a blank is a comment as '#' is, in every place of a config file", "[params][input]") {
  // (line with the comment marker C, whether it parses, the value it sets for hv.exit_mmio)
  struct Place {
    std::string text;  // C stands for the marker
    bool ok;
  };
  const std::vector<Place> places = {
      {"C comment\n[hv]\nexit_mmio = 7us\n", true},       {"[hv] C host costs\nexit_mmio = 7us\n", true},
      {"[hv]\nexit_mmio = 7us C why\n", true},            {"[hv]\nexit_mmio = 7us\tC why\n", true},
      {"[hv]\n  C indented\nexit_mmio = 7us\n", true},    {"[hv]\nexit_mmio = 7us\nC last\n", true},
      {"[hv]C glued\nexit_mmio = 7us\n", true},           {"[hv]\nexit_mmio = 7usC glued\n", true},
  };
  for (const char marker : {'#', ';'})
    for (const Place& p : places) {
      std::string text = p.text;
      for (char& ch : text)
        if (ch == 'C') ch = marker;
      // Only '#' ends a value or header it touches; a glued ';' stays part of it.
      const bool glued = p.text.find("C glued") != std::string::npos &&
                         p.text[p.text.find("C glued") - 1] != ' ' && p.text[p.text.find("C glued") - 1] != '\n';
      const bool ok = marker == '#' || !glued;
      INFO("marker " << marker << ": " << text);
      const TempFile f(text);
      const auto r = run_nvmesim("--single-run --number_ios=10 --output-format=json --config " + f.path);
      if (ok) {
        CHECK(r.exit_code == 0);
        CHECK(r.out.find("\"hv.exit_mmio\": \"7us\"") != std::string::npos);
      } else {
        CHECK(r.exit_code == 2);
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
        CHECK(r.err.find("config file " + f.path + " line ") != std::string::npos);
      }
    }
}
