// Whole-platform runs on small workloads. Each test case runs in its own
// process (catch_discover_tests), since SystemC elaborates once per process.
#include <catch2/catch.hpp>

#include <unistd.h>

#include "nvmesim/models/hv/vm_exit.h"
#include "nvmesim/platform/config/params.h"
#include "nvmesim/platform/system/system.h"
#include "run_binary.h"
#include "simulate.h"

using namespace nvmesim;
using namespace nvmesim::platform;
using models::ExitKind;

using nvmesim::test::simulate;

TEST_CASE("e2e: iodepth 1, buffer off: one SQ and one CQ MMIO doorbell per I/O", "[e2e]") {
  const RunResults r =
      simulate({{"iodepth", "1"}, {"number_ios", "500"}, {"nvme.dbbuf", "off"}});
  REQUIRE(r.bringup_ok);
  CHECK_FALSE(r.stalled);
  CHECK(r.count("ios") == 500);
  CHECK(r.count("doorbells.sq.updates") == 500);
  CHECK(r.count("doorbells.sq.mmio") == 500);
  CHECK(r.count("doorbells.cq.updates") == 500);
  CHECK(r.count("doorbells.cq.mmio") == 500);
  CHECK(r.count("doorbells.sq.suppressed") == 0);
  CHECK(r.count("doorbells.cq.suppressed") == 0);
  CHECK_FALSE(r.dbbuf_active);
  CHECK(r.count("exits.count.mmio_doorbell") == 1000);
  CHECK(r.figure("per_io.exits") == 2.0);
  CHECK(r.count("io_errors") == 0);
  // Every I/O raised one interrupt (iodepth 1) and the vCPU took each.
  CHECK(r.count("controller.interrupts") == 500);
  CHECK(r.count("exits.count.interrupt") == 500);
  CHECK(r.count("exits.count.eoi") == 500);
  CHECK(r.lat.count() == 500);
  CHECK(r.lat.min() > 0);
}

TEST_CASE("e2e: with the buffer on, updates = mmio + suppressed", "[e2e]") {
  const RunResults r = simulate({{"iodepth", "32"}, {"number_ios", "5000"}, {"nvme.dbbuf", "spec"}});
  REQUIRE(r.bringup_ok);
  REQUIRE(r.dbbuf_active);
  CHECK(r.count("ios") == 5000);
  CHECK(r.count("doorbells.sq.updates") == r.count("doorbells.sq.mmio") + r.count("doorbells.sq.suppressed"));
  CHECK(r.count("doorbells.cq.updates") == r.count("doorbells.cq.mmio") + r.count("doorbells.cq.suppressed"));
  CHECK(r.count("doorbells.sq.updates_with_dbbuf") == r.count("doorbells.sq.updates"));
  CHECK(r.count("doorbells.sq.updates") == 5000);  // iodepth_batch_submit=1: one update per I/O
  CHECK(r.count("exits.count.mmio_doorbell") == r.count("doorbells.sq.mmio") + r.count("doorbells.cq.mmio"));
  CHECK(r.count("eventidx.shadow_reads") > 0);
  CHECK(r.count("eventidx.eventidx_writes") > 0);
}

TEST_CASE("e2e: iodepth 1 with echo: every submission crosses the EventIdx", "[e2e][dbbuf]") {
  const RunResults r = simulate({{"iodepth", "1"}, {"number_ios", "300"}, {"nvme.dbbuf", "spec"}});
  REQUIRE(r.dbbuf_active);
  CHECK(r.count("doorbells.sq.mmio") == 300);
  CHECK(r.count("doorbells.sq.suppressed") == 0);
  CHECK(r.figure("eventidx.sq_hit_rate") == 0.0);
}

