// hv.passthrough (a real SSD behind VFIO): doorbell writes reach the device
// without an exit unless their host page is trapped (hv.page_size,
// hv.msix_bar_mmap, nvme.msix_table); then each one is an MMIO doorbell exit.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <cmath>
#include <string>

#include <sstream>

#include "nvmesim/platform/config/params.h"
#include "nvmesim/platform/report/stats_doc.h"
#include "tests/platform/doc_table.h"
#include "nvmesim/platform/system/system.h"
#include "run_binary.h"
#include "temp_dir.h"
#include "text_file.h"

using nvmesim::test::check_refused;
using nvmesim::test::run_nvmesim;
using Json = nlohmann::json;

namespace {

const std::string kRun = " --number_ios=2000 --output-format=json";
const std::string kTrapped = "--hv.passthrough=on --nvme.msix_table=bar0 --hv.page_size=64k --hv.msix_bar_mmap=off";

Json run_json(const std::string& args) {
  INFO("nvmesim " << args);
  const auto r = run_nvmesim(args + kRun);
  REQUIRE(r.exit_code == 0);
  return Json::parse(r.out);
}

uint64_t doorbell_exits(const Json& j) { return j["exits"]["count"]["mmio_doorbell"].get<uint64_t>(); }
uint64_t mmio_writes(const Json& j) {
  return j["doorbells"]["sq"]["mmio"].get<uint64_t>() + j["doorbells"]["cq"]["mmio"].get<uint64_t>();
}

}  // namespace

TEST_CASE("passthrough: mapped doorbells cost no exit and the device runs no emulation thread",
          "[passthrough]") {
  const Json j = run_json("--hv.passthrough=on");
  CHECK(j["ios"].get<uint64_t>() == 2000);
  // A real SSD offers no doorbell buffer: every update is an MMIO write...
  CHECK(j["doorbells"]["sq"]["mmio"].get<uint64_t>() == 2000);
  CHECK(j["doorbells"]["sq"]["suppressed"].get<uint64_t>() == 0);
  CHECK(j["eventidx"]["sq_hit_rate"].is_null());
  CHECK(j["eventidx"]["shadow_reads"].get<uint64_t>() == 0);
  // ...and none of them is an exit.
  CHECK(doorbell_exits(j) == 0);
  CHECK(j["exits"]["count"]["mmio_other"].get<uint64_t>() == 0);
  CHECK(j["exits"]["count"]["ioeventfd"].get<uint64_t>() == 0);
  // per_io.* stay MMIO doorbell writes per I/O (docs/metrics.md): here none is an exit.
  CHECK(j["per_io"]["exits"].get<double>() == Approx(double(mmio_writes(j)) / 2000).margin(1e-6));
  // The SSD's hardware engine (models/nvme/nvme_hw_engine.h) instead of
  // QEMU's main loop: no host thread at all.
  const Json& stats = j["stats"];
  CHECK_FALSE(stats.contains("mainloop"));
  CHECK_FALSE(stats.contains("nvme_engine0"));
  REQUIRE(stats["nvme"].contains("engine"));
  const Json& e = stats["nvme"]["engine"];
  // Every command it fetched in the measured phase is an I/O completed or an
  // admin command (none in a plain run: the group restarts at measurement).
  CHECK(e["commands"].get<uint64_t>() ==
        j["ios"].get<uint64_t>() + stats["nvme"]["admin_commands"].get<uint64_t>());
  CHECK(e["commands"].get<uint64_t>() == stats["nvme"]["commands_fetched"].get<uint64_t>());
  CHECK(e["backend_handoffs"].get<uint64_t>() == 2000);
  CHECK(e["cqes"].get<uint64_t>() == stats["nvme"]["completions_posted"].get<uint64_t>());
  CHECK(e["msix"].get<uint64_t>() == stats["nvme"]["msix_sent"].get<uint64_t>());
  // Every SQ doorbell write wakes it; a CQ head update only when completions
  // wait for room, which a CQ of 1024 entries at iodepth 32 never has.
  CHECK(e["doorbells"].get<uint64_t>() == j["doorbells"]["sq"]["mmio"].get<uint64_t>());
  CHECK(e["runs"].get<uint64_t>() > 0);
  // The utilisation lists the engine as the one device "thread".
  const Json& device = j["utilization"]["device"];
  REQUIRE(device.size() == 1);
  CHECK(device[0]["thread"] == "nvme.engine");
  CHECK(device[0]["dispatches"] == e["runs"]);
  CHECK(device[0]["polling"].get<double>() == 0);
}

