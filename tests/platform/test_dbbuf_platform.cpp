// The doorbell buffer's failure modes in the whole SystemC platform: lost
// wake-ups the watchdog reports (CQ EventIdx never written with a small CQ;
// no full barrier with a slow store buffer), --fail-on-stall, and the MMIO
// fallback when Doorbell Buffer Config fails. Each TEST_CASE runs in its own
// process (catch_discover_tests), since SystemC elaborates once per process.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "nvmesim/firmware/nvme/controller.h"
#include "nvmesim/firmware/guest/driver.h"
#include "nvmesim/firmware/nvme/eventidx.h"
#include "nvmesim/models/guest/guest.h"
#include "nvmesim/models/mem/guest_memory.h"
#include "nvmesim/models/nvme/nvme_controller.h"
#include "nvmesim/models/guest/vcpu.h"
#include "nvmesim/models/hv/vm_exit.h"
#include "nvmesim/platform/config/params.h"
#include "nvmesim/platform/report/derived_figures.h"
#include "nvmesim/platform/system/system.h"
#include "run_binary.h"

using namespace nvmesim;
using namespace nvmesim::platform;

namespace {

using Settings = std::vector<std::pair<const char*, const char*>>;

Config make_config(const Settings& settings) {
  Config c;
  for (const auto& [k, v] : settings) c.set(k, v);
  c.validate_all();
  return c;
}

uint32_t read32(System& s, uint64_t gpa) {
  uint32_t v = 0;
  std::memcpy(&v, s.memory().ptr(gpa, 4), 4);
  return v;
}

// The timing the lost-wake-up demonstrations rely on, pinned so a change of
// defaults elsewhere does not move the window.
const Settings kTiming = {{"hv.wakeup", "fixed"},  // the interleavings below need the fixed wake-up
                          {"hv.notify", "deferred"},     {"hv.device_thread", "mainloop"},
                          {"hv.dispatch_latency", "2us"}, {"hv.dispatch_cost", "500ns"},
                          {"hv.exit_mmio", "5100cyc"},    {"hv.cpu_ghz", "2.3"},
                          {"guest.submit_cost", "1500ns"}, {"nvme.cmd_cost", "1us"},
                          {"nvme.backend", "null"},       {"sim.stall_timeout", "200us"}};

Settings with(Settings base, const Settings& more) {
  base.insert(base.end(), more.begin(), more.end());
  return base;
}

// A 4-entry CQ under 16 commands in flight (the CQ EventIdx runs).
const Settings kSmallCq = with(kTiming, {{"guest.io_cq_entries", "4"},
                                         {"iodepth", "16"},
                                         {"number_ios", "500"}});
// Shadow stores visible 5 us late, 2 in flight (the barrier runs).
const Settings kLateStores = with(kTiming, {{"guest.store_visibility", "5us"},
                                            {"iodepth", "2"},
                                            {"number_ios", "200"}});

}  // namespace

// ---------------------------------------------------------------- CQ EventIdx never
// A 4-entry CQ holds at most 3 CQEs while 16 commands are in flight. The
// device, finding the CQ full, waits for a head update. With "never" the CQ
// EventIdx stays 0, so a head update is rung only when [old, new) holds 0;
// new submissions make the device re-read the shadow head, but once the
// job has issued number_ios nothing does, and the last suppressed update
// leaves the device waiting on a CQ that has room. The guest polls its CQ
// every 10 us, so the device fills the CQ between looks (a guest that takes
// each interrupt as it arrives publishes its head while the device is still
// posting, and the device's own re-read of the shadow head finds the room).
TEST_CASE("dbbuf platform: CQ EventIdx never with a CQ smaller than the I/Os in flight stalls",
          "[dbbuf][stall]") {
  const Config c = make_config(with(kSmallCq, {{"nvme.cq_eventidx", "never"},
                                               {"guest.completion", "poll"},
                                               {"guest.poll_interval", "10us"}}));
  System s(c);
  const RunResults r = s.run();
  REQUIRE(r.dbbuf_active);
  REQUIRE(r.stalled);
  CHECK(r.stall_report.find("by the watchdog") != std::string::npos);
  CHECK(r.stall_report.find("queue 1 ") != std::string::npos);
  CHECK(r.stall_report.find("CQ 1 (4 entries)") != std::string::npos);
  CHECK(r.stall_report.find("CQ 1 is full as the device sees it") != std::string::npos);

  const auto& d = s.guest().driver();
  const auto cq = s.controller().firmware().cq_state(1);
  const auto sq = s.controller().firmware().sq_state(1);
  const uint32_t left = s.vcpus()[0]->outstanding();
  CHECK(d.cq_entries() == 4);
  CHECK(cq.size == 4);
  // Every I/O was issued and fetched; the rest wait in the device for room.
  CHECK(r.count("ios") + left == 500);
  CHECK(left > 0);
  CHECK(sq.head == 500);
  CHECK(d.sq_tail(1) == 500);
  CHECK(cq.pending == left);
  CHECK(fw::Ring{4}.full(cq.head, cq.tail));
  // The driver consumed every posted CQE and published its head...
  CHECK(d.cq_head(1) == cq.tail);
  const uint32_t off = fw::dbbuf_cq_offset(1, 0);
  CHECK(read32(s, d.shadow_buffer_addr() + off) == cq.tail);
  // ...but the never-written EventIdx (0) suppressed the doorbell, and the
  // device's head is the one it read before.
  CHECK(read32(s, d.eventidx_buffer_addr() + off) == 0);
  CHECK(cq.head != cq.tail);
  CHECK(r.count("doorbells.cq.suppressed") > 0);
  CHECK(r.count("doorbells.cq.updates") == r.count("doorbells.cq.mmio") + r.count("doorbells.cq.suppressed"));
}

