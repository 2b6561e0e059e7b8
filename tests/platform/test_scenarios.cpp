// `nvmesim scenario NAME --output-format=json`: every figure carries the
// reported and simulated values, both improvement ratios and the ratio's
// relative error; each predicted ratio must lie within +-25% of the
// reported one (issue 5). Runs are kept small (a few seconds each).
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "run_binary.h"

using nvmesim::test::check_refused;
using nvmesim::test::json_number;
using nvmesim::test::run_nvmesim;

namespace {

const char* kIos = " --number_ios=5000";

struct FigureJson {
  double reported, simulated, ratio_reported, ratio_simulated, error;
};

// The figures of a scenario's JSON, in order.
std::vector<FigureJson> figures(const std::string& json) {
  std::vector<FigureJson> out;
  size_t at = json.find("\"figures\"");
  REQUIRE(at != std::string::npos);
  while ((at = json.find("{\"label\"", at)) != std::string::npos) {
    const std::string f = json.substr(at, json.find('}', at) - at + 1);
    out.push_back({json_number(f, "reported"), json_number(f, "simulated"),
                   json_number(f, "ratio_reported"), json_number(f, "ratio_simulated"),
                   json_number(f, "error")});
    ++at;
  }
  return out;
}

void check_band(const std::string& name) {
  const auto r = run_nvmesim("scenario " + name + " --output-format=json" + kIos);
  REQUIRE(r.exit_code == 0);
  const auto fs = figures(r.out);
  REQUIRE(fs.size() >= 2);
  for (size_t i = 1; i < fs.size(); ++i) {
    INFO(name << " figure " << i << ": ratio reported " << fs[i].ratio_reported << ", simulated "
              << fs[i].ratio_simulated);
    CHECK(fs[i].error >= -0.25);
    CHECK(fs[i].error <= 0.25);
  }
}

}  // namespace

TEST_CASE("scenario: the JSON gives reported, simulated, both ratios and the error per figure",
          "[scenario]") {
  const auto r = run_nvmesim("scenario qemu-vendor --output-format=json" + std::string(kIos));
  REQUIRE(r.exit_code == 0);
  const auto fs = figures(r.out);
  REQUIRE(fs.size() == 2);
  // The baseline is calibrated on its reported figure: ratio 1, error 0.
  CHECK(fs[0].reported == 20000);
  CHECK(fs[0].ratio_reported == 1);
  CHECK(fs[0].ratio_simulated == 1);
  CHECK(fs[0].error == 0);
  CHECK(fs[0].simulated == Approx(20000).epsilon(0.05));
  // The prediction: ratios and error follow from the two figures.
  CHECK(fs[1].reported == 85000);
  CHECK(fs[1].ratio_reported == Approx(85000.0 / 20000).epsilon(1e-5));
  CHECK(fs[1].ratio_simulated == Approx(fs[1].simulated / fs[0].simulated).epsilon(1e-3));
  CHECK(fs[1].error ==
        Approx((fs[1].ratio_simulated - fs[1].ratio_reported) / fs[1].ratio_reported).margin(1e-5));
}

TEST_CASE("scenario: an unknown name is refused with the list", "[scenario]") {
  check_refused("scenario nosuch", "nvmesim scenario: error: 'nosuch' is not a scenario (one of google-null, "
                                   "qemu-vendor, ramdisk, real-nvme, vfio-msix; see --list)");
}

TEST_CASE("scenario: google-null ratio within 25%", "[scenario]") { check_band("google-null"); }

TEST_CASE("scenario: qemu-vendor ratio within 25%", "[scenario]") { check_band("qemu-vendor"); }

// Figures: 0 baseline, 1 extension, 2 ioeventfd with the eventfd not
// cleared, 3 ioeventfd with the notifier fixed, 4 virtio-blk (not an
// independent check: its figure set the main loop's cost per request).
TEST_CASE("scenario: real-nvme extension and fixed-notifier and virtio-blk ratios within 25%", "[scenario]") {
  const auto r = run_nvmesim("scenario real-nvme --output-format=json" + std::string(kIos));
  REQUIRE(r.exit_code == 0);
  const auto fs = figures(r.out);
  REQUIRE(fs.size() == 5);
  CHECK(fs[4].reported == 344);
  for (size_t i : {size_t(1), size_t(3), size_t(4)}) {
    INFO("figure " << i << ": ratio reported " << fs[i].ratio_reported << ", simulated "
                   << fs[i].ratio_simulated);
    CHECK(std::abs(fs[i].error) <= 0.25);
  }
  // The uncleared eventfd as that QEMU ran it (hv.fault=eventfd_spin): the
  // main loop spins, but in this model spinning only burns CPU the main loop
  // had spare, so the run lands within 5% of the fixed one. (This alone
  // would pass if eventfd_spin did nothing; that it spins is checked by
  // "timing: hv.fault=eventfd_spin keeps the thread spinning".)
  CHECK(r.out.find("\"stalled\": true") == std::string::npos);
  CHECK(fs[2].simulated == Approx(fs[3].simulated).epsilon(0.05));
}