TEST_CASE("passthrough: an emulated controller has no engine group, QEMU's threads instead", "[passthrough]") {
  const Json j = run_json("--single-run");
  CHECK_FALSE(j["stats"]["nvme"].contains("engine"));
  CHECK(j["stats"].contains("mainloop"));
}

// At iodepth 1 every stage of the engine is on the I/O's path once: the
// SQ doorbell's decode (8 cycles), the command's fetch and parse (16 + 32),
// its hand-off to the backend (16), its CQE (16) and MSI-X message (8): 96
// cycles. The guest's side does not depend on the clock, and the engine is
// idle when each SQ doorbell arrives (the CQ head update wakes it only when
// completions wait for room), so halving nvme.clock adds exactly 96 ns to
// fio's mean latency (1 ns a cycle at 1 GHz, 2 ns at 0.5 GHz), and zero
// cycles take 96 ns off.
TEST_CASE("passthrough: at iodepth 1 nvme.clock and the stage cycles add to the latency one for one",
          "[passthrough]") {
  const std::string qd1 = "--hv.passthrough=on --iodepth=1";
  const double base = run_json(qd1)["lat_ns"]["mean"].get<double>();
  const double slow = run_json(qd1 + " --nvme.clock=0.5")["lat_ns"]["mean"].get<double>();
  const double free = run_json(qd1 + " --nvme.doorbell_decode_cycles=0 --nvme.sqe_fetch_cycles=0"
                                     " --nvme.command_parse_cycles=0 --nvme.backend_handoff_cycles=0"
                                     " --nvme.cqe_post_cycles=0 --nvme.msix_cycles=0")["lat_ns"]["mean"]
                         .get<double>();
  CHECK(slow - base == Approx(96).margin(0.01));
  CHECK(base - free == Approx(96).margin(0.01));
}

TEST_CASE("passthrough: --list-params lists the hardware engine's clock and cycles, which warn off passthrough",
          "[passthrough][params]") {
  const auto list = run_nvmesim("--list-params");
  REQUIRE(list.exit_code == 0);
  for (const char* name : {"nvme.clock", "nvme.doorbell_decode_cycles", "nvme.sqe_fetch_cycles",
                           "nvme.command_parse_cycles", "nvme.backend_handoff_cycles", "nvme.cqe_post_cycles",
                           "nvme.msix_cycles", "nvme.sqe_burst"}) {
    INFO(name);
    CHECK(list.out.find(name) != std::string::npos);
  }
  const auto emulated = run_nvmesim("--single-run --number_ios=20 --nvme.clock=2 >/dev/null");
  CHECK(emulated.exit_code == 0);
  CHECK(emulated.err.find("nvmesim: warning: --nvme.clock: needs hv.passthrough on (it is off: the controller "
                          "runs on QEMU's emulation; the hardware engine's clock and cycles time a "
                          "passed-through SSD); the setting does nothing") != std::string::npos);
  const auto passed = run_nvmesim("--hv.passthrough=on --number_ios=20 --nvme.clock=2 >/dev/null");
  CHECK(passed.exit_code == 0);
  CHECK(passed.err.find("warning") == std::string::npos);
  const auto cost = run_nvmesim("--hv.passthrough=on --number_ios=20 --nvme.cmd_cost=2us >/dev/null");
  CHECK(cost.exit_code == 0);
  CHECK(cost.err.find("nvmesim: warning: --nvme.cmd_cost: needs hv.passthrough off") != std::string::npos);
}

