// Timing rules of the hypervisor and host-thread models, on small whole runs
// (issue: hypervisor timing). Pairs of runs differ in one parameter; each
// run simulates in a child process (SystemC elaborates once per process).
#include <catch2/catch.hpp>

#include "nvmesim/models/nvme/nvme_controller.h"
#include "nvmesim/models/hv/vm_exit.h"
#include "nvmesim/platform/config/params.h"
#include "nvmesim/platform/config/presets.h"
#include "nvmesim/platform/report/derived_figures.h"
#include "nvmesim/platform/system/run.h"
#include "nvmesim/platform/system/system.h"
#include "run_binary.h"

using namespace nvmesim;
using namespace nvmesim::platform;
using models::ExitKind;

namespace {
using Settings = std::vector<std::pair<std::string, std::string>>;

Config config_of(const Settings& settings) {
  Config c;
  for (const auto& [k, v] : settings) c.set(k, v);
  c.validate_all();
  return c;
}

Settings with(Settings settings, const Settings& more) {
  settings.insert(settings.end(), more.begin(), more.end());
  return settings;
}

std::string run_json(const Settings& settings) {
  const Config c = config_of(settings);
  RunSummary s{};
  std::string json, error;
  REQUIRE(run_in_child(c, false, s, json, error));
  REQUIRE_FALSE(s.stalled);
  return json;
}

double num(const std::string& json, const std::string& key) { return test::json_number(json, key); }

// Latency keys: the first "min" / "max" in the results are lat_ns's.
Settings base(Settings more) {
  // The fixed wake-ups: these timings are exact sums of the costs.
  Settings s = {{"iodepth", "1"}, {"number_ios", "200"}, {"nvme.backend", "null"}, {"hv.wakeup", "fixed"}};
  s.insert(s.end(), more.begin(), more.end());
  return s;
}
}  // namespace

TEST_CASE("timing: an ioeventfd exit costs hv.exit_ioeventfd and carries no value", "[timing]") {
  const Config c = config_of(
      base({{"nvme.dbbuf", "spec"}, {"hv.notify", "ioeventfd"}, {"hv.exit_ioeventfd", "777ns"}}));
  System s(c);
  const RunResults r = s.run();
  REQUIRE(r.count("ios") == 200);
  // Every doorbell write of an I/O queue went to the ioeventfd; none trapped to the device.
  const uint64_t n = r.count("exits.count.ioeventfd");
  CHECK(n == r.count("doorbells.sq.mmio") + r.count("doorbells.cq.mmio"));
  CHECK(r.count("doorbells.sq.mmio") == 200);  // iodepth 1 with echo: every SQ update rings
  CHECK(r.count("exits.count.mmio_doorbell") == 0);
  CHECK(r.stats.at("vcpu0.exit_time.ioeventfd") == n * 777000);  // ps
}

TEST_CASE("timing: the device starts the dispatch latency after the doorbell", "[timing]") {
  // iodepth 1: each I/O waits for one wake-up of the sleeping main loop; the
  // CQ doorbell of the previous I/O does not keep it awake.
  const Settings common = {{"nvme.dbbuf", "off"}, {"hv.notify", "deferred"}};
  const std::string ja = run_json(with(base(common), {{"hv.dispatch_latency", "2us"}}));
  const std::string jb = run_json(with(base(common), {{"hv.dispatch_latency", "7us"}}));
  CHECK(num(jb, "min") - num(ja, "min") == 5000);
  CHECK(num(jb, "max") - num(ja, "max") == 5000);
}

TEST_CASE("timing: polling iothreads avoid the wake-up latency", "[timing]") {
  const Settings common = {{"nvme.dbbuf", "off"}, {"hv.device_thread", "iothread"},
                           {"hv.dispatch_latency", "5us"}};
  const std::string js = run_json(with(base(common), {{"hv.poll_max_ns", "0"}}));
  const std::string jp = run_json(with(base(common), {{"hv.poll_max_ns", "32768"}}));
  // Without polling every request pays the 5 us wake-up; with it, after the
  // window has grown, requests arrive while the thread polls.
  const std::string is = js.substr(js.find("\"iothread0\"")), ip = jp.substr(jp.find("\"iothread0\""));
  CHECK(num(is, "wakeups_while_polling") == 0);
  CHECK(num(ip, "wakeups_while_polling") > 150);
  CHECK(num(js, "min") - num(jp, "min") == 5000);
  CHECK(num(ip, "polling") > 0);  // the iothread's busy share includes polling
}

TEST_CASE("timing: timers defer SQ and CQ processing by their delay", "[timing]") {
  const Settings common = {{"nvme.dbbuf", "off"}, {"hv.notify", "timer"}};
  const std::string ja = run_json(with(base(common), {{"hv.timer_delay", "500ns"}}));
  const std::string jb = run_json(with(base(common), {{"hv.timer_delay", "3500ns"}}));
  // One SQ timer and one CQ timer per I/O at iodepth 1. The SQ timer is
  // armed while the thread sleeps, so it runs at the later of its deadline
  // and the thread's wake-up (hv.dispatch_latency 2 us): 3500 - 2000; the
  // CQ timer is armed during the pass and fires on time: 3000.
  CHECK(num(jb, "min") - num(ja, "min") == 1500 + 3000);
}

