// The stall watchdog counts every kind of work under way: an interrupt a
// coalescing timer holds, and the message it (or any completion) sent that
// is still on its way to the vCPU. Generated over coalescing thresholds and
// times, queue depths, jobs, notification modes, posted interrupts,
// devices, a thread spinning on a stuck eventfd (its next pass fetches the
// SQ's commands and posts its completions), and watchdog periods down to
// 1 us (a tick then often falls between a message leaving the device and
// reaching the vCPU, or between two spin passes): every run
// completes all its I/Os, outcome ok, exit 0 with --fail-on-stall. A real
// stall is still found.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "run_binary.h"

using nvmesim::test::json_number;
using nvmesim::test::run_nvmesim;

TEST_CASE("watchdog in flight: held and travelling interrupts are work under way, never a stall",
          "[watchdog][binary]") {
  struct Variant {
    std::string args;
    int ios;  // I/Os per job
    int jobs;
  };
  std::vector<Variant> variants;
  const std::vector<std::string> timeouts = {"1us", "3us", "7us"};
  // NVMe with interrupt coalescing: thresholds that are never reached (the
  // timer sends) and that are (the count sends), times of 1..3 x 100 us.
  for (const std::string thr : {"255", "3"})
    for (const std::string time : {"100us", "300us"})
      for (const std::string iodepth : {"1", "4"})
        for (const std::string& timeout : timeouts)
          variants.push_back({"--guest.irq_coalescing_thr=" + thr + " --guest.irq_coalescing_time=" + time +
                                  " --iodepth=" + iodepth + " --sim.stall_timeout=" + timeout,
                              120, 1});
  // Other paths an interrupt travels, with a 1 us watchdog.
  for (const std::string other :
       {"--hv.posted_interrupts=on --guest.irq_coalescing_thr=255 --guest.irq_coalescing_time=100us",
        "--numjobs=2 --guest.irq_coalescing_thr=255 --guest.irq_coalescing_time=100us",
        "--hv.notify=ioeventfd --guest.irq_coalescing_thr=7 --guest.irq_coalescing_time=200us --iodepth=8",
        "--hv.notify=sync", "--iodepth=1", "--device=virtio-blk --iodepth=1", "--device=virtio-blk --iodepth=4",
        "--nvme.dbbuf=off --iodepth=2",
        // A thread spinning on a stuck fd (eventfd_spin) fetches and posts at its next pass.
        "--hv.notify=ioeventfd --nvme.dbbuf=spec --hv.fault=eventfd_spin --iodepth=1",
        "--hv.notify=ioeventfd --nvme.dbbuf=spec --hv.fault=eventfd_spin --iodepth=8",
        "--hv.notify=ioeventfd --nvme.dbbuf=vendor --hv.fault=eventfd_spin --iodepth=32 --numjobs=2"})
    variants.push_back({other + " --sim.stall_timeout=1us", 300,
                        std::string(other).find("numjobs=2") != std::string::npos ? 2 : 1});
  for (const Variant& v : variants) {
    const std::string args = "--single-run --fail-on-stall --output-format=json --number_ios=" +
                             std::to_string(v.ios) + " " + v.args;
    INFO("nvmesim " << args);
    const auto r = run_nvmesim(args);
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("\"outcome\": \"ok\"") != std::string::npos);
    CHECK(json_number(r.out, "ios") == v.ios * v.jobs);
  }
  CHECK(variants.size() == 35);
}

TEST_CASE("watchdog in flight: a real stall is still reported", "[watchdog][binary]") {
  // Ming Lin's uncleared ioeventfd: later wake-ups are lost, nothing is under way.
  const auto r = run_nvmesim("--single-run --fail-on-stall --nvme.dbbuf=spec --hv.notify=ioeventfd "
                             "--hv.fault=eventfd_not_cleared --number_ios=2000 --sim.stall_timeout=1us --output-format=json");
  CHECK(r.exit_code == 3);
  CHECK(r.out.find("\"outcome\": \"stalled\"") != std::string::npos);
}