// The engine's passes are traced on device track 0, where the host threads'
// would be: each I/O at iodepth 1 is one pass that finds work (the SQ
// doorbell's), whose burst holds the command.
TEST_CASE("passthrough: the timeline has the hardware engine's track with its bursts", "[passthrough][traces]") {
  const nvmesim::test::TempDir dir("passthrough", "timeline");
  const std::string file = dir / "pt.json";
  const auto r = run_nvmesim("--hv.passthrough=on --iodepth=1 --number_ios=50 --timeline " + file + " >/dev/null");
  REQUIRE(r.exit_code == 0);
  const std::string text = nvmesim::test::slurp(file);
  CHECK(text.find("\"name\":\"host0\"") != std::string::npos);
  CHECK(text.find("\"name\":\"host1\"") == std::string::npos);  // one engine for every queue
  size_t bursts = 0;
  for (size_t at = text.find("\"name\":\"burst\""); at != std::string::npos;
       at = text.find("\"name\":\"burst\"", at + 1))
    ++bursts;
  CHECK(bursts >= 50);  // the measured I/Os' passes, and bring-up's admin commands
}

// docs/metrics.md's hardware-engine table is the group's own rows.
TEST_CASE("passthrough: docs/metrics.md lists the hardware engine's statistics", "[passthrough][stats][docs]") {
  nvmesim::platform::Config c;
  c.set("hv.passthrough", "on");
  c.set("number_ios", "20");
  c.validate_all();
  nvmesim::platform::System sys(c);
  const nvmesim::platform::RunResults r = sys.run();
  REQUIRE(r.count("ios") == 20);
  nvmesim::test::check_documented(r.stats, "nvme.engine.",
                                  "hardware engine statistics: checked by tests/platform/test_passthrough.cpp",
                                  "engine_stats_table.md");
}

TEST_CASE("passthrough: a trapped MSI-X page (64 KiB without mmap) makes every doorbell write an exit",
          "[passthrough]") {
  const Json j = run_json(kTrapped);
  CHECK(j["doorbells"]["sq"]["mmio"].get<uint64_t>() == 2000);
  CHECK(mmio_writes(j) > 2000);  // and some CQ doorbells
  CHECK(doorbell_exits(j) == mmio_writes(j));
  CHECK(j["exits"]["count"]["mmio_other"].get<uint64_t>() == 0);
  CHECK(j["stats"]["vcpu0"]["exits"]["mmio_doorbell"].get<uint64_t>() == mmio_writes(j));
}

TEST_CASE("passthrough: 4 KiB pages or the table in BAR2 or a mappable BAR keep the doorbells mapped",
          "[passthrough]") {
  for (const char* args : {"--hv.passthrough=on --nvme.msix_table=bar0 --hv.page_size=4k --hv.msix_bar_mmap=off",
                           "--hv.passthrough=on --nvme.msix_table=bar2 --hv.page_size=64k --hv.msix_bar_mmap=off",
                           "--hv.passthrough=on --nvme.msix_table=bar0 --hv.page_size=64k --hv.msix_bar_mmap=on"}) {
    INFO(args);
    const Json j = run_json(args);
    CHECK(j["ios"].get<uint64_t>() == 2000);
    CHECK(mmio_writes(j) >= 2000);
    CHECK(doorbell_exits(j) == 0);
  }
}

TEST_CASE("passthrough: at 4 jobs the trapped page costs throughput the mapped one does not", "[passthrough]") {
  const std::string w = " --numjobs=4 --iodepth=16 --nvme.backend=latency --nvme.backend_latency=20us";
  const Json mapped = run_json("--hv.passthrough=on --nvme.msix_table=bar0 --hv.page_size=64k" + w);
  const Json trapped = run_json(kTrapped + w);
  CHECK(doorbell_exits(mapped) == 0);
  CHECK(doorbell_exits(trapped) == mmio_writes(trapped));
  CHECK(trapped["iops"].get<double>() < mapped["iops"].get<double>());
}