// The thread's timer is the earliest pending queue deadline; one served in
// the same pass it was set (or met by another wake-up) must not wake the
// thread again for nothing. QEMU 2015's setting: one job, BQL, MMIO exits.
TEST_CASE("timing: timer-deferred processing never wakes the thread for nothing", "[timing]") {
  const Config c = config_of({{"hv.notify", "timer"}, {"hv.device_thread", "mainloop"},
                              {"hv.bql", "on"}, {"hv.bql_hold", "36us"}, {"nvme.cmd_cost", "11.6us"},
                              {"nvme.dbbuf", "off"}, {"iodepth", "32"}, {"number_ios", "2000"}});
  System s(c);
  const RunResults r = s.run();
  REQUIRE(r.count("ios") == 2000);
  REQUIRE(figures::instances(r, figures::Over::DeviceThread) == 1);
  // Every dispatch ran at least one pass that found work (bursts count
  // those passes; both restart when measurement starts).
  CHECK(r.count("utilization.device.dispatches", 0) <= s.controller().counters().bursts);
}

TEST_CASE("timing: posted interrupts remove the injection exit", "[timing]") {
  const std::string off = run_json(base({{"hv.posted_interrupts", "off"}}));
  const std::string on = run_json(base({{"hv.posted_interrupts", "on"}}));
  CHECK(num(off, "interrupt") == 200);
  CHECK(num(on, "interrupt") == 0);
  CHECK(num(off, "min") - num(on, "min") == Approx(1000));  // hv.inject = 1us
}

TEST_CASE("timing: the EOI exit goes away with APIC virtualization", "[timing]") {
  const std::string off = run_json(base({{"hv.apicv", "off"}}));
  const std::string on = run_json(base({{"hv.apicv", "on"}}));
  CHECK(num(off, "eoi") == 200);
  CHECK(num(on, "eoi") == 0);
}

TEST_CASE("timing: interrupt coalescing lowers interrupts per I/O", "[timing]") {
  const Settings common = {{"iodepth", "32"}, {"number_ios", "4000"}, {"nvme.backend", "latency"},
                           {"nvme.backend_latency", "20us"}, {"nvme.dbbuf", "off"}, {"hv.wakeup", "fixed"}};
  const std::string jp = run_json(common);
  const std::string jc = run_json(
      with(common, {{"guest.irq_coalescing_thr", "8"}, {"guest.irq_coalescing_time", "100us"}}));
  const double per_io_plain = num(jp.substr(jp.find("\"per_io\"")), "interrupts");
  const double per_io_coal = num(jc.substr(jc.find("\"per_io\"")), "interrupts");
  CHECK(per_io_plain >= 0.4);
  // At most one interrupt per 8 completions, plus the time-outs.
  CHECK(per_io_coal <= 1.0 / 8 + 0.01);
  CHECK(num(jc, "coalesced_completions") > 0);
}

// The uncleared ioeventfd (an eventfd QEMU never cleared), in both readings, and without it.
const Settings kIoeventfdRun = {{"iodepth", "4"},        {"number_ios", "500"},
                                {"nvme.dbbuf", "spec"},  {"hv.notify", "ioeventfd"},
                                {"sim.stall_timeout", "1ms"}};

TEST_CASE("timing: hv.fault=eventfd_not_cleared loses wake-ups, the watchdog names the queue",
          "[timing]") {
  const Config c = config_of(with(kIoeventfdRun, {{"hv.fault", "eventfd_not_cleared"}}));
  System s(c);
  const RunResults r = s.run();
  REQUIRE(r.stalled);
  CHECK(r.count("controller.lost_notifications") > 0);
  CHECK(r.stall_report.find("queue 1") != std::string::npos);
  CHECK(r.count("ios") < 500);
}

TEST_CASE("timing: the same run without the fault completes", "[timing]") {
  const Config c = config_of(kIoeventfdRun);
  System s(c);
  const RunResults r = s.run();
  CHECK_FALSE(r.stalled);
  CHECK(r.count("ios") == 500);
  CHECK(r.count("controller.lost_notifications") == 0);
}

