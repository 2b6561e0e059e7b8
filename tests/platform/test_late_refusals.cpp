// Refusals that must come before any work: a sweep's grid values and --plot
// columns are checked before the first point runs, and `nvmesim eventidx`
// takes whole option names only.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <string>
#include <vector>

#include "tests/platform/run_binary.h"
#include "tests/platform/test_sweep_support.h"

using nvmesim::test::check_refused;
using nvmesim::test::run_nvmesim;
using nvmesim::test::ScratchDir;

namespace {

bool exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

}  // namespace

TEST_CASE("late refusals: a sweep checks every point and plot before running any", "[sweep][late]") {
  ScratchDir d;
  struct Case {
    std::string args, error;  // error after "nvmesim sweep: error: "
  };
  const std::vector<Case> table = {
      {"--grid iodepth=1,5000", "--grid: point iodepth=5000: --iodepth: 5000 is out of range (1..4095)"},
      {"--grid bs=4k,3000", "--grid: point bs=3000: --bs: 3000 is not a multiple of nvme.lba_bytes (512)"},
      {"--grid iodepth=1,2 --grid hv.fault=none,eventfd_spin",
       "--grid: point iodepth=1 hv.fault=eventfd_spin: --hv.fault: eventfd_spin needs hv.notify ioeventfd (it "
       "is deferred: no eventfd exists to fault)"},
      {"--grid iodepth=1,2 --plot y=iopss,x=iodepth",
       "--plot: y=iopss is not a column of the results (a grid parameter, seed, or a run's JSON key such as "
       "iops, per_io.exits, lat_ns.mean, config.bs)"},
      {"--grid iodepth=1,2 --plot y=iops,x=depth",
       "--plot: x=depth is not a column of the results (a grid parameter, seed, or a run's JSON key such as "
       "iops, per_io.exits, lat_ns.mean, config.bs)"},
      {"--grid iodepth=1,2 --plot y=utilization.vcpu.0.bussy,x=iodepth",
       "--plot: y=utilization.vcpu.0.bussy is not a column of the results (a grid parameter, seed, or a run's "
       "JSON key such as iops, per_io.exits, lat_ns.mean, config.bs)"},
  };
  for (const Case& c : table) {
    const std::string out = d / "out";
    // Points that take seconds each: a refusal after running them shows.
    check_refused("sweep " + c.args + " --number_ios=2000000 --jobs 1 --out " + out,
                  "nvmesim sweep: error: " + c.error);
    CHECK(!exists(out + "/results.csv"));
    CHECK(!exists(out + "/points/0.rc"));
  }
  // Known columns, indexes of any vCPU included, pass the check and plot.
  const auto ok = run_nvmesim("sweep --grid numjobs=1,2 --number_ios=300 --jobs 2 --plot "
                              "y=utilization.vcpu.1.busy,x=numjobs --plot y=per_io.msix_messages,x=numjobs --out " +
                              (d / "ok"));
  INFO(ok.err);
  CHECK(ok.exit_code == 0);
}

TEST_CASE("late refusals: nvmesim eventidx takes whole option names only", "[eventidx][late]") {
  struct Case {
    std::string args, error;
  };
  const std::vector<Case> table = {
      {"--qs 8 --old 1 --new 2 --eventidx 1", "unknown option \'--qs\' (see --help)"},
      {"--qsize 8 --ol 1 --new 2 --eventidx 1", "unknown option \'--ol\' (see --help)"},
      {"--qsize 8 --old 1 --new 2 --event 1", "unknown option \'--event\' (see --help)"},
      {"--qsize 8 --exh", "unknown option \'--exh\' (see --help)"},
  };
  for (const Case& c : table) check_refused("eventidx " + c.args, "nvmesim eventidx: error: " + c.error);
  const auto whole = run_nvmesim("eventidx --qsize 8 --old 1 --new 2 --eventidx 1");
  CHECK(whole.exit_code == 0);
}
