// The progress watchdog, through the binary: a stall is no completion for
// sim.stall_timeout while I/Os are outstanding AND nothing under way could
// complete one. Slow but legal settings are not stalls; real lost wake-ups
// are, and the report says STALLED before anything else.
#include <catch2/catch.hpp>

#include <sstream>

#include "nvmesim/platform/config/params.h"
#include "nvmesim/platform/system/run.h"
#include "run_binary.h"

using nvmesim::test::json_number;
using nvmesim::test::run_nvmesim;

namespace {
std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }
bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }
}  // namespace

TEST_CASE("watchdog: slow runs complete and are not stalls", "[e2e][stall]") {
  struct Row {
    const char* options;
    const char* metric;  // "iops" or "bw_bytes"
    double bound;        // the most the setting allows (independent of the model)
  };
  const Row rows[] = {
      // One vCPU spends 1 ms building each command: at most 1000 IOPS.
      {"--guest.submit_cost=1ms", "iops", 1e9 / 1e6},
      // 32 in flight, each 20 ms at the backend: at most 32 / 20 ms = 1600 IOPS.
      {"--nvme.backend=latency --nvme.backend_latency=20ms", "iops", 32 / 0.020},
      // Gen1 x1: 2.5 GT/s x 8b/10b = 250 MB/s raw, 256-byte payloads with 24
      // bytes of TLP overhead each: 250e6 x 256 / 280 bytes/s of data.
      {"--pcie.mode=link --pcie.gen=1 --pcie.lanes=1 --bs=128k", "bw_bytes", 250e6 * 256 / 280},
  };
  for (const Row& row : rows) {
    const std::string args =
        std::string(row.options) + " --number_ios=300 --fail-on-stall --output-format=json";
    INFO("nvmesim " << args);
    const auto r = run_nvmesim(args);
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.find("\"stall\": null") != std::string::npos);
    CHECK(r.out.find("\"outcome\": \"ok\"") != std::string::npos);
    CHECK(json_number(r.out, "ios") == 300);
    const double v = json_number(r.out, row.metric);
    CHECK(v <= row.bound);
    CHECK(v >= 0.9 * row.bound);  // slow because of the setting, not stopped early
  }
}

TEST_CASE("watchdog: a real stall says STALLED first, in text and JSON", "[e2e][stall]") {
  struct Row {
    const char* what;
    const char* options;
  };
  const Row rows[] = {
      // An ioeventfd QEMU never cleared: later doorbells are lost.
      {"eventfd not cleared",
       "--iodepth=4 --number_ios=500 --nvme.dbbuf=spec --hv.notify=ioeventfd "
       "--sim.stall_timeout=1ms --hv.fault=eventfd_not_cleared"},
      // CQ EventIdx never written, 4-entry CQ, and a vCPU that keeps polling
      // its empty CQ: activity without progress is still a stall.
      {"polling vCPU, CQ EventIdx never",
       "--guest.io_cq_entries=4 --iodepth=16 --number_ios=500 --nvme.cq_eventidx=never "
       "--guest.completion=poll --sim.stall_timeout=200us --single-run"},
  };
  for (const Row& row : rows) {
    INFO(row.what);
    const auto text = run_nvmesim(std::string(row.options) + " --fail-on-stall");
    CHECK(text.exit_code == 3);
    CHECK(starts_with(first_line(text.out), "STALLED: stall detected at "));
    CHECK(first_line(text.out).find("nothing under way could complete one") != std::string::npos);
    const auto json = run_nvmesim(std::string(row.options) + " --output-format=json");
    CHECK(json.exit_code == 0);  // reported, not a failure without --fail-on-stall
    CHECK(json.out.find("\"outcome\": \"stalled\"") != std::string::npos);
    CHECK(json.out.find("\"headline\": \"STALLED: stall detected at ") != std::string::npos);
  }
}

TEST_CASE("watchdog: the default comparison leads with a stalled run", "[e2e][stall]") {
  using namespace nvmesim::platform;
  Config c;  // the uncleared ioeventfd only bites with the doorbell buffer: the spec run
  for (const auto& [k, v] : std::vector<std::pair<const char*, const char*>>{
           {"iodepth", "4"}, {"number_ios", "500"}, {"hv.notify", "ioeventfd"},
           {"sim.stall_timeout", "1ms"}, {"hv.fault", "eventfd_not_cleared"}})
    c.set(k, v);
  RunOptions o;
  o.default_experiment = true;
  o.fail_on_stall = true;
  std::ostringstream text;
  CHECK(run_experiment(c, o, text) == 3);
  CHECK(starts_with(text.str(), "dbbuf=spec: STALLED: stall detected at "));
  o.output_format = "json";
  std::ostringstream json;
  CHECK(run_experiment(c, o, json) == 3);
  CHECK(json.str().find("\"outcome\": \"stalled\"") != std::string::npos);
}