// The same stall with a vCPU that polls its CQ: it stays busy until the
// watchdog stops the run. The measured interval lasts until then, so the
// stalled time counts and the vCPU is busy 100% of it, not more (measured to
// its last completion it was busy over 100%).
TEST_CASE("dbbuf platform: a stalled run is measured until the stall and is busy at most 100%",
          "[dbbuf][stall]") {
  const Config c =
      make_config(with(kSmallCq, {{"nvme.cq_eventidx", "never"}, {"guest.completion", "poll"}}));
  System s(c);
  const RunResults r = s.run();
  REQUIRE(r.stalled);
  REQUIRE(r.vcpus.size() == 1);
  CHECK(r.sim_time_ns >= 200000.0);
  const double vcpu_busy = r.figure("utilization.vcpu.guest_ns", 0) + r.figure("utilization.vcpu.exit_ns", 0);
  CHECK(vcpu_busy <= r.sim_time_ns);
  CHECK(vcpu_busy >= 0.99 * r.sim_time_ns);  // it polled all along
  for (unsigned t = 0; t < figures::instances(r, figures::Over::DeviceThread); ++t) {
    const std::string g = figures::device_thread(r, t) + ".";
    CHECK(double(r.stats.at(g + "busy_time") + r.stats.at(g + "poll_time")) / 1000.0 <= r.sim_time_ns);
  }
  CHECK(r.figure("iops") == Approx(double(r.count("ios")) * 1e9 / r.sim_time_ns));
  // The job's own interval (fio's runtime) is the run's.
  CHECK(r.vcpus[0].sim_time_ns == r.sim_time_ns);
}

TEST_CASE("dbbuf platform: the same small-CQ run completes with CQ EventIdx echo",
          "[dbbuf][stall]") {
  const Config c = make_config(with(kSmallCq, {{"nvme.cq_eventidx", "echo"}}));
  System s(c);
  const RunResults r = s.run();
  REQUIRE(r.dbbuf_active);
  CHECK_FALSE(r.stalled);
  CHECK(r.stall_report.empty());
  CHECK(r.count("ios") == 500);
  CHECK(r.count("io_errors") == 0);
  CHECK(r.count("controller.cq_full_waits") > 0);  // the CQ did fill: the device waited and was woken
  CHECK(s.controller().firmware().cq_state(1).size == 4);
}