TEST_CASE("passthrough: bad values and combinations are refused in one line", "[passthrough]") {
  check_refused("--hv.page_size=8k", "nvmesim: error: --hv.page_size: '8k' is not one of 4k, 64k");
  check_refused("--hv.passthrough=maybe",
                "nvmesim: error: --hv.passthrough: 'maybe' is not a boolean (on/off, true/false, yes/no, 1/0)");
  check_refused("--nvme.msix_table=bar4", "nvmesim: error: --nvme.msix_table: 'bar4' is not one of bar2, bar0");
  check_refused("--nvme.backend_bandwidth=-1",
                "nvmesim: error: --nvme.backend_bandwidth: -1 is out of range (0..1000000)");
  check_refused("--hv.passthrough=on --device=virtio-blk",
                "nvmesim: error: --hv.passthrough: on needs device nvme (it is virtio-blk: passthrough is "
                "modelled for the NVMe device)");
  check_refused("--hv.passthrough=on --nvme.dbbuf=spec",
                "nvmesim: error: --nvme.dbbuf: spec needs hv.passthrough off (it is on: a real SSD offers no "
                "Doorbell Buffer Config)");
  check_refused("--hv.passthrough=on --hv.notify=ioeventfd",
                "nvmesim: error: --hv.notify: ioeventfd needs hv.passthrough off (it is on: a passed-through "
                "device takes its doorbell writes itself)");
  check_refused("--nvme.msix_table=bar0 --nvme.max_io_queues=300",
                "nvmesim: error: --nvme.max_io_queues: 300 queues' doorbells and MSI-X vectors do not fit BAR0 "
                "before and in the table at 0x2000 with nvme.msix_table=bar0 (allowed 1..255 at nvme.dstrd 0)");
}

TEST_CASE("passthrough: the MSI-X table in BAR0 still delivers every interrupt", "[passthrough]") {
  const Json j = run_json("--nvme.msix_table=bar0 --single-run");  // emulated: one run, not the comparison
  CHECK(j["ios"].get<uint64_t>() == 2000);
  CHECK(j["stats"]["nvme"]["msix_sent"].get<uint64_t>() == j["stats"]["vcpu0"]["interrupts"].get<uint64_t>());
  CHECK(j["stats"]["nvme"]["msix_masked"].get<uint64_t>() == 0);
}

TEST_CASE("scenario: vfio-msix runs end to end and states each prediction's band", "[scenario][passthrough]") {
  const auto r = run_nvmesim("scenario vfio-msix --number_ios=300 --output-format=json");
  REQUIRE(r.exit_code == 0);
  const Json j = Json::parse(r.out);
  CHECK(j["metric"] == "mib_s");
  CHECK(j["calibration"]["parameter"] == "hv.bql_hold");
  const Json& f = j["figures"];
  REQUIRE(f.size() == 4);
  CHECK(f[0]["reported"].get<double>() == 385);
  CHECK(f[1]["reported"].get<double>() == 382);
  CHECK(f[2]["reported"].get<double>() == 1191);
  CHECK(f[3]["reported"].get<double>() == 4273);
  for (size_t i = 1; i < 4; ++i) {
    CHECK(f[i]["in_band"].get<bool>() == (std::abs(f[i]["error"].get<double>()) <= 0.25));
    CHECK_FALSE(f[i]["gap"].get<std::string>().empty());
  }
  const auto text = run_nvmesim("scenario vfio-msix --number_ios=300");
  REQUIRE(text.exit_code == 0);
  CHECK(text.out.find("Launchpad bug 1847948") != std::string::npos);
  CHECK(text.out.find("64 jobs, MSI-X BAR mmapped: ") != std::string::npos);
}

TEST_CASE("passthrough: the text report says how many MMIO doorbell writes trapped", "[passthrough]") {
  const Json j = run_json(kTrapped);
  const auto text = run_nvmesim(kTrapped + " --number_ios=2000");
  REQUIRE(text.exit_code == 0);
  const std::string n = std::to_string(mmio_writes(j));
  CHECK(text.out.find("  passthrough: " + n + " of " + n + " MMIO doorbell writes trapped (VM exits)\n") !=
        std::string::npos);
  CHECK(text.out.find("passthrough (page_size=64k, msix_bar_mmap=off, msix_table=bar0)") != std::string::npos);
  const auto mapped = run_nvmesim("--hv.passthrough=on --number_ios=2000");
  CHECK(mapped.out.find("  passthrough: 0 of ") != std::string::npos);
}
