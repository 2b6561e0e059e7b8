// Rates over the right interval: when the runtime ends a run, IOPS,
// bandwidth and utilisation are over the runtime, as fio reports a job's
// elapsed time (backend.c: a job stops at its runtime, thinktime and rate
// sleeps are cut at the runtime's end), not over the time to the last
// completion. Each rate figure is checked against its definition in
// docs/metrics.md (iops = ios / sim_time_ns, bw_bytes = bytes / sim_time_ns,
// a vCPU's busy = guest + exits over utilization.span_ns) at rate-limited,
// think-time and runtime-bounded runs, and the I/O counts against fio's rule.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/platform/run_binary.h"

using Json = nlohmann::json;
using nvmesim::test::run_nvmesim;

namespace {

struct Case {
  std::string args;
  double runtime_ns;
  double ios;  // -1: not worked out (a full-speed run)
  bool idle_at_end;  // the job was asleep (rate or think) when the runtime ended
};

}  // namespace

TEST_CASE("rate intervals: a run the runtime ended is measured over its runtime", "[binary]") {
  const std::vector<Case> cases = {
      // rate_iops=100: one I/O every 10 ms, at 0, 10, 20, 30, 40 ms; the job sleeps to 50 ms.
      {"--iodepth=1 --rate_iops=100 --runtime=50ms", 50e6, 5, true},
      {"--iodepth=4 --rate_iops=100 --runtime=50ms", 50e6, 5, true},
      {"--iodepth=1 --rate_iops=200 --runtime=20ms --numjobs=2", 20e6, 2 * 4, true},
      {"--iodepth=1 --rate=400k --runtime=30ms", 30e6, 3, true},  // 400 KiB/s of 4 KiB: one per 10.24 ms
      // thinktime=10ms after every I/O: I/Os at about 0, 10, 20, 30 ms; the last think is cut at 35 ms.
      {"--iodepth=2 --thinktime=10ms --runtime=35ms", 35e6, 4, true},
      {"--iodepth=2 --thinktime=10ms --thinktime_spin=10ms --runtime=35ms", 35e6, 4, true},
      {"--iodepth=1 --thinktime=10ms --thinktime_blocks=2 --runtime=25ms", 25e6, 6, true},
      // Full speed: the runtime stops the issuing; those in flight complete.
      {"--iodepth=4 --runtime=200us", 200e3, -1, false},
      {"--iodepth=1 --runtime=300us --device=virtio-blk", 300e3, -1, false},
  };
  for (const Case& c : cases) {
    const std::string args = "--single-run --number_ios=0 --output-format=json " + c.args;
    INFO("nvmesim " << args);
    const auto r = run_nvmesim(args);
    REQUIRE(r.exit_code == 0);
    const Json d = Json::parse(r.out);
    const double t = d["sim_time_ns"].get<double>(), ios = d["ios"].get<double>();
    if (c.ios >= 0) CHECK(ios == c.ios);
    if (c.idle_at_end)
      CHECK(t == c.runtime_ns);
    else
      CHECK(t >= c.runtime_ns);
    CHECK(d["iops"].get<double>() == Approx(ios * 1e9 / t).epsilon(1e-9));
    CHECK(d["bw_bytes"].get<double>() == Approx(ios * 4096 * 1e9 / t).epsilon(1e-9));
    const Json& u = d["utilization"];
    CHECK(u["span_ns"].get<double>() >= t);
    if (c.idle_at_end) CHECK(u["span_ns"].get<double>() == t);  // nothing ran past the runtime
    for (const Json& v : u["vcpu"]) {
      CHECK(v["busy"].get<double>() <= 1.0);
      CHECK(v["busy"].get<double>() == Approx(v["guest"].get<double>() + v["exits"].get<double>()).margin(2e-6));
    }
  }
}

TEST_CASE("rate intervals: a think that spins to the runtime's end keeps the vCPU busy all of it", "[binary]") {
  // 4 I/Os each followed by 10 ms of spinning (guest work): the vCPU works
  // from 0 to the 35 ms runtime, so its guest share is nearly 1, not 40/35.
  const auto r = run_nvmesim(
      "--single-run --number_ios=0 --output-format=json --iodepth=1 --thinktime=10ms --thinktime_spin=10ms "
      "--runtime=35ms");
  REQUIRE(r.exit_code == 0);
  const Json d = Json::parse(r.out);
  const Json& v = d["utilization"]["vcpu"][0];
  CHECK(v["guest"].get<double>() > 0.99);
  CHECK(v["guest"].get<double>() <= 1.0);
}
