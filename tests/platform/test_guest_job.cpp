// The guest's job as fio's libaio loop runs it (models/guest/fio_job.cpp) and its
// interrupts as the hardware delivers them (vcpu.cpp), through the binary.
#include <catch2/catch.hpp>

#include <string>

#include "tests/platform/run_binary.h"

using nvmesim::test::json_number;
using nvmesim::test::run_nvmesim;

namespace {

std::string after(const std::string& json, const std::string& key) {
  const size_t at = json.find("\"" + key + "\"");
  REQUIRE(at != std::string::npos);
  return json.substr(at);
}

}  // namespace

TEST_CASE("guest job: fio reaps iodepth_batch_complete_min I/Os before it submits again") {
  // iodepth 8, 8 I/Os per io_submit (one SQ doorbell update each), 800 I/Os.
  // Reaping 8 at a time, every submission is a full batch: 800 / 8 updates.
  // Reaping one at a time (fio's default), only the first fill is a batch;
  // afterwards each reap frees one slot: 1 + (800 - 8) updates.
  struct Case {
    int complete_min, updates;
  } cases[] = {{8, 100}, {1, 793}};
  for (const Case& c : cases) {
    INFO("iodepth_batch_complete_min=" << c.complete_min);
    const auto r = run_nvmesim("--iodepth=8 --iodepth_batch_submit=8 --iodepth_batch_complete_min=" +
                               std::to_string(c.complete_min) + " --number_ios=800 --output-format=json");
    REQUIRE(r.exit_code == 0);
    const std::string sq = after(r.out, "sq\": {");
    CHECK(json_number(sq, "updates") == c.updates);
    CHECK(json_number(sq, "updates") == json_number(sq, "mmio") + json_number(sq, "suppressed"));
  }
}

TEST_CASE("guest job: an interrupt is taken when it arrives, not when the guest is done working") {
  // 50 us to build each command, 2 in flight: the device finishes I/O k
  // while the guest builds I/O k+1. Taken at once, the interrupt ends I/O
  // k's latency near 50 us plus the device's few microseconds; held until
  // the guest halts, it would end after the next build too (over 100 us).
  const auto r = run_nvmesim("--iodepth=2 --guest.submit_cost=50us --number_ios=200 --output-format=json --hv.wakeup=fixed");
  REQUIRE(r.exit_code == 0);
  const std::string lat = after(r.out, "driver_lat_ns");
  CHECK(json_number(lat, "min") >= 50000);
  CHECK(json_number(lat, "max") < 75000);
}

TEST_CASE("guest job: a device thread that wakes late takes several commands per pass") {
  // Two jobs, 242 us of guest work per command: the device thread answers
  // at once and every SQ update rings; when a wake-up waits an extra 300 us
  // on average, later submissions find the device behind and are suppressed.
  const std::string base = "--numjobs=2 --iodepth=32 --nvme.dbbuf=spec --guest.submit_cost=242us "
                           "--number_ios=2000 --output-format=json --hv.wakeup=fixed --hv.dispatch_jitter=";
  const auto prompt = run_nvmesim(base + "0ns");
  const auto late = run_nvmesim(base + "300us");
  REQUIRE(prompt.exit_code == 0);
  REQUIRE(late.exit_code == 0);
  CHECK(json_number(after(prompt.out, "per_io"), "sq_mmio") == 1.0);
  const std::string sq = after(late.out, "sq\": {");
  CHECK(json_number(sq, "mmio") < 0.8 * json_number(sq, "updates"));
  CHECK(json_number(sq, "updates") == json_number(sq, "mmio") + json_number(sq, "suppressed"));
}