// QEMU's reading of the same bug: the eventfd stays readable, so the main
// loop's poll returns at once. Nothing is lost: the run completes, the
// thread never sleeps again, and every loop iteration is a dispatch that
// re-runs the stuck handlers.
TEST_CASE("timing: hv.fault=eventfd_spin keeps the thread spinning and loses nothing", "[timing]") {
  const Config c = config_of(
      with(kIoeventfdRun, {{"hv.fault", "eventfd_spin"}, {"hv.dispatch_cost", "500ns"}}));
  System s(c);
  const RunResults r = s.run();
  CHECK_FALSE(r.stalled);
  CHECK(r.count("ios") == 500);
  CHECK(r.count("controller.lost_notifications") == 0);
  REQUIRE(figures::instances(r, figures::Over::DeviceThread) == 1);
  REQUIRE(figures::device_thread(r, 0) == "mainloop");
  // Busy the whole measured interval: the first doorbell woke it from
  // sleep, and it never slept again.
  CHECK(double(r.stats.at("mainloop.busy_time")) / 1000.0 >= 0.999 * r.sim_time_ns);
  CHECK(r.count("utilization.device.wakeups_from_sleep", 0) == 1);
  const uint64_t dispatches = r.count("utilization.device.dispatches", 0);
  // Each iteration costs at least hv.dispatch_cost and re-runs the stuck
  // handlers: the SQ's from the first SQ doorbell, the CQ's too from the
  // first CQ doorbell on (a few iterations later).
  CHECK(dispatches <= uint64_t(r.sim_time_ns / 500.0) + 1);
  CHECK(dispatches >= uint64_t(0.5 * r.sim_time_ns / 500.0));
  CHECK(r.count("controller.stuck_handler_runs") <= 2 * dispatches);
  CHECK(r.count("controller.stuck_handler_runs") + 100 >= 2 * dispatches);
}

TEST_CASE("timing: hv.fault=eventfd_spin needs a dispatch cost", "[timing][cli]") {
  test::check_refused(
      "--nvme.dbbuf=spec --hv.notify=ioeventfd --hv.fault=eventfd_spin --hv.dispatch_cost=0ns",
      "nvmesim: error: --hv.fault: eventfd_spin needs hv.dispatch_cost > 0 (each spin of the loop "
      "costs a dispatch)");
}

TEST_CASE("timing: fewer host cores than busy threads slow everyone down", "[timing]") {
  const Settings common = {{"numjobs", "2"}, {"iodepth", "16"}, {"number_ios", "2000"},
                           {"hv.device_thread", "iothread"}, {"hv.iothreads", "2"}};
  const std::string jm = run_json(common), jo = run_json(with(common, {{"host.cores", "1"}}));
  CHECK(num(jm, "overcommitted") == 0);
  CHECK(num(jo, "overcommitted") > 0.5);
  CHECK(num(jo, "iops") < 0.7 * num(jm, "iops"));
}

TEST_CASE("timing: QEMU's global lock makes MMIO handlers and the main loop wait", "[timing]") {
  const Settings common = {{"iodepth", "32"}, {"number_ios", "3000"}, {"nvme.dbbuf", "off"},
                           {"nvme.cmd_cost", "3us"}};
  const std::string locked = run_json(with(common, {{"hv.bql", "on"}, {"hv.bql_hold", "3us"}}));
  CHECK(num(locked, "iops") < num(run_json(common), "iops"));
}

TEST_CASE("presets: apply the published machines and later options override them", "[presets]") {
  Config c;
  apply_preset("ivybridge-i7", c);
  CHECK(c.text("hv.exit_mmio") == "7000cyc");
  CHECK(c.text("hv.exit_ioeventfd") == "3000cyc");
  CHECK(c.text("hv.exit_pio") == "4100cyc");
  CHECK(c.text("hv.exit_pio_ioeventfd") == "1800cyc");
  CHECK_THROWS_WITH(apply_preset("pentium", c),
                    "--preset: 'pentium' is not one of haswell-ep, ivybridge-i7, qemu-7.2, qemu-7.1, kvm, tcg");
  // A device preset combines with an exit-cost preset; later ones win.
  Config both;
  apply_preset("qemu-7.1,haswell-ep", both);
  CHECK(both.text("nvme.cq_eventidx") == "never");
  CHECK(both.text("hv.exit_mmio") == "5100cyc");
  apply_preset("qemu-7.2", both);
  CHECK(both.text("nvme.cq_eventidx") == "echo");
  CHECK(both.text("hv.exit_mmio") == "5100cyc");
  CHECK_THROWS_WITH(apply_preset("qemu-7.2,", both), "--preset: empty name (see --list-presets)");
  const auto r = test::run_nvmesim(
      "--preset haswell-ep --hv.exit_mmio=100ns --number_ios=100 --output-format=json");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("\"hv.exit_mmio\": \"100ns\"") != std::string::npos);
  CHECK(r.out.find("\"hv.exit_ioeventfd\": \"2250cyc\"") != std::string::npos);
  const auto list = test::run_nvmesim("--list-presets");
  CHECK(list.exit_code == 0);
  CHECK(list.out.find("haswell-ep") != std::string::npos);
  CHECK(list.out.find("source:") != std::string::npos);
}

TEST_CASE("timing: port I/O doorbells cost the port I/O exit", "[timing]") {
  const std::string j = run_json(base({{"nvme.dbbuf", "off"}, {"hv.doorbell_access", "pio"},
                                       {"hv.exit_pio", "1234ns"}, {"pcie.emulated_access", "0ns"}}));
  CHECK(num(j, "pio") == 400);  // SQ + CQ doorbell per I/O
  CHECK(num(j, "mmio_doorbell") == 0);
  CHECK(num(j.substr(j.find("\"time_ns\"")), "pio") == Approx(400 * 1234.0));
}
