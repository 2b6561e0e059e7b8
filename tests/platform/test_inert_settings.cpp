// A setting that does nothing says so: for every warned requirement of the
// table (platform/config/param_requires.cpp), generated: the parameter set
// to a value that acts, the parameter it needs at a value that does not let
// it act. The run warns once, naming both, exits 0, and its figures are
// exactly those of the run without the setting (the warning tells the
// truth: it does nothing). With the needed value there is no warning. In
// the comparison (buffer off and spec) a setting is warned about only if
// it does nothing in both runs. --help lists every requirement.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "nvmesim/platform/config/param_requires.h"
#include "nvmesim/platform/config/params.h"
#include "run_binary.h"

using nvmesim::platform::ParamKind;
using nvmesim::platform::ParamRegistry;
using nvmesim::platform::ParamSpec;
using nvmesim::test::run_nvmesim;

namespace {

std::vector<std::string> choices_of(const ParamSpec& s) {
  if (s.kind == ParamKind::Bool) return {"on", "off"};
  return s.choices;
}

// A value of `s` other than its default (and than `avoid`), that acts.
std::string acting_value(const ParamSpec& s, const char* avoid, const char* only) {
  if (only) return only;
  for (const std::string& c : choices_of(s))
    if (c != s.default_value && (!avoid || c != avoid)) return c;
  char b[64];
  switch (s.kind) {
    case ParamKind::Time: std::snprintf(b, sizeof b, "%.9gns", s.max == 0 ? 1 : std::min(s.max, 1e6)); break;
    case ParamKind::Integer: std::snprintf(b, sizeof b, "%.0f", s.max > 1 ? std::min(s.max, 2.0) : s.max); break;
    case ParamKind::Real: std::snprintf(b, sizeof b, "%.9g", (s.min + s.max) / 2); break;
    default: std::snprintf(b, sizeof b, "%.0f", s.max); break;
  }
  return b;
}

// The run's JSON without its echo of the configuration.
std::string figures(const std::string& json) {
  auto j = nlohmann::json::parse(json);
  j.erase("config");
  return j.dump();
}

}  // namespace

TEST_CASE("inert settings: every warned requirement warns, names both, and truly does nothing",
          "[params][binary]") {
  const ParamRegistry& reg = ParamRegistry::builtin();
  size_t checked = 0;
  for (const auto& q : nvmesim::platform::param_requirements()) {
    if (q.refuse) continue;
    const ParamSpec* param = reg.find(q.param);
    const ParamSpec* needs = reg.find(q.needs);
    REQUIRE(param);
    REQUIRE(needs);
    std::string lacking;
    for (const std::string& c : choices_of(*needs))
      if (std::find(q.values.begin(), q.values.end(), c) == q.values.end()) lacking = c;
    REQUIRE(!lacking.empty());
    const std::string value = acting_value(*param, q.inert, q.only);
    std::string base = "--preset=none --single-run --number_ios=40 --output-format=json --" + std::string(q.needs) + "=" + lacking;
    // The parameter's refused requirements met (hv.fault needs hv.notify=ioeventfd).
    for (const auto& other : nvmesim::platform::param_requirements())
      if (other.refuse && std::string(other.param) == q.param && std::string(other.needs) != q.needs)
        base += " --" + std::string(other.needs) + "=" + other.values[0];
    const std::string with = base + " --" + q.param + "=" + value;  // base holds --preset=none
    INFO("nvmesim " << with);
    const auto r = run_nvmesim(with);
    REQUIRE(r.exit_code == 0);
    const std::string line = "nvmesim: warning: --" + std::string(q.param) + ": ";
    const size_t at = r.err.find(line);
    REQUIRE(at != std::string::npos);
    const std::string warning = r.err.substr(at, r.err.find('\n', at) - at);
    CHECK(warning.find("needs " + std::string(q.needs) + " ") != std::string::npos);
    CHECK(warning.find("(it is " + lacking + ": " + q.why + "); the setting does nothing") != std::string::npos);
    // It does nothing: the same figures as without it.
    const auto without = run_nvmesim(base);
    REQUIRE(without.exit_code == 0);
    CHECK(figures(r.out) == figures(without.out));
    ++checked;
  }
  CHECK(checked >= 29);  // every warned row of the table
}

TEST_CASE("inert settings: with the needed value no warning, and the comparison warns only when inert in both runs",
          "[params][binary]") {
  // Needed value given: silent.
  for (const std::string args : {"--device=virtio-blk --virtio.event_idx=off", "--nvme.dbbuf=spec --hv.notify=ioeventfd",
                                 "--nvme.dbbuf=vendor --guest.dbbuf_fault=misaligned",
                                 "--nvme.dbbuf=spec --guest.io_prp_fault=misaligned"}) {
    INFO("nvmesim " << args);
    const auto r = run_nvmesim("--single-run --number_ios=20 " + args + " >/dev/null");
    CHECK(r.err.find("warning") == std::string::npos);
  }
  // The comparison: ioeventfd acts in its spec run, virtio.* in neither.
  const auto cmp = run_nvmesim("--number_ios=20 --hv.notify=ioeventfd --virtio.queues=2 >/dev/null");
  CHECK(cmp.exit_code == 0);
  CHECK(cmp.err.find("--hv.notify") == std::string::npos);
  CHECK(cmp.err.find("nvmesim: warning: --virtio.queues: ") != std::string::npos);
  // --help lists each requirement, from the same table.
  const std::string help = run_nvmesim("--help").out;
  for (const auto& q : nvmesim::platform::param_requirements()) {
    INFO(q.param << " needs " << q.needs);
    CHECK(help.find("  " + std::string(q.param)) != std::string::npos);
  }
  CHECK(help.find("  hv.notify=ioeventfd needs nvme.dbbuf=spec|vendor: QEMU 7.2 registers the ioeventfd only with "
                  "the doorbell buffer on") != std::string::npos);
}

// A preset sets a whole setup (qemu-7.1: the timer notifier and its delay);
// the user's own choice of another notifier leaves its hv.timer_delay inert
// without a warning, but the same setting typed by the user warns.
TEST_CASE("inert settings: a preset's own setting left inert by the user's choice is not warned about",
          "[params][preset]") {
  const std::string base = "--preset qemu-7.1,kvm --hv.notify=ioeventfd --nvme.dbbuf=spec --single-run "
                           "--number_ios=50 >/dev/null";
  const auto quiet = run_nvmesim(base);
  CHECK(quiet.exit_code == 0);
  CHECK(quiet.err.find("hv.timer_delay") == std::string::npos);
  const auto typed = run_nvmesim(base + " --hv.timer_delay=1us");
  CHECK(typed.exit_code == 0);
  CHECK(typed.err.find("nvmesim: warning: --hv.timer_delay: needs hv.notify timer") != std::string::npos);
}