// Once out of band (1.08 against 3.45): the job submitted every free slot at
// once and took interrupts only when halted. With fio's reap-one, submit-one
// loop (models/guest/fio_job.cpp) and interrupts taken as they arrive (vcpu.cpp), the same guest
// costs serve both of Ming Lin's runs.
// Figure 2 is virtio-blk's 174 MB/s (not an independent check: it set the
// guest's cost per request).
TEST_CASE("scenario: ramdisk ratio within 25%", "[scenario]") {
  check_band("ramdisk");
}

// Gap: Ming Lin's 190 MB/s came from a main loop that spun on a readable
// eventfd. Modelled so (hv.fault=eventfd_spin) it predicts about the fixed
// run's 2.73 (+55%); issue 5's lost-wake-up reading stalls instead. What
// cost the real spin a third of the throughput is not in his reports.
TEST_CASE("scenario: real-nvme eventfd_not_cleared ratio within 25%", "[scenario][!shouldfail]") {
  const auto r = run_nvmesim("scenario real-nvme --output-format=json" + std::string(kIos));
  REQUIRE(r.exit_code == 0);
  const auto fs = figures(r.out);
  REQUIRE(fs.size() == 5);
  CHECK(std::abs(fs[2].error) <= 0.25);
}

TEST_CASE("scenario: --set changes every run and is echoed and the calibrated cost is refused",
          "[scenario]") {
  const auto plain = run_nvmesim("scenario qemu-vendor --output-format=json" + std::string(kIos));
  const auto r = run_nvmesim("scenario qemu-vendor --output-format=json --set nvme.cmd_cost=9us" +
                             std::string(" --set nvme.cmd_cost=5us") + kIos);
  REQUIRE(plain.exit_code == 0);
  REQUIRE(r.exit_code == 0);
  // A repeated key: the last one wins and is echoed once.
  CHECK(r.out.find("\"what_if\": {\"nvme.cmd_cost\": \"5us\"}") != std::string::npos);
  CHECK(plain.out.find("\"what_if\": {}") != std::string::npos);
  const auto fs = figures(r.out), base = figures(plain.out);
  REQUIRE(fs.size() == 2);
  REQUIRE(base.size() == 2);
  // A cheaper main loop per request (5 us instead of 11.6) lets the
  // extension run further ahead of the recalibrated baseline.
  CHECK(fs[0].simulated == Approx(20000).epsilon(0.05));
  CHECK(fs[1].ratio_simulated > base[1].ratio_simulated * 1.2);

  check_refused("scenario qemu-vendor --set hv.bql_hold=1us",
                "nvmesim scenario: error: --set: hv.bql_hold is the parameter scenario qemu-vendor calibrates; it "
                "cannot be set");
  check_refused("scenario qemu-vendor --set nvme.cmd_cost=fast",
                "nvmesim scenario: error: --set: --nvme.cmd_cost: 'fast' is not a time (a number with a unit: ns, us, "
                "ms, s or cyc)");
  check_refused("scenario qemu-vendor --set nvme.cmd_cost",
                "nvmesim scenario: error: --set: 'nvme.cmd_cost' is not PARAM=VALUE");
  check_refused("scenario qemu-vendor --set number_ios=5",
                "nvmesim scenario: error: --set: number_ios is set with --number_ios");
  // Cycles are checked at the scenario's clock (3.2 GHz): 4e6 cycles are
  // 1.25 ms, past hv.exit_pio's 1 ms.
  check_refused("scenario qemu-vendor --set hv.exit_pio=4000000cyc",
                "nvmesim scenario: error: --set: --hv.exit_pio: 4000000cyc (1.25ms at hv.cpu_ghz 3.2) is out of range "
                "(0ns..1ms)");
}

TEST_CASE("scenario: a slow baseline under a short watchdog is not a stall", "[scenario]") {
  // A 20k IOPS baseline leaves 50 us between completions, far past a 10 us
  // watchdog; but the device and backend always have work under way, so
  // the watchdog waits (it used to call this a stall and give no ratio).
  // The watchdog only watches: the figures are those of the default one.
  const auto r = run_nvmesim(
      "scenario qemu-vendor --output-format=json --set sim.stall_timeout=10us --number_ios=1000");
  const auto plain = run_nvmesim("scenario qemu-vendor --output-format=json --number_ios=1000");
  REQUIRE(r.exit_code == 0);
  REQUIRE(plain.exit_code == 0);
  CHECK(r.out.find("\"stalled\": true") == std::string::npos);
  const auto fs = figures(r.out), fp = figures(plain.out);
  REQUIRE(fs.size() == fp.size());
  for (size_t i = 0; i < fs.size(); ++i) CHECK(fs[i].simulated == fp[i].simulated);
}

