// fio's latencies and depth distributions on whole-platform runs
// (models/guest/fio_latency.h), checked against rules stated apart from the code:
// Little's law, lat = slat + clat, and fio's depth buckets for a queue
// that fio keeps full.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <string>

#include "tests/platform/run_binary.h"
#include "tests/platform/simulate.h"

using nvmesim::test::simulate;

TEST_CASE("fio latency: IOPS x mean lat is the I/Os fio keeps outstanding (Little's law)",
          "[fio][latency][binary]") {
  struct Case { const char* iodepth; const char* dbbuf; const char* rw; };
  for (const Case c : {Case{"8", "off", "randread"}, Case{"32", "off", "randread"}, Case{"32", "spec", "randread"},
                       Case{"16", "spec", "randrw"}}) {
    INFO("iodepth " << c.iodepth << ", dbbuf " << c.dbbuf << ", " << c.rw);
    const auto run = nvmesim::test::run_nvmesim(std::string("--output-format=json --number_ios=20000 --iodepth=") +
                                                c.iodepth + " --nvme.dbbuf=" + c.dbbuf + " --rw=" + c.rw);
    REQUIRE(run.exit_code == 0);
    const auto j = nlohmann::json::parse(run.out);
    REQUIRE(j["ios"] == 20000);
    const double iops = std::stod(j["iops"].dump());
    auto mean = [&](const char* k) { return std::stod(j[k]["mean"].dump()); };
    // fio's queue is full but for the last iodepth I/Os: mean outstanding = iodepth.
    const double outstanding = iops * mean("lat_ns") * 1e-9;
    CHECK(outstanding == Approx(std::stod(c.iodepth)).epsilon(0.02));
    // The driver's latency leaves out the wait in the aio ring: less in flight.
    CHECK(iops * mean("driver_lat_ns") * 1e-9 < outstanding);
    // lat = slat + clat, I/O by I/O, so in the means (each truncated to whole ns).
    CHECK(mean("lat_ns") == Approx(mean("slat_ns") + mean("clat_ns")).margin(1.0));
    CHECK(j["slat_ns"]["min"].get<double>() > 0);
  }
}

TEST_CASE("fio latency: fio's depth buckets for a full queue of 8, one I/O per call", "[fio][latency]") {
  const auto r = simulate({{"iodepth", "8"}, {"number_ios", "1000"}});
  REQUIRE(r.count("ios") == 1000);
  // io_u_mark_depth counts each submission at the depth it makes: the ramp
  // 1, 2..3, 4..7, then 8 for the remaining 993.
  CHECK(r.depths.depth[0] == 1);
  CHECK(r.depths.depth[1] == 2);
  CHECK(r.depths.depth[2] == 4);
  CHECK(r.depths.depth[3] == 993);
  for (unsigned k = 4; k < 7; ++k) CHECK(r.depths.depth[k] == 0);
  // One I/O per io_submit and per io_getevents: every call in bucket "4" (1..4).
  CHECK(r.depths.submit_calls == 1000);
  CHECK(r.depths.submit[1] == 1000);
  CHECK(r.depths.complete_calls == 1000);
  CHECK(r.depths.complete[1] == 1000);
}

TEST_CASE("fio latency: a batch submitted together is one io_submit call", "[fio][latency]") {
  // Submit 4 at a time, reap 4 at a time: 1000 I/Os take 250 calls of each,
  // all in fio's bucket "4" (1..4 I/Os per call).
  const auto r = simulate({{"iodepth", "8"}, {"iodepth_batch_submit", "4"}, {"iodepth_batch_complete_min", "4"},
                           {"number_ios", "1000"}});
  REQUIRE(r.count("ios") == 1000);
  CHECK(r.depths.submit_calls == 250);
  CHECK(r.depths.submit[1] == 250);
  CHECK(r.depths.complete_calls == 250);
  CHECK(r.depths.complete[1] == 250);
  // The depths each batch made: 4, then 8 for every later batch.
  CHECK(r.depths.depth[2] == 4);
  CHECK(r.depths.depth[3] == 996);
}

TEST_CASE("fio latency: KVM halt polling keeps a QD1 vCPU from scheduling out", "[fio][latency][binary]") {
  const std::string base = "--preset=none --output-format=json --single-run --iodepth=1 --number_ios=2000 --hv.wakeup=fixed --hv.halt_wakeup=5us";
  const auto a = nvmesim::test::run_nvmesim(base);
  const auto b = nvmesim::test::run_nvmesim(base + " --hv.halt_poll=200us");
  REQUIRE(a.exit_code == 0);
  REQUIRE(b.exit_code == 0);
  const auto sleeping = nlohmann::json::parse(a.out), polling = nlohmann::json::parse(b.out);
  auto stat = [](const nlohmann::json& j, const char* k) { return j["stats"]["vcpu0"][k].get<uint64_t>(); };
  const uint64_t halts = stat(sleeping, "halt_sleeps") + stat(sleeping, "halt_poll_hits");
  CHECK(halts > 1900);  // one halt per I/O, waiting for its interrupt
  CHECK(stat(sleeping, "halt_poll_hits") == 0);
  // The window grows from 0 (a sleep), 10 us, 20 us...: once it covers the
  // device's time every halt is a poll hit.
  CHECK(stat(polling, "halt_sleeps") <= 4);
  CHECK(stat(polling, "halt_sleeps") + stat(polling, "halt_poll_hits") == halts);
  // Each sleep adds its 5 us wake-up to the I/O's path.
  auto mean = [](const nlohmann::json& j) { return std::stod(j["lat_ns"]["mean"].dump()); };
  CHECK(mean(sleeping) - mean(polling) == Approx(5000).margin(250));
}
