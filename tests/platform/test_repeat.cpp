// --repeat N (platform/system/repeat.h, docs/repeat.md): the experiment over
// seeds seed..seed+N-1, each seed's document exactly that seed's own run,
// each figure's interval the Student-t formula over those documents' values;
// bad values and combinations refused with one line; a signal keeps the
// finished seeds.
#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <fcntl.h>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include "run_binary.h"
#include "spawn_binary.h"
#include "test_sweep_support.h"

using nvmesim::test::check_refused;
using nvmesim::test::run_nvmesim;
using nvmesim::test::ScratchDir;
using nvmesim::test::slurp;
using Json = nlohmann::ordered_json;

namespace {

// The host's measured wake-ups (the default, set here by name) make each
// seed its own run.
const std::string kJitter = " --preset=none --hv.wakeup=measured --number_ios=2000";

std::vector<std::string> keys(const Json& j) {
  std::vector<std::string> k;
  for (auto it = j.begin(); it != j.end(); ++it) k.push_back(it.key());
  return k;
}

// A figure of a run's document by its dotted key ("lat_ns.percentile.99.000000").
double figure(const Json& doc, const std::string& key) {
  const Json* at = &doc;
  std::string rest = key;
  while (!at->contains(rest)) {
    size_t dot = rest.find('.');
    while (dot != std::string::npos && !at->contains(rest.substr(0, dot))) dot = rest.find('.', dot + 1);
    REQUIRE(dot != std::string::npos);
    at = &(*at)[rest.substr(0, dot)];
    rest = rest.substr(dot + 1);
  }
  return (*at)[rest].get<double>();
}

// The interval by its definition: mean, s with n - 1, t(0.975, n - 1) from
// the t table (n = 2: 12.7062047, n = 3: 4.3026527).
void check_interval(const Json& interval, const std::vector<double>& v) {
  const double n = double(v.size());
  double sum = 0;
  for (double x : v) sum += x;
  const double mean = sum / n;
  double sq = 0;
  for (double x : v) sq += (x - mean) * (x - mean);
  const double t = v.size() == 2 ? 12.706204736174707 : 4.302652729749464;
  const double half = t * std::sqrt(sq / (n - 1)) / std::sqrt(n);
  CHECK(interval["n"] == v.size());
  CHECK(interval["mean"].get<double>() == Approx(mean).margin(1e-6).epsilon(1e-12));
  CHECK(interval["half_width"].get<double>() == Approx(half).margin(1e-6).epsilon(1e-9));
  CHECK(interval["min"].get<double>() == Approx(*std::min_element(v.begin(), v.end())).margin(1e-6));
  CHECK(interval["max"].get<double>() == Approx(*std::max_element(v.begin(), v.end())).margin(1e-6));
}

std::string with_commas(double v) {
  std::string s = std::to_string(static_cast<long long>(std::llround(v)));
  for (int at = int(s.size()) - 3; at > 0; at -= 3) s.insert(size_t(at), ",");
  return s;
}

}  // namespace

