// The SystemC-free part of platform/ (CMake's nvmesim_config) used alone:
// this executable links nothing else, so a SystemC symbol there would fail
// its link. Parameters come from a registry of the test's own.
#include <catch2/catch.hpp>

#include <sstream>
#include <string>

#include "nvmesim/platform/cli/options.h"
#include "nvmesim/platform/config/params.h"
#include "nvmesim/platform/fio/fio_job.h"
#include "nvmesim/platform/sweep/sweep_grid.h"
#include "nvmesim/platform/sweep/sweep_json.h"

using namespace nvmesim::platform;

namespace {

const ParamRegistry& small_registry() {
  static const ParamRegistry r = [] {
    ParamRegistry reg;
    reg.add({"iodepth", ParamKind::Integer, "32", "I/Os", 1, 4095, {}, "I/Os in flight", false, false, ""});
    reg.add({"bs", ParamKind::Size, "4k", "bytes", 512, 1 << 20, {}, "block size", false, false, ""});
    reg.add({"rw", ParamKind::Choice, "randread", "", 0, 0, {"read", "randread"}, "pattern", false, false, ""});
    reg.add({"hv.exit_mmio", ParamKind::Time, "2us", "time", 0, 1e6, {}, "exit cost", false, false, ""});
    reg.add({"number_ios", ParamKind::Integer, "1000", "I/Os", 0, 1e10, {}, "I/Os", true, false, ""});
    reg.add({"numjobs", ParamKind::Integer, "1", "jobs", 1, 64, {}, "jobs", false, false, ""});
    // What the fio options map onto and the cross-field checks read.
    reg.add({"runtime", ParamKind::Time, "0s", "time", 0, 3.6e12, {}, "interval", false, false, ""});
    reg.add({"size", ParamKind::Size, "1g", "bytes", 4096, 1099511627776.0, {}, "region", false, false, ""});
    reg.add({"rwmixread", ParamKind::Integer, "50", "%", 0, 100, {}, "reads", false, false, ""});
    reg.add({"seed", ParamKind::Integer, "1", "", 0, 1e18, {}, "seed", false, false, ""});
    for (const char* n : {"iodepth_batch_submit", "iodepth_batch_complete_min"})
      reg.add({n, ParamKind::Integer, "1", "I/Os", 1, 4095, {}, "batch", false, false, ""});
    reg.add({"iodepth_batch_complete_max", ParamKind::Integer, "0", "I/Os", 0, 4095, {}, "batch", false, false, ""});
    reg.add({"verify", ParamKind::Choice, "off", "", 0, 0, {"off", "pattern"}, "verify", false, false, ""});
    reg.add({"nvme.capacity", ParamKind::Size, "1g", "bytes", 4096, 1099511627776.0, {}, "namespace", false, false, ""});
    reg.add({"nvme.lba_bytes", ParamKind::Integer, "512", "bytes", 512, 4096, {}, "LBA", false, false, ""});
    reg.add({"nvme.mqes", ParamKind::Integer, "1023", "entries", 1, 65535, {}, "MQES", false, false, ""});
    reg.add({"guest.io_queue_entries", ParamKind::Integer, "1024", "entries", 2, 65536, {}, "entries", false, false, ""});
    return reg;
  }();
  return r;
}

}  // namespace

TEST_CASE("config library: values, units, INI files and refusals without a simulator", "[config]") {
  Config c(small_registry());
  c.set("iodepth", "16");
  c.set("bs", "8k");
  c.set("hv.exit_mmio", "1.5us");
  CHECK(c.integer("iodepth") == 16);
  CHECK(c.size_bytes("bs") == 8192);
  CHECK(c.time_ns("hv.exit_mmio") == 1500.0);
  std::istringstream ini("rw = read\n[hv]\nexit_mmio = 700ns\n");
  c.load_ini(ini, "t.ini");
  CHECK(c.choice("rw") == "read");
  CHECK(c.time_ns("hv.exit_mmio") == 700.0);
  CHECK_THROWS_WITH(c.set("rw", "write"), "--rw: 'write' is not one of read, randread");
  CHECK_THROWS_WITH(c.set("iodepth", "0"), "--iodepth: 0 is out of range (1..4095)");
}

TEST_CASE("config library: fio job files and sweep grids parse against any registry", "[config]") {
  std::istringstream job("[global]\nbs=8k ; comment\nioengine=libaio\n[a]\niodepth=4\nnumjobs=2\n");
  const FioJobFile f = parse_fio_job_file(job, "t.fio");
  const FioJobs j = resolve_fio_jobs(f, Config(small_registry()), {}, false);
  REQUIRE(j.jobs.size() == 1);
  CHECK(j.jobs[0].config.integer("iodepth") == 4);
  CHECK(j.jobs[0].numjobs == 2);
  CHECK(j.jobs[0].config.size_bytes("bs") == 8192);

  const sweep::Axis a = sweep::parse_grid_arg("iodepth=1,4,16", small_registry());
  CHECK(a.values == std::vector<std::string>{"1", "4", "16"});
  CHECK_THROWS_WITH(sweep::parse_grid_arg("nvme.foo=1", small_registry()),
                    "--grid: unknown parameter 'nvme.foo' (see --list-params)");
  const sweep::Json json = sweep::parse_json("{\"iops\": 1.50, \"x\": [1, 2]}");
  CHECK(sweep::to_json(json) == "{\"iops\":1.50,\"x\":[1,2]}");
}

TEST_CASE("config library: the one option style refuses abbreviations and names the option", "[config]") {
  namespace po = cli::po;
  po::options_description desc;
  desc.add_options()("grid", po::value<std::string>(), "")("help,h", "");
  const char* ok[] = {"cmd", "--grid=iodepth=1", "-h"};
  const auto opts = cli::parse_options(3, ok, desc);
  REQUIRE(opts.size() == 2);
  CHECK(cli::value_of(opts[0]) == "iodepth=1");
  const char* abbreviated[] = {"cmd", "--gri=x"};
  CHECK_THROWS_WITH(cli::parse_options(2, abbreviated, desc), "unknown option '--gri' (see --help)");
  const char* missing[] = {"cmd", "--grid"};
  CHECK_THROWS_WITH(cli::parse_options(2, missing, desc), "--grid: missing value");
}