TEST_CASE("e2e: iodepth 32 with a fast device suppresses SQ doorbells", "[e2e][dbbuf]") {
  const RunResults r = simulate({{"iodepth", "32"}, {"number_ios", "5000"}, {"nvme.dbbuf", "spec"}});
  REQUIRE(r.dbbuf_active);
  CHECK(r.figure("eventidx.sq_hit_rate") > 0.2);
  CHECK(r.figure("per_io.sq_mmio") < 0.8);
}

TEST_CASE("e2e: ram backend returns the written data (verify=pattern)", "[e2e]") {
  const RunResults r = simulate({{"rw", "randrw"},
                                 {"size", "256k"},  // 64 blocks: reads hit written blocks
                                 {"number_ios", "3000"},
                                 {"nvme.backend", "ram"},
                                 {"verify", "pattern"}});
  REQUIRE(r.bringup_ok);
  CHECK(r.count("io_errors") == 0);
  CHECK(r.count("verify.verified_reads") > 500);
  CHECK(r.count("verify.errors") == 0);
}

TEST_CASE("e2e: verify catches a backend that stores nothing", "[e2e]") {
  const RunResults r = simulate({{"rw", "randrw"},
                                 {"size", "256k"},
                                 {"number_ios", "3000"},
                                 {"nvme.backend", "null"},
                                 {"verify", "pattern"}});
  CHECK(r.count("verify.verified_reads") > 500);
  CHECK(r.count("verify.errors") == r.count("verify.verified_reads"));
}

TEST_CASE("e2e: four jobs on four vCPUs, each on its own queue", "[e2e]") {
  const RunResults r = simulate({{"numjobs", "4"}, {"iodepth", "8"}, {"number_ios", "1000"}});
  REQUIRE(r.vcpus.size() == 4);
  CHECK(r.count("ios") == 4000);
  for (unsigned v = 0; v < r.vcpus.size(); ++v) {
    CHECK(r.count("utilization.vcpu.ios", v) == 1000);
    CHECK(r.count("utilization.vcpu.interrupts", v) > 0);
  }
}

TEST_CASE("e2e: latency backend bounds IOPS by iodepth / latency", "[e2e]") {
  // 50 us per command, 8 in flight: at most 160k IOPS; guest costs make it less.
  const RunResults r = simulate({{"iodepth", "8"},
                                 {"number_ios", "2000"},
                                 {"nvme.backend", "latency"},
                                 {"nvme.backend_latency", "50us"}});
  CHECK(r.figure("iops") < 160000.0);
  CHECK(r.lat.min() >= 50000);
  CHECK(r.driver_lat.min() >= 50000);
  // fio's lat includes the wait in the aio ring for fio's reap; the
  // driver's latency does not.
  CHECK(r.lat.mean() > r.driver_lat.mean());
  CHECK(r.lat.count() == 2000);
  CHECK(r.clat.count() == 2000);
  CHECK(r.slat.count() == 2000);
}

TEST_CASE("e2e: IOPS falls when the MMIO exit cost rises", "[e2e][binary]") {
  const auto cheap = test::run_nvmesim(
      "--number_ios=3000 --nvme.dbbuf=off --hv.exit_mmio=1000cyc --output-format=json");
  const auto dear = test::run_nvmesim(
      "--number_ios=3000 --nvme.dbbuf=off --hv.exit_mmio=20000cyc --output-format=json");
  REQUIRE(cheap.exit_code == 0);
  REQUIRE(dear.exit_code == 0);
  CHECK(test::json_number(dear.out, "iops") < test::json_number(cheap.out, "iops"));
}

TEST_CASE("e2e: same configuration and seed give byte-identical JSON", "[e2e][binary]") {
  const std::string args = "--number_ios=2000 --numjobs=2 --rw=randrw --seed=7 --output-format=json";
  const auto a = test::run_nvmesim(args);
  const auto b = test::run_nvmesim(args);
  REQUIRE(a.exit_code == 0);
  CHECK(a.out == b.out);
  const auto c = test::run_nvmesim("--number_ios=2000 --numjobs=2 --rw=randrw --seed=8 --output-format=json");
  CHECK(c.out != a.out);
}