TEST_CASE("repeat: one run over seeds, each seed's document that seed's own run, intervals by the formula",
          "[repeat][binary]") {
  const std::string args = "--single-run --nvme.dbbuf=spec" + kJitter;
  const auto r = run_nvmesim(args + " --repeat=3 --seed=5 --output-format=json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.empty());
  const Json doc = Json::parse(r.out);
  CHECK(keys(doc) ==
        std::vector<std::string>{"experiment", "outcome", "headline", "repeat", "seeds", "runs", "intervals"});
  CHECK(doc["outcome"] == "ok");
  CHECK(doc["headline"] == "");
  CHECK(doc["repeat"] == 3);
  CHECK(doc["seeds"] == Json::array({5, 6, 7}));
  REQUIRE(doc["runs"].size() == 3);
  // Each seed's document is exactly the document of --seed=K alone.
  for (int k = 0; k < 3; ++k) {
    INFO("seed " << 5 + k);
    const auto one = run_nvmesim(args + " --seed=" + std::to_string(5 + k) + " --output-format=json");
    REQUIRE(one.exit_code == 0);
    CHECK(doc["runs"][k] == Json::parse(one.out));
  }
  // The seeds give different runs.
  CHECK(doc["runs"][0]["iops"] != doc["runs"][1]["iops"]);
  CHECK(doc["runs"][1]["lat_ns"]["mean"] != doc["runs"][2]["lat_ns"]["mean"]);
  // Every figure's interval over the seed values.
  const Json& in = doc["intervals"];
  for (const char* key : {"iops", "lat_ns.mean", "lat_ns.percentile.50.000000", "lat_ns.percentile.99.000000",
                          "per_io.exits", "eventidx.sq_hit_rate", "eventidx.cq_hit_rate", "clat_ns.max"}) {
    INFO(key);
    REQUIRE(in.contains(key));
    std::vector<double> v;
    for (const Json& run : doc["runs"]) v.push_back(figure(run, key));
    check_interval(in[key], v);
  }
  CHECK(in["ios"]["half_width"].get<double>() == 0);  // 2000 I/Os whatever the seed

  // The text report: the same figures, as "mean ± half-width (95%, n seeds)".
  const auto text = run_nvmesim(args + " --repeat=3 --seed=5");
  REQUIRE(text.exit_code == 0);
  const auto lines = nvmesim::test::text_lines(text.out);
  REQUIRE(lines.size() >= 14);
  CHECK(lines[0] == "nvmesim one run over 3 seeds (seed=5..7): rw=randread bs=4k iodepth=32 numjobs=1 backend=null "
                    "number_ios=2000 nvme.dbbuf=spec, MMIO doorbell exit 5100cyc at 2.3 GHz");
  CHECK(lines[1] == "also set: hv.wakeup=measured");
  const Json& iops = in["iops"];
  char label[64];
  std::snprintf(label, sizeof label, "  %-28s ", "IOPS");
  CHECK(lines[4] == label + with_commas(iops["mean"].get<double>()) + " ± " +
                        with_commas(iops["half_width"].get<double>()) + " (95%, 3 seeds)  min " +
                        with_commas(iops["min"].get<double>()) + "  max " + with_commas(iops["max"].get<double>()));
  CHECK(text.out.find("  SQ EventIdx hit rate ") != std::string::npos);
  CHECK(text.out.find("  latency p99 (ns) ") != std::string::npos);
}

TEST_CASE("repeat: the default comparison over seeds: both runs per seed, and spec/off per seed",
          "[repeat][binary]") {
  const auto r = run_nvmesim("--repeat=2 --output-format=json" + kJitter);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const Json doc = Json::parse(r.out);
  CHECK(doc["experiment"] == "default: doorbell buffer off vs spec, over seeds");
  CHECK(doc["seeds"] == Json::array({1, 2}));
  CHECK(keys(doc["runs"]) == std::vector<std::string>{"off", "spec"});
  CHECK(keys(doc["intervals"]) == std::vector<std::string>{"off", "spec", "ratio_spec_to_off"});
  for (const char* mode : {"off", "spec"})
    for (int k = 0; k < 2; ++k) {
      INFO(mode << " seed " << k + 1);
      const auto one =
          run_nvmesim("--nvme.dbbuf=" + std::string(mode) + " --seed=" + std::to_string(k + 1) + " --output-format=json" + kJitter);
      REQUIRE(one.exit_code == 0);
      CHECK(doc["runs"][mode][k] == Json::parse(one.out));
    }
  const Json &off = doc["runs"]["off"], &spec = doc["runs"]["spec"];
  CHECK(spec[0]["iops"] != spec[1]["iops"]);
  check_interval(doc["intervals"]["spec"]["iops"], {spec[0]["iops"].get<double>(), spec[1]["iops"].get<double>()});
  check_interval(doc["intervals"]["ratio_spec_to_off"]["iops"],
                 {spec[0]["iops"].get<double>() / off[0]["iops"].get<double>(),
                  spec[1]["iops"].get<double>() / off[1]["iops"].get<double>()});
  // Without the buffer there is no hit rate: no value, no interval.
  const Json& none = doc["intervals"]["off"]["eventidx.sq_hit_rate"];
  CHECK(none["n"] == 0);
  CHECK(none["mean"].is_null());
  CHECK(none["half_width"].is_null());

  const auto text = run_nvmesim("--repeat=2" + kJitter);
  REQUIRE(text.exit_code == 0);
  CHECK(text.out.rfind("nvmesim default experiment over 2 seeds (seed=1..2): rw=randread", 0) == 0);
  for (const char* block : {"\ndbbuf=off:\n  IOPS ", "\ndbbuf=spec:\n  IOPS ", "\nspec/off, per seed:\n  IOPS "})
    CHECK(text.out.find(block) != std::string::npos);
  CHECK(text.out.find("(95%, 2 seeds)") != std::string::npos);
}

TEST_CASE("repeat: bad values and combinations are refused with one line, exit 2", "[repeat][cli][binary]") {
  for (const char* v : {"0", "1", "1001", "abc", "-2", "2.5"}) {
    const std::string value = v;
    check_refused("--repeat='" + value + "'", "nvmesim: error: --repeat: '" + value + "' is not an integer in 2..1000");
  }
  check_refused("--repeat=3 --seed=9223372036854775806",
                "nvmesim: error: --repeat: 3 seeds from seed=9223372036854775806 pass the largest seed "
                "(9223372036854775807)");
  check_refused("--repeat=2 --single-run --output-format=json+",
                "nvmesim: error: --repeat: --output-format=json+ is fio's layout of one run; use --output-format=json");
  check_refused("--repeat=2 --single-run --vcd /tmp/nvmesim_repeat_never.vcd",
                "nvmesim: error: --repeat: a trace (--vcd) follows one run; trace one seed without --repeat");
  // A sweep runs each point once, with its own seed.
  for (const char* spelling : {"--repeat=3", "--repeat 3"})
    check_refused(std::string("sweep --grid iodepth=1,2 --out /tmp/nvmesim_repeat_never ") + spelling,
                  "nvmesim sweep: error: --repeat: a sweep runs each point once with its own seed; sweep seed values "
                  "as an axis (--grid seed=1,2,3)");
}

TEST_CASE("repeat: a failing seed stops the repeat with its message and exit status", "[repeat][binary]") {
  // The vendor buffer with the admin queue's shadow refuses the bring-up: exit 4.
  const auto r = run_nvmesim("--guest.admin_shadow=on --nvme.dbbuf=vendor --number_ios=20 --repeat=3 --output-format=json");
  CHECK(r.exit_code == 4);
  const Json doc = Json::parse(r.out);
  CHECK(doc["outcome"] == "bringup_failed");
  CHECK(doc["seeds"] == Json::array());
  const std::string headline = doc["headline"];
  CHECK(headline.rfind("seed=1: BRING-UP FAILED: ", 0) == 0);
  CHECK(headline.find("; --repeat stopped at this seed") != std::string::npos);
}

TEST_CASE("repeat: a signal goes to the running seed, the finished seeds are reported, exit 128 + the signal",
          "[repeat][interrupt][binary]") {
  ScratchDir d;
  const std::string out = d / "stdout", err = d / "stderr";
  // Each seed's 300000 I/Os take about 0.7 s of wall time (release build).
  const std::vector<std::string> args = {"--single-run", "--number_ios=300000", "--hv.wakeup=measured",
                                         "--repeat=3", "--output-format=json"};
  const pid_t pid = nvmesim::test::spawn_nvmesim(args, out, err);
  REQUIRE(pid >= 0);
  // Wait for the second seed's child (another pid than the first's), then signal.
  const std::string children = "/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children";
  std::string first;
  const auto w0 = std::chrono::steady_clock::now();
  for (;;) {
    std::ifstream in(children);
    std::string child;
    if (in >> child) {
      if (first.empty()) first = child;
      else if (child != first) break;
    }
    if (std::chrono::steady_clock::now() - w0 > std::chrono::seconds(30)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ::kill(pid, SIGINT);
  int status = 0;
  const auto t0 = std::chrono::steady_clock::now();
  while (::waitpid(pid, &status, WNOHANG) != pid) {
    if (std::chrono::steady_clock::now() - t0 > std::chrono::seconds(30)) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const std::string said = slurp(out), errors = slurp(err);
  INFO(said << errors);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 130);
  if (!NVMESIM_SANITIZED) CHECK(errors.empty());
  const Json doc = Json::parse(said);
  CHECK(doc["outcome"] == "interrupted");
  CHECK(doc["interrupted"] == "SIGINT");
  // Seed 1 finished; seed 2, cut short, is left out; seed 3 never ran.
  CHECK(doc["seeds"] == Json::array({1}));
  REQUIRE(doc["runs"].size() == 1);
  CHECK(doc["runs"][0]["ios"] == 300000);
  CHECK(doc["runs"][0]["interrupted"].is_null());
  CHECK(doc["headline"].get<std::string>().rfind("INTERRUPTED by SIGINT: 1 of 3 seeds finished", 0) == 0);
  CHECK(doc["intervals"]["iops"]["n"] == 1);
  CHECK(doc["intervals"]["iops"]["half_width"].is_null());
}
