// nvmesim validate on the committed real-system reference
// (validation/qemu/results.csv: QEMU 7.2 + Linux 6.1 + fio 3.33 under TCG).
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <string>

#include "tests/platform/run_binary.h"

using nvmesim::test::run_nvmesim;

namespace {

// With the device thread's wake-up stalls measured at iodepth 1 in the same
// real runs (validation/qemu/results-timing.csv).
nlohmann::json validate_reference(const std::string& preset) {
  const auto r = run_nvmesim("validate " NVMESIM_SOURCE_DIR "/validation/qemu/results.csv --preset " + preset +
                             " --timing " NVMESIM_SOURCE_DIR "/validation/qemu/results-timing.csv"
                             " --number_ios=1000 --output-format=json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return nlohmann::json::parse(r.out);
}

}  // namespace

TEST_CASE("validate reference: every row runs and the share counts the rows in band") {
  const auto j = validate_reference("qemu-7.2,tcg");
  REQUIRE(j["rows"].size() == 112);
  unsigned in = 0;
  for (const auto& row : j["rows"]) {
    in += row["in_band"].get<bool>();
    // The doorbell buffer off: every update is an MMIO write, in the model as in Linux.
    if (row["config"]["dbbuf"] == "off") CHECK(row["model"]["per_io.sq_mmio"].get<double>() == 1.0);
    // iodepth 1: one SQ and one CQ update per I/O, each rung.
    if (row["config"]["iodepth"] == 1) {
      CHECK(row["model"]["per_io.sq_mmio"].get<double>() == 1.0);
      CHECK(row["model"]["per_io.cq_mmio"].get<double>() == 1.0);
    }
  }
  CHECK(j["in_band_share"].get<double>() == Approx(in / 112.0).margin(1e-4));
  REQUIRE(j["calibration"].size() == 1);
  CHECK(j["calibration"][0]["parameter"] == "guest.submit_cost");
  CHECK(j["calibration"][0]["converged"] == true);
  REQUIRE(j["measured"]["lines"].size() == 4);  // numjobs 1, 2 x dbbuf off, on
}

// The target: 80% of the rows in band. Not met (53.6% with qemu-7.2,tcg and
// the measured stalls and main-loop costs, at 10000 I/Os per job). The real
// system against its own earlier run (results-earlier.csv) scores 75.0% under the same band
// (validation/qemu/compare_runs.py), so 80% is above what the reference
// reproduces. The rest of the gap: with two jobs the device thread's stalls
// grow with depth (measured: 7% of wake-ups at iodepth 1, 15-17% at 16-64,
// up to 5 ms: the main loop works through one queue's backlog while the
// other waits), while the model keeps the iodepth-1 stalls at every depth
// and its guest's calibrated cost per I/O does not fall with depth as the
// real guest's does (docs/mechanisms.md, section 7).
TEST_CASE("validate reference: 80% of the rows in band with qemu-7.2 on TCG", "[!shouldfail]") {
  const auto j = validate_reference("qemu-7.2,tcg");
  CHECK(j["in_band_share"].get<double>() >= 0.80);
}