TEST_CASE("scenario: --calibrate takes a time parameter only", "[scenario]") {
  check_refused("scenario qemu-vendor --calibrate=numjobs",
                "nvmesim scenario: error: --calibrate: 'numjobs' is not a time parameter (see --list-params)");
  check_refused("scenario qemu-vendor --calibrate=",
                "nvmesim scenario: error: --calibrate: empty value after '='");
  check_refused("scenario qemu-vendor --calibrate ''",
                "nvmesim scenario: error: --calibrate: needs a time parameter (see --list-params)");
  // The same parser as every command: names are never abbreviated.
  check_refused("scenario qemu-vendor --calib=hv.exit_mmio",
                "nvmesim scenario: error: unknown option '--calib' (see --help)");
  const auto ok = run_nvmesim("scenario qemu-vendor --output-format=json --calibrate=hv.exit_mmio" +
                              std::string(kIos));
  REQUIRE(ok.exit_code == 0);
  CHECK(ok.out.find("\"parameter\": \"hv.exit_mmio\"") != std::string::npos);
  CHECK(figures(ok.out).at(0).simulated == Approx(20000).epsilon(0.05));
  CHECK(ok.out.find("\"converged\": true") != std::string::npos);
  CHECK(ok.out.find("instead of hv.bql_hold, which keeps its default") != std::string::npos);
  // Port I/O exits do not occur with MMIO doorbells: whatever their cost the
  // baseline stays where hv.bql_hold's default puts it (about 66k IOPS, far
  // from 20k), and the fit says so.
  const auto miss = run_nvmesim("scenario qemu-vendor --calibrate=hv.exit_pio --number_ios=2000");
  REQUIRE(miss.exit_code == 0);
  CHECK(miss.out.find("warning: the calibration reached") != std::string::npos);
}

// Launchpad bug 1847948: figures 0 trapped 4 jobs (the baseline), 1 trapped
// 64 jobs, 2 mapped 4 jobs, 3 mapped 64 jobs.
TEST_CASE("scenario: vfio-msix trapped 64-job ratio within 25%", "[scenario]") {
  const auto r = run_nvmesim("scenario vfio-msix --output-format=json" + std::string(kIos));
  REQUIRE(r.exit_code == 0);
  const auto fs = figures(r.out);
  REQUIRE(fs.size() == 4);
  INFO("ratio reported " << fs[1].ratio_reported << ", simulated " << fs[1].ratio_simulated);
  CHECK(std::abs(fs[1].error) <= 0.25);
}

// With the page mapped, 64 jobs are bound by the assumed SSD's random-read
// rate (90 in flight / 90 us: 1M IOPS, 3906 MiB/s): the hardware engine
// fetches the SQEs published on a queue in one read (nvme.sqe_burst), so
// one 700 ns read round trip serves several commands; fetching one SQE a
// round trip (nvme.sqe_burst=1) the engine itself is the bound, about
// 1.37 us a command (2859 MiB/s, -33%); with bursts 3906 MiB/s, -8%.
TEST_CASE("scenario: vfio-msix mapped 64-job ratio within 25%", "[scenario]") {
  const auto r = run_nvmesim("scenario vfio-msix --output-format=json" + std::string(kIos));
  REQUIRE(r.exit_code == 0);
  const auto fs = figures(r.out);
  REQUIRE(fs.size() == 4);
  CHECK(std::abs(fs[3].error) <= 0.25);
}

// Gap: with the page mapped, 4 jobs at QD16 reach 1191 MiB/s, 76k IOPS per
// job, i.e. about 13 us of guest CPU per I/O on the POWER9 guest; nvmesim's
// x86-derived guest costs and an assumed 90 us SSD latency predict 5.1x
// instead of 3.09x (+65%). The bug gives neither the guest's CPU cost nor
// the drive's latency.
TEST_CASE("scenario: vfio-msix mapped 4-job ratio within 25%", "[scenario][!shouldfail]") {
  const auto r = run_nvmesim("scenario vfio-msix --output-format=json" + std::string(kIos));
  REQUIRE(r.exit_code == 0);
  const auto fs = figures(r.out);
  REQUIRE(fs.size() == 4);
  CHECK(std::abs(fs[2].error) <= 0.25);
}
