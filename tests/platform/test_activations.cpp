// The model's SystemC process activations (--host-stats), counted exactly:
// at iodepth 1 every I/O goes through the same steps, each of which is one
// resume of a known process. Each test case runs in its own process.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "nvmesim/models/sim/activations.h"
#include "nvmesim/platform/config/params.h"
#include "nvmesim/platform/system/system.h"
#include "run_binary.h"
#include "simulate.h"

using namespace nvmesim;
using namespace nvmesim::platform;
namespace act = nvmesim::models::activations;

using nvmesim::test::simulate;

// Default costs: sim.quantum 1 us, guest.submit_cost 1.5 us, irq_entry
// 0.5 us, complete_cost 1 us, interrupt and EOI exits 1 us each,
// store_visibility 20 ns, null backend. At iodepth 1 the device is idle when
// each update is published, so both doorbells are rung through MMIO.
TEST_CASE("activations: iodepth 1, buffer on: exact counts per I/O", "[activations]") {
  const RunResults r = simulate({{"iodepth", "1"}, {"number_ios", "3"}, {"nvme.dbbuf", "spec"}});
  REQUIRE(r.bringup_ok);
  REQUIRE(r.dbbuf_active);
  REQUIRE(r.count("ios") == 3);
  REQUIRE(r.count("doorbells.sq.mmio") == 3);
  REQUIRE(r.count("doorbells.cq.mmio") == 3);
  // vCPU thread, three waits per I/O: the halt until the interrupt, one
  // wait in the handler (its entry and completion work, which the main
  // loop's dispatch still overlaps), and one where the main loop's work is
  // due before the vCPU's present. The submission's work, its barrier and
  // both doorbells' exits run ahead of the kernel when nothing else is due
  // meanwhile: an exit starts and ends at the vCPU's own present
  // (Vcpu::mmio). Plus two: the job's end (its last EOI) and the first
  // submission, which bring-up's last admin dispatch still overlaps.
  CHECK(act::counts[act::VcpuThread] == 3 * 3 + 2);
  // The shadow stores land within the full barrier that follows them (no
  // drain event): nobody can look before they are visible.
  CHECK(act::counts[act::VcpuStoreCommit] == 0);
  // Main loop, one dispatch per I/O (it serves the CQ doorbell of one I/O
  // with the SQ doorbell of the next): its wake-up and the end of the
  // dispatch (the MSI-X write's time). The SQ EventIdx, CQ EventIdx and CQE
  // writes land at their times without a wait: the vCPU is halted and
  // nothing else is due before the dispatch ends.
  CHECK(act::counts[act::HostThread] == 2 * 3);
  CHECK(act::counts[act::BackendCompletion] == 0);  // null backend: completes inline
  CHECK(act::counts[act::ControllerMethod] == 0);   // enabled in bring-up, no coalescing
}

TEST_CASE("activations: iodepth 1, buffer off: no barriers, no EventIdx writes", "[activations]") {
  const RunResults r = simulate({{"iodepth", "1"}, {"number_ios", "3"}, {"nvme.dbbuf", "off"}});
  REQUIRE(r.bringup_ok);
  REQUIRE(r.count("ios") == 3);
  // The same three waits per I/O (no barriers to run ahead through), and
  // two more at the job's start and end.
  CHECK(act::counts[act::VcpuThread] == 3 * 3 + 2);
  CHECK(act::counts[act::VcpuStoreCommit] == 0);
  // The main loop: its wake-up and the end of the dispatch.
  CHECK(act::counts[act::HostThread] == 2 * 3);
}

TEST_CASE("activations: a latency backend's completions are its timer's runs", "[activations]") {
  const RunResults r = simulate({{"iodepth", "1"}, {"number_ios", "4"}, {"nvme.dbbuf", "spec"},
                                 {"nvme.backend", "latency"}});
  REQUIRE(r.bringup_ok);
  REQUIRE(r.count("ios") == 4);
  // iodepth 1: one command in service at a time, one timer run each.
  CHECK(act::counts[act::BackendCompletion] == 4);
}

TEST_CASE("activations: --host-stats reports them per I/O, in JSON and text", "[activations]") {
  const auto j = test::run_nvmesim("--nvme.dbbuf=spec --number_ios=5000 --host-stats --output-format=json --hv.wakeup=fixed");
  REQUIRE(j.exit_code == 0);
  const auto doc = nlohmann::json::parse(j.out);
  const auto& host = doc.at("host");
  uint64_t total = 0;
  for (const char* kind : act::kind_names) total += host.at("activations").at(kind).get<uint64_t>();
  const double ios = doc.at("stats").at("vcpu0").at("ios").get<double>();
  REQUIRE(ios == 5000);
  CHECK(host.at("activations_per_io").get<double>() == Approx(double(total) / ios).margin(0.0005));
  // iodepth 32: each publish's barrier still makes its shadow store land
  // without a drain event.
  CHECK(host.at("activations").at("vcpu_store_commit").get<uint64_t>() == 0);
  const auto t = test::run_nvmesim("--nvme.dbbuf=spec --number_ios=5000 --host-stats");
  REQUIRE(t.exit_code == 0);
  CHECK(t.out.find("  model process activations per I/O: ") != std::string::npos);
  CHECK(t.out.find("(vcpu_thread ") != std::string::npos);  // the kinds that ran, per I/O
}

TEST_CASE("activations: idle simulated time costs the watchdog no activations in proportion", "[activations]") {
  // With no I/O outstanding the watchdog sleeps to the next pending activity
  // instead of ticking every sim.stall_timeout (10 ms): a think of 1 s and
  // one of an hour cost it the same few activations (they cost 100 and
  // 360000 per I/O when it ticked), while the run's simulated time grows.
  double sim_ns[2] = {0, 0};
  for (int k = 0; k < 2; ++k) {
    const std::string think = k ? "3600s" : "1s";
    INFO("thinktime " << think);
    const auto j = test::run_nvmesim("--single-run --iodepth=1 --number_ios=5 --host-stats --output-format=json "
                                     "--thinktime=" + think);
    REQUIRE(j.exit_code == 0);
    const auto doc = nlohmann::json::parse(j.out);
    CHECK(doc.at("ios").get<double>() == 5);
    CHECK(doc.at("host").at("activations").at("watchdog").get<uint64_t>() <= 3 * 5);
    sim_ns[k] = doc.at("sim_time_ns").get<double>();
  }
  // Four thinks of each length (not after the last I/O): the hour-long ones
  // really passed in simulated time.
  CHECK(sim_ns[0] > 4e9);
  CHECK(sim_ns[1] > 4 * 3600e9);
}