// ---------------------------------------------------------------- the driver's barrier
// iodepth 2, shadow stores visible 5 us late. Command 0 rings (EventIdx 0
// in [0, 1)). Command 1 is stored while the device has not yet fetched
// command 0; without mb() the EventIdx load passes the buffered store and
// reads 0: 0 is not in [1, 2), no doorbell. The device then fetches command
// 0, echoes EventIdx 1 and re-reads the shadow tail: still 1. After command
// 0 completes, command 2 publishes 2 -> 3 against EventIdx 1: no doorbell
// either. Commands 1 and 2 are never fetched. (Measured: with the barrier
// off this stalls for hv.dispatch_latency 0..4us at iodepth 2 and 4; with
// it on, none of those runs stalls.)
TEST_CASE("dbbuf platform: without the driver's full barrier a wake-up is lost", "[dbbuf][stall]") {
  const Config c = make_config(with(kLateStores, {{"guest.dbbuf_full_barrier", "off"}}));
  System s(c);
  const RunResults r = s.run();
  REQUIRE(r.dbbuf_active);
  REQUIRE(r.stalled);
  CHECK(r.count("ios") == 1);
  CHECK(r.count("doorbells.sq.updates") == 3);
  CHECK(r.count("doorbells.sq.mmio") == 1);
  CHECK(r.count("doorbells.sq.suppressed") == 2);
  const auto& d = s.guest().driver();
  const auto sq = s.controller().firmware().sq_state(1);
  CHECK(d.sq_tail(1) == 3);
  CHECK(sq.head == 1);
  CHECK(sq.tail == 1);
  const uint32_t off = fw::dbbuf_sq_offset(1, 0);
  CHECK(read32(s, d.shadow_buffer_addr() + off) == 3);
  CHECK(read32(s, d.eventidx_buffer_addr() + off) == 1);
  CHECK(s.vcpus()[0]->outstanding() == 2);
  CHECK(r.stall_report.find("queue 1 ") != std::string::npos);
  CHECK(r.stall_report.find("SQ 1 driver tail 3, device head 1 tail 1 (the device never saw") !=
        std::string::npos);
  CHECK(r.stall_report.find("shadow doorbells: SQ tail 3") != std::string::npos);
  CHECK(r.stall_report.find("EventIdx: SQ 1,") != std::string::npos);
  CHECK(r.stall_report.find("2 commands in flight") != std::string::npos);
}

TEST_CASE("dbbuf platform: with the full barrier the same run completes", "[dbbuf][stall]") {
  const Config c = make_config(with(kLateStores, {{"guest.dbbuf_full_barrier", "on"}}));
  System s(c);
  const RunResults r = s.run();
  REQUIRE(r.dbbuf_active);
  CHECK_FALSE(r.stalled);
  CHECK(r.count("ios") == 200);
  CHECK(r.count("doorbells.sq.updates") == 200);
  CHECK(r.count("doorbells.sq.updates") == r.count("doorbells.sq.mmio") + r.count("doorbells.sq.suppressed"));
  CHECK(s.controller().firmware().sq_state(1).head == s.guest().driver().sq_tail(1));
}

// ---------------------------------------------------------------- --fail-on-stall
TEST_CASE("dbbuf platform: --fail-on-stall exits 3 on a stall, 0 otherwise", "[dbbuf][stall][cli]") {
  const std::string stall =
      "--guest.dbbuf_full_barrier=off --guest.store_visibility=5us --iodepth=2 "
      "--number_ios=200 --sim.stall_timeout=200us --hv.notify=deferred "
      "--hv.device_thread=mainloop --hv.wakeup=fixed --hv.dispatch_latency=2us --hv.dispatch_cost=500ns "
      "--hv.exit_mmio=5100cyc --guest.submit_cost=1500ns --nvme.cmd_cost=1us --single-run";
  auto r = test::run_nvmesim(stall + " --fail-on-stall");
  CHECK(r.exit_code == 3);
  CHECK(r.out.find("STALL: stall detected at") != std::string::npos);
  r = test::run_nvmesim(stall);  // reported, but not a failure without the option
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("STALL: ") != std::string::npos);
  r = test::run_nvmesim("--iodepth=2 --number_ios=50 --fail-on-stall");
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("STALL") == std::string::npos);
  r = test::run_nvmesim("--fail-on-stall=1");
  CHECK(r.exit_code == 2);
  r = test::run_nvmesim("--guest.io_cq_entries=1 --number_ios=10");
  CHECK(r.exit_code == 2);
  CHECK(r.err == "nvmesim: error: --guest.io_cq_entries: 1 is not a queue size (allowed 0 = as "
                 "the SQ, or 2..65536)\n");
}

