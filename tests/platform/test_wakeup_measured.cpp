// hv.wakeup: by default a sleeping host thread's and a scheduled-out vCPU's
// wake-ups are drawn from the measured tables (models/host/wakeup_distribution.h),
// so runs are no longer lockstep: latency spreads, another seed gives another
// run, the same seed the same bytes. hv.wakeup=fixed is the old model exactly.
#include <catch2/catch.hpp>

#include <string>

#include <nlohmann/json.hpp>

#include "run_binary.h"
#include "simulate.h"

using nvmesim::test::run_nvmesim;
using nvmesim::test::simulate;

namespace {

const std::string kRun = "--preset=none --single-run --nvme.dbbuf=spec --number_ios=5000 --output-format=json";

nlohmann::json run_json(const std::string& args) {
  const auto r = run_nvmesim(args);
  INFO("nvmesim " << args << "\n" << r.err);
  REQUIRE(r.exit_code == 0);
  return nlohmann::json::parse(r.out);
}

}  // namespace

TEST_CASE("wakeup: the default draws its wake-ups: the same seed the same bytes, another seed another run",
          "[wakeup][binary]") {
  const auto a = run_nvmesim(kRun + " --seed=1");
  const auto b = run_nvmesim(kRun + " --seed=1");
  const auto c = run_nvmesim(kRun + " --seed=2");
  REQUIRE(a.exit_code == 0);
  REQUIRE(c.exit_code == 0);
  CHECK(a.out == b.out);
  const auto ja = nlohmann::json::parse(a.out), jc = nlohmann::json::parse(c.out);
  CHECK(ja["config"]["hv.wakeup"] == "measured");
  // null backend, 4 KiB randread: the seed moves only the wake-ups.
  CHECK(ja["sim_time_ns"] != jc["sim_time_ns"]);
  CHECK(ja["lat_ns"]["percentile"] != jc["lat_ns"]["percentile"]);
}

TEST_CASE("wakeup: the default run's latency spreads (p99 above p50), buffer on and off", "[wakeup]") {
  for (const char* dbbuf : {"spec", "off"}) {
    INFO("nvme.dbbuf=" << dbbuf);
    // Each System in its own process: the platform's child runs.
    const auto j = run_json("--single-run --number_ios=3000 --output-format=json --nvme.dbbuf=" + std::string(dbbuf));
    const uint64_t p50 = j["lat_ns"]["percentile"]["50.000000"], p99 = j["lat_ns"]["percentile"]["99.000000"];
    CHECK(p99 > p50);
    CHECK(j["lat_ns"]["max"].get<double>() > j["lat_ns"]["min"].get<double>());
  }
}

TEST_CASE("wakeup: a vCPU that scheduled out pays a measured draw, at least the tables' shortest", "[wakeup]") {
  // iodepth 1, no halt polling: the vCPU halts and schedules out for every
  // I/O; the device thread sleeps between I/Os too. Each I/O waits for two
  // wake-ups, each at least the smallest delay of any table (the 1000 us
  // table's 3.005 us; a mix of two tables is at least the smaller minimum).
  const auto r = simulate({{"iodepth", "1"}, {"number_ios", "200"}, {"nvme.dbbuf", "off"}});
  REQUIRE(r.count("ios") == 200);
  const auto fixed = run_json("--single-run --iodepth=1 --number_ios=200 --nvme.dbbuf=off --output-format=json "
                              "--hv.wakeup=fixed --hv.dispatch_latency=0ns --hv.halt_wakeup=0ns");
  const double floor_ns = fixed["lat_ns"]["min"].get<double>() + 2 * 3005;
  CHECK(double(r.lat.min()) >= floor_ns);
}

TEST_CASE("wakeup: hv.wakeup=fixed gives the lockstep model's figures exactly", "[wakeup][binary]") {
  // The figures of the model before hv.wakeup (dispatch_latency 2 us, no
  // jitter, halt_wakeup 0): every I/O the same latency.
  const auto j = run_json(kRun + " --hv.wakeup=fixed");
  CHECK(j["sim_time_ns"].get<double>() == 16028468.983);
  CHECK(j["lat_ns"]["percentile"]["50.000000"] == 102912);
  CHECK(j["lat_ns"]["percentile"]["99.000000"] == 102912);
  CHECK(j["doorbells"]["sq"]["mmio"] == 157);
  CHECK(j["doorbells"]["cq"]["mmio"] == 157);
  CHECK(j["eventidx"]["sq_hit_rate"].get<double>() == 0.9686);
  // With the fixed model's own randomness (the exponential jitter drawn from
  // the same splitmix64 stream) and a vCPU wake-up: the same figures too.
  const auto k = run_json(kRun + " --hv.wakeup=fixed --hv.dispatch_jitter=2us --hv.halt_wakeup=5us");
  CHECK(k["sim_time_ns"].get<double>() == 17117995.462);
  CHECK(k["lat_ns"]["percentile"]["50.000000"] == 109056);
  CHECK(k["lat_ns"]["percentile"]["99.000000"] == 146432);
  CHECK(k["doorbells"]["sq"]["mmio"] == 330);
  CHECK(k["doorbells"]["cq"]["mmio"] == 175);
  CHECK(k["doorbells"]["cq"]["suppressed"] == 38);
}

TEST_CASE("wakeup: under measured the fixed delays are inert and warned about", "[wakeup][binary]") {
  const auto base = run_nvmesim(kRun);
  const auto with = run_nvmesim(kRun + " --hv.dispatch_latency=20us --hv.dispatch_jitter=5us --hv.halt_wakeup=9us");
  REQUIRE(with.exit_code == 0);
  for (const char* p : {"hv.dispatch_latency", "hv.dispatch_jitter", "hv.halt_wakeup"}) {
    INFO(p);
    CHECK(with.err.find(std::string("nvmesim: warning: --") + p + ": ") != std::string::npos);
  }
  CHECK(with.err.find("needs hv.wakeup fixed") != std::string::npos);
  auto a = nlohmann::json::parse(base.out), b = nlohmann::json::parse(with.out);
  a.erase("config");
  b.erase("config");
  CHECK(a == b);
}
