// Numeric edges of every time and rate parameter: a time other than 0 that
// would round to 0 at the kernel's 1 ps resolution (no limit, no cost) is
// refused, in every unit (cycles too, at any hv.cpu_ghz), and so is a value
// beyond its range; a rate whose reciprocal time would overflow the kernel
// is refused below its smallest value other than 0. Each refusal is one
// line naming the field and the allowed values, exit 2; the values just
// inside are accepted. Generated from the parameter registry, so a new
// parameter is covered as it is added.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "nvmesim/platform/config/params.h"
#include "run_binary.h"

using nvmesim::platform::Config;
using nvmesim::platform::ConfigError;
using nvmesim::platform::ParamKind;
using nvmesim::platform::ParamRegistry;
using nvmesim::platform::ParamSpec;
using nvmesim::test::run_nvmesim;

namespace {

// "" when accepted, else the error text.
std::string set_error(const std::string& name, const std::string& value,
                      const std::vector<std::pair<std::string, std::string>>& before = {}) {
  Config c;
  try {
    for (const auto& [n, v] : before) c.set(n, v);
    c.set(name, value);
    c.validate_all();
    return "";
  } catch (const ConfigError& e) {
    return e.what();
  }
}

}  // namespace

TEST_CASE("numeric edges: every time parameter refuses what rounds to 0 ps, in every unit", "[params][input]") {
  size_t params = 0, refusals = 0;
  for (const ParamSpec& spec : ParamRegistry::builtin().all()) {
    if (spec.kind != ParamKind::Time) continue;
    ++params;
    const std::string field = "--" + spec.name + ": ";
    // Below 1 ps in each unit, and cycles at the slowest and fastest clocks.
    const std::vector<std::pair<std::string, std::vector<std::pair<std::string, std::string>>>> tiny = {
        {"0.0009ns", {}},  {"0.0001ns", {}}, {"1e-7us", {}},    {"9e-10ms", {}},
        {"1e-13s", {}},    {"1e-300s", {}},  {"4.9e-324ns", {}}, {"0.002cyc", {{"hv.cpu_ghz", "2.3"}}},
        {"0.00009cyc", {{"hv.cpu_ghz", "0.1"}}}, {"1e-30cyc", {{"hv.cpu_ghz", "10"}}}};
    for (const auto& [value, before] : tiny) {
      INFO(spec.name << " = " << value);
      const std::string e = set_error(spec.name, value, before);
      ++refusals;
      CHECK(e.rfind(field, 0) == 0);
      // Its own refusal, or (a parameter with a minimum above 0) the range.
      const bool own = e.find("is below the simulator's time resolution of 1 ps (0, or ") != std::string::npos;
      CHECK((own || (spec.min > 0 && e.find("out of range") != std::string::npos)));
    }
    // Beyond the range at the top, in every unit: never a wrap or an overflow.
    for (const std::string value : {"1e300s", "1e20ns", "1e300cyc", "1.8e10s"}) {
      INFO(spec.name << " = " << value);
      const std::string e = set_error(spec.name, value);
      CHECK(e.rfind(field, 0) == 0);
      CHECK(e.find("out of range (") != std::string::npos);
    }
    // Just inside: 0 (unless the minimum is above 0), 1 ps, and the maximum.
    if (spec.min == 0) CHECK(set_error(spec.name, "0ns").empty());
    if (spec.min <= 0.001) CHECK(set_error(spec.name, "0.001ns").empty());
    char max[64];
    std::snprintf(max, sizeof max, "%.17gns", spec.max);
    CHECK(set_error(spec.name, max).empty());
  }
  CHECK(params >= 30);
  CHECK(refusals >= 300);
}

TEST_CASE("numeric edges: a rate other than 0 is at least its smallest value, so its time fits", "[params][input]") {
  size_t rates = 0;
  for (const ParamSpec& spec : ParamRegistry::builtin().all()) {
    if (spec.kind != ParamKind::Real) continue;
    const double low = spec.min_nonzero > 0 ? spec.min_nonzero : spec.min;
    const std::string field = "--" + spec.name + ": ";
    // Tiny positive values: refused unless the parameter takes them (a share, not a rate).
    for (const std::string value : {"4.9e-324", "1e-308", "1e-12", "1e-9"}) {
      INFO(spec.name << " = " << value);
      const std::string e = set_error(spec.name, value);
      if (std::strtod(value.c_str(), nullptr) >= low) {
        CHECK(e.empty());
        continue;
      }
      CHECK(e.rfind(field, 0) == 0);
      CHECK(e.find(spec.min_nonzero > 0 ? "the smallest value other than 0 (0, or " : "out of range (") !=
            std::string::npos);
    }
    if (spec.min_nonzero > 0) {
      ++rates;
      CHECK(set_error(spec.name, "0").empty());
      char at[64];
      std::snprintf(at, sizeof at, "%.17g", spec.min_nonzero);
      CHECK(set_error(spec.name, at).empty());
    }
  }
  CHECK(rates >= 1);  // nvme.backend_bandwidth
}

TEST_CASE("numeric edges: through the binary, one line naming the field, exit 2, nothing run", "[params][binary]") {
  struct Case {
    std::string args, error;
  };
  const std::vector<Case> cases = {
      {"--number_ios=0 --runtime=0.0001ns",
       "--runtime: 0.0001ns is below the simulator's time resolution of 1 ps (0, or 0.001ns..3600s)"},
      {"--runtime=1e-300s", "--runtime: 1e-300s is below the simulator's time resolution of 1 ps (0, or 0.001ns..3600s)"},
      {"--nvme.backend=latency --nvme.backend_bandwidth=1e-12",
       "--nvme.backend_bandwidth: 1e-12 is below 0.001, the smallest value other than 0 (0, or 0.001..1000000)"},
      {"--nvme.backend=latency --nvme.backend_bandwidth=1e-308",
       "--nvme.backend_bandwidth: 1e-308 is below 0.001, the smallest value other than 0 (0, or 0.001..1000000)"},
      {"--hv.exit_mmio=1e-9cyc",
       "--hv.exit_mmio: 1e-09cyc (4.34783e-10ns at hv.cpu_ghz 2.3) is below the simulator's time resolution of 1 ps "
       "(0, or 0.001ns..1ms)"},
  };
  for (const Case& c : cases) nvmesim::test::check_refused("--single-run " + c.args, "nvmesim: error: " + c.error);
  // The slowest rate accepted moves a 4 KiB I/O in 4.096 s: a bounded run.
  const auto r = run_nvmesim("--single-run --nvme.backend=latency --nvme.backend_bandwidth=0.001 --number_ios=3 "
                             "--iodepth=1 --output-format=json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(nvmesim::test::json_number(r.out, "ios") == 3);
}