// ---------------------------------------------------------------- config failure
// guest.dbbuf_fault makes the driver send Doorbell Buffer Config with a bad
// PRP (the page-room failure cannot be configured: System refuses
// nvme.max_io_queues that do not fit a page). The controller answers
// Invalid Field in Command with DNR and the driver rings MMIO on every queue.
TEST_CASE("dbbuf platform: a rejected Doorbell Buffer Config falls back to MMIO everywhere",
          "[dbbuf]") {
  const Config c = make_config({{"nvme.dbbuf", "spec"},
                                {"guest.dbbuf_fault", "misaligned"},
                                {"guest.admin_shadow", "on"},
                                {"numjobs", "2"},
                                {"iodepth", "8"},
                                {"number_ios", "300"}});
  System s(c);
  const RunResults r = s.run();
  REQUIRE(r.bringup_ok);
  CHECK_FALSE(r.stalled);
  CHECK_FALSE(r.dbbuf_active);
  CHECK_FALSE(s.controller().firmware().dbbuf_active());
  CHECK(r.dbbuf_opcode == nvme::admin::DOORBELL_BUFFER_CONFIG);
  CHECK(r.dbbuf_status == nvme::status_generic(nvme::sc::INVALID_FIELD, true));
  CHECK(r.dbbuf_status == 0x4002);
  CHECK(r.count("ios") == 600);
  // The admin queue too, despite admin_shadow: its doorbells ring during
  // bring-up, whose counts are kept apart (the groups restart at measurement).
  const stats::GroupValues& bringup = r.bringup_stats;
  CHECK(bringup.at("driver.sq0.updates") > 0);
  CHECK(bringup.at("driver.sq0.mmio") == bringup.at("driver.sq0.updates"));
  CHECK(bringup.at("driver.cq0.mmio") == bringup.at("driver.cq0.updates"));
  CHECK(bringup.at("driver.sq0.updates_with_dbbuf") == 0);
  CHECK(bringup.at("driver.cq0.updates_with_dbbuf") == 0);
  const auto& d = s.guest().driver();
  for (uint16_t q = 1; q <= 2; ++q) {
    INFO("queue " << q);
    CHECK(d.sq_counters(q).updates > 0);
    CHECK(d.sq_counters(q).mmio == d.sq_counters(q).updates);
    CHECK(d.cq_counters(q).mmio == d.cq_counters(q).updates);
    CHECK(d.sq_counters(q).updates_with_dbbuf == 0);
    CHECK(d.cq_counters(q).updates_with_dbbuf == 0);
  }
  CHECK(r.count("doorbells.sq.suppressed") == 0);
  CHECK(r.count("doorbells.cq.suppressed") == 0);
  CHECK(std::isnan(r.figure("eventidx.sq_hit_rate")));  // undefined: reported as null
  CHECK(std::isnan(r.figure("eventidx.cq_hit_rate")));
  CHECK(r.count("eventidx.shadow_reads") == 0);
  CHECK(r.count("eventidx.eventidx_writes") == 0);
  CHECK(r.count("exits.count.mmio_doorbell") == r.count("doorbells.sq.mmio") + r.count("doorbells.cq.mmio"));
}

TEST_CASE("dbbuf platform: each bad PRP is refused with Invalid Field, the JSON shows it",
          "[dbbuf][cli]") {
  for (const char* args : {"--guest.dbbuf_fault=zero", "--guest.dbbuf_fault=same",
                           "--guest.dbbuf_fault=outside",
                           "--guest.dbbuf_fault=misaligned --nvme.dbbuf=vendor"}) {
    INFO(args);
    const auto r = test::run_nvmesim(std::string(args) +
                                     " --iodepth=4 --number_ios=40 --single-run --output-format=json");
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.find("\"sq_hit_rate\": null, \"cq_hit_rate\": null, \"dbbuf_active\": false") !=
          std::string::npos);
    const bool vendor = std::string(args).find("vendor") != std::string::npos;
    CHECK(test::json_number(r.out, "dbbuf_opcode") == (vendor ? 0xC0 : 0x7C));
    CHECK(test::json_number(r.out, "dbbuf_status") == 0x4002);
    CHECK(test::json_number(r.out, "shadow_reads") == 0);
    CHECK(test::json_number(r.out, "ios") == 40);
  }
  // Without the fault the same run has the buffer.
  const auto ok = test::run_nvmesim("--iodepth=4 --number_ios=40 --output-format=json");
  REQUIRE(ok.exit_code == 0);
  CHECK(test::json_number(ok.out, "dbbuf_status") == 0);
  CHECK(ok.out.find("\"dbbuf_active\": true") != std::string::npos);
}

// ---------------------------------------------------------------- CQ eventfd
// With ioeventfd a CQ doorbell write carries no value: QEMU's CQ notifier
// reads the head from the shadow doorbell (hw/nvme/ctrl.c nvme_cq_notifier),
// so the CQ EventIdx the device writes before its next CQE is current and
// at iodepth 1 every head update rings. A device that learned the head only
// while posting would echo a stale head and the guest would ring almost never.
TEST_CASE("dbbuf platform: with ioeventfd the CQ notifier reads the shadow head", "[dbbuf]") {
  const Config c = make_config(with(kTiming, {{"hv.notify", "ioeventfd"}, {"nvme.dbbuf", "spec"},
                                              {"iodepth", "1"}, {"number_ios", "300"}}));
  System s(c);
  const RunResults r = s.run();
  REQUIRE(r.dbbuf_active);
  REQUIRE(r.count("ios") == 300);
  CHECK(r.count("doorbells.cq.updates") == 300);
  CHECK(r.count("doorbells.cq.mmio") == 300);
  CHECK(r.count("doorbells.sq.mmio") == 300);
}
