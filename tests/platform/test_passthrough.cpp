// hv.passthrough (a real SSD behind VFIO): doorbell writes reach the device
// without an exit unless their host page is trapped (hv.page_size,
// hv.msix_bar_mmap, nvme.msix_table); then each one is an MMIO doorbell exit.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <cmath>
#include <string>

#include "run_binary.h"

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
  // The device's own engines instead of QEMU's main loop.
  const Json& stats = j["stats"];
  CHECK_FALSE(stats.contains("mainloop"));
  CHECK(stats.contains("nvme_engine0"));
  CHECK(stats.contains("nvme_engine1"));
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
