// fio job files in (platform/fio/fio_job.h): parsing, fio's semantics, the
// published job files (QEMU nvme on a ram disk, on a real NVMe), ignored / unknown options, and the binary's exit codes.
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "nvmesim/platform/cli/cli.h"
#include "nvmesim/platform/fio/fio_job.h"
#include "nvmesim/platform/system/system.h"
#include "run_binary.h"
#include "temp_file.h"

using namespace nvmesim;
using namespace nvmesim::platform;

namespace {

const std::string kRamdisk = std::string(NVMESIM_SOURCE_DIR) + "/workloads/seed-ramdisk.fio";
const std::string kRealNvme = std::string(NVMESIM_SOURCE_DIR) + "/workloads/seed-real-nvme.fio";

using TempJob = nvmesim::test::TempFile;

FioJobs resolve(const std::string& text, bool strict = false,
                std::vector<std::pair<std::string, std::string>> cli = {}) {
  std::istringstream in(text);
  return resolve_fio_jobs(parse_fio_job_file(in, "t.fio"), Config(), cli, strict);
}

std::string error_of(const std::string& text, bool strict = false) {
  try {
    resolve(text, strict);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

CliResult parse(std::vector<std::string> args) {
  args.insert(args.begin(), "nvmesim");
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  return parse_command_line(int(args.size()), argv.data());
}

using Options = std::vector<std::pair<std::string, std::string>>;

}  // namespace

TEST_CASE("fio job: the published ram-disk job file parses to one job of 2, rw=read, 120 s", "[fio]") {
  const FioJobFile f = load_fio_job_file(kRamdisk);
  REQUIRE(f.jobs.size() == 1);
  CHECK(f.jobs[0].name == "job1");
  // [global] as written: bare time_based, norandommap, group_reporting.
  std::vector<std::string> global;
  for (const FioOption& o : f.global) global.push_back(o.name + (o.has_value ? "=" + o.value : ""));
  CHECK(global == std::vector<std::string>{"bs=4k", "ioengine=libaio", "iodepth=64", "direct=1",
                                           "runtime=120", "time_based", "rw=randread",
                                           "norandommap", "group_reporting", "gtod_reduce=1",
                                           "numjobs=2"});
  // The commented-out filenames are comments.
  CHECK(f.jobs[0].options.size() == 2);

  const FioJobs jobs = resolve_fio_jobs(f, Config(), {}, false);
  REQUIRE(jobs.jobs.size() == 1);
  const FioJob& j = jobs.jobs[0];
  CHECK(j.name == "job1");
  CHECK(j.numjobs == 2);
  CHECK(j.options == Options{{"filename", "/dev/nvme0n1"}, {"rw", "read"}});
  CHECK(j.config.choice("rw") == "read");  // the section overrides [global]'s randread
  CHECK(j.config.size_bytes("bs") == 4096);
  CHECK(j.config.integer("iodepth") == 64);
  CHECK(j.config.time_ns("runtime") == 120e9);  // fio's bare runtime is seconds
  CHECK(j.config.integer("number_ios") == 0);   // time_based: the runtime ends the job
  CHECK(jobs.config.integer("numjobs") == 2);
  CHECK_FALSE(jobs.per_vcpu_workloads);
  CHECK(jobs.vcpu_job == std::vector<unsigned>{0, 0});
  CHECK(jobs.group_reporting);
  CHECK(jobs.warnings.empty());
  CHECK(jobs.global_options == Options{{"bs", "4k"}, {"ioengine", "libaio"}, {"iodepth", "64"},
                                       {"direct", "1"}, {"runtime", "120"}, {"rw", "randread"},
                                       {"gtod_reduce", "1"}, {"numjobs", "2"}});
  CHECK(fio_notices(jobs) ==
        std::vector<std::string>{"nvmesim: ignored fio options (no effect on the simulation): "
                                 "direct, norandommap, group_reporting, gtod_reduce, "
                                 "filename"});
}

TEST_CASE("fio job: the published real-NVMe job file parses to one job of 8, rw=read, 60 s", "[fio]") {
  const FioJobs jobs = resolve_fio_jobs(load_fio_job_file(kRealNvme), Config(), {}, false);
  REQUIRE(jobs.jobs.size() == 1);
  const FioJob& j = jobs.jobs[0];
  CHECK(j.name == "job1");
  CHECK(j.numjobs == 8);
  CHECK(j.options == Options{{"filename", "/dev/nvme0n1"}, {"rw", "read"}});
  CHECK(j.config.choice("rw") == "read");
  CHECK(j.config.size_bytes("bs") == 4096);
  CHECK(j.config.integer("iodepth") == 64);
  CHECK(j.config.time_ns("runtime") == 60e9);
  CHECK(j.config.integer("number_ios") == 0);
  CHECK(jobs.config.integer("numjobs") == 8);
  CHECK(jobs.vcpu_job == std::vector<unsigned>(8, 0));
  CHECK(jobs.ignored == std::vector<std::string>{"direct", "norandommap",
                                                 "group_reporting", "gtod_reduce", "filename"});
}

TEST_CASE("fio job: command-line options override the file", "[fio][cli]") {
  const CliResult r = parse({"--job", kRamdisk, "--runtime=2ms", "--iodepth", "8"});
  REQUIRE(r.action == CliResult::Run);
  CHECK(r.config.time_ns("runtime") == 2e6);
  CHECK(r.config.integer("iodepth") == 8);
  CHECK(r.config.integer("numjobs") == 2);
  CHECK(r.config.choice("rw") == "read");
  CHECK(r.config.integer("number_ios") == 0);
  CHECK(r.options.default_experiment);  // the file leaves nvme.dbbuf unset: both runs
  REQUIRE(r.options.fio);
  CHECK(r.options.notices.size() == 1);
}

TEST_CASE("fio job: value syntax: sizes, times, booleans, aliases", "[fio]") {
  CHECK(fio_time_to_param("30") == "30s");
  CHECK(fio_time_to_param("500ms") == "500ms");
  CHECK(fio_time_to_param("2m") == "120s");
  CHECK(fio_time_to_param("1h") == "3600s");
  CHECK(fio_time_to_param("250usec") == "250us");
  CHECK(fio_time_to_param("10x").empty());
  CHECK(fio_time_to_param("s").empty());

  const FioJobs a = resolve(
      "[a]\nblocksize=4KiB\nreadwrite=randrw\nrwmixwrite=30\nrandseed=7\niodepth_batch=4\n"
      "size=1m\ntimeout=2\n");
  const Config& c = a.jobs[0].config;
  CHECK(c.size_bytes("bs") == 4096);
  CHECK(c.choice("rw") == "randrw");
  CHECK(c.integer("rwmixread") == 70);
  CHECK(c.integer("seed") == 7);
  CHECK(c.integer("iodepth_batch_submit") == 4);
  CHECK(c.time_ns("runtime") == 2e9);
  // Not time_based: the job does `size` bytes, as fio: 1 MiB / 4 KiB.
  CHECK(c.integer("number_ios") == 256);

  CHECK(resolve("[a]\nbs=4K\nsize=64k\ntime_based=0\nruntime=1\n").jobs[0].config.integer(
            "number_ios") == 16);
  CHECK(resolve("[a]\ntime_based=1\nruntime=1\n").jobs[0].config.integer("number_ios") == 0);
  CHECK(resolve("[a]\ntime_based\nruntime=1\nnumber_ios=10\n").jobs[0].config.integer(
            "number_ios") == 10);
  CHECK(resolve("[a]\nverify=pattern\n").jobs[0].config.choice("verify") == "pattern");
}

TEST_CASE("fio job: values nvmesim cannot simulate are one-line errors", "[fio]") {
  CHECK(error_of("[a]\nrw=rw\n") ==
        "--job t.fio line 2: rw=rw: not supported (nvmesim runs read, write, randread, randwrite, randrw)");
  CHECK(error_of("[a]\nbs=4k:8k\n") ==
        "--job t.fio line 2: bs=4k:8k: not a block size (bs, bs=read,write or bs=min-max)");
  CHECK(error_of("[a]\nverify=sha512\n") ==
        "--job t.fio line 2: verify=sha512: not supported (nvmesim supports verify=crc32c, crc32c-intel, crc32, "
        "md5, sha256, meta, pattern or 0)");
  CHECK(error_of("[a]\nruntime=5y\n") ==
        "--job t.fio line 2: runtime=5y: not a time (seconds, or with us, ms, s, m, h, d as fio)");
  CHECK(error_of("[a]\niodepth=0\n") == "--job t.fio line 2: iodepth: 0 is out of range (1..4095)");
  CHECK(error_of("bs=4k\n[a]\n") == "--job t.fio line 1: option 'bs=4k' before the first [section]");
  CHECK(error_of("[global]\nbs=4k\n") == "--job t.fio: no job section (only [global])");
  CHECK(error_of("[global]\nnumjobs=40\n[a]\n[b]\n") ==
        "--job t.fio: its job sections add up to 80 jobs: --numjobs: 80 is out of range (1..64)");
}

TEST_CASE("fio job: an option that is not modelled is refused by file and line, --strict or not", "[fio]") {
  const std::string text = "[global]\ndirect=1\nthinktime_iotime=1s\n[a]\n";
  const std::string refused =
      "--job t.fio line 3: thinktime_iotime=1s: not modelled (nvmesim runs only fio's default, thinktime_iotime=0)";
  CHECK(error_of(text) == refused);
  CHECK(error_of(text, true) == refused);
  CHECK(error_of("[a]\nseed=3\n") ==
        "--job t.fio line 2: fio option 'seed' is not modelled (fio's name is randseed) (nvmesim refuses what it "
        "cannot run as fio would)");
  CHECK(error_of("[a]\nioengine=rbd\n") ==
        "--job t.fio line 2: ioengine=rbd: not modelled (nvmesim's job runs libaio, io_uring, io_uring_cmd, posixaio, "
        "and the "
        "synchronous psync, sync, vsync, pvsync, pvsync2 at depth 1)");
  // fio's default value of an unmodelled option changes nothing: accepted.
  CHECK(resolve("[a]\nloops=1\nstartdelay=0\nramp_time=0s\n").jobs.size() == 1);
}

TEST_CASE("fio job: through the binary: an unmodelled option exits 2 with one line naming file and line",
          "[fio][binary]") {
  TempJob job("[global]\ndirect=1\nfoo=1\nnumber_ios=50\niodepth=4\n[a]\nfilename=/dev/x\n[b]\n");
  for (const char* strict : {" --strict", ""}) {
    const auto r = test::run_nvmesim("--job " + job.path + strict);
    CHECK(r.exit_code == 2);
    CHECK(r.err == "nvmesim: error: --job " + job.path +
                       " line 3: fio option 'foo' is not modelled (nvmesim refuses what it cannot run as fio would)\n");
    CHECK(r.out.empty());
  }
  TempJob good("[global]\ndirect=1\nnumber_ios=50\niodepth=4\nioengine=libaio\n[a]\nfilename=/dev/x\n[b]\n");
  const auto lax = test::run_nvmesim("--job " + good.path + " --output-format=json");
  CHECK(lax.exit_code == 0);
  CHECK(lax.err == "nvmesim: ignored fio options (no effect on the simulation): direct, filename\n");
  // Two identical sections: one workload, numjobs 2, 50 I/Os each.
  CHECK(test::json_number(lax.out, "ios") == 100);

  const auto missing = test::run_nvmesim("--job /nonexistent/x.fio");
  CHECK(missing.exit_code == 2);
  CHECK(missing.err == "nvmesim: error: --job /nonexistent/x.fio: cannot open (No such file or directory)\n");
}

TEST_CASE("fio job: sections with different workloads get a vCPU each", "[fio][e2e]") {
  const FioJobs jobs = resolve(
      "[global]\nbs=4k\nnumber_ios=300\n[reader]\nrw=randread\niodepth=8\n"
      "[writer]\nrw=write\nbs=8k\niodepth=2\nnumjobs=2\n");
  REQUIRE(jobs.per_vcpu_workloads);
  CHECK(jobs.vcpu_job == std::vector<unsigned>{0, 1, 1});
  CHECK(jobs.config.integer("numjobs") == 3);
  std::vector<const Config*> per_vcpu;
  for (unsigned j : jobs.vcpu_job) per_vcpu.push_back(&jobs.jobs[j].config);
  System system(jobs.config, per_vcpu);
  REQUIRE(system.vcpus().size() == 3);
  const RunResults r = system.run();
  REQUIRE(r.bringup_ok);
  REQUIRE(r.vcpus.size() == 3);
  CHECK(r.stats.at("vcpu0.read_ios") == 300);
  CHECK(r.stats.at("vcpu0.write_ios") == 0);
  CHECK(r.stats.at("vcpu0.read_bytes") == 300u * 4096);
  for (const char* v : {"vcpu1.", "vcpu2."}) {
    CHECK(r.stats.at(v + std::string("read_ios")) == 0);
    CHECK(r.stats.at(v + std::string("write_ios")) == 300);
    CHECK(r.stats.at(v + std::string("write_bytes")) == 300u * 8192);
  }
  CHECK(r.count("read_ios") == 300);
  CHECK(r.count("write_ios") == 600);
  CHECK(r.read.lat.hist.count() == 300);
  CHECK(r.write.lat.hist.count() == 600);
  CHECK(r.lat.count() == 900);
}

TEST_CASE("fio job: inline comments end an option line, as fio's strip_blank_end", "[fio]") {
  const FioJobs j = resolve("[global]\nbs=8k # larger blocks\nioengine=libaio\n[a]  ; the first job\nnumjobs=4 ; four threads\n"
                            "iodepth=16#sixteen\nrw=read;sequential\n");
  REQUIRE(j.jobs.size() == 1);
  CHECK(j.jobs[0].name == "a");
  CHECK(j.jobs[0].numjobs == 4);
  CHECK(j.jobs[0].config.integer("iodepth") == 16);
  CHECK(j.jobs[0].config.size_bytes("bs") == 8192);
  CHECK(j.jobs[0].config.choice("rw") == "read");
  // A line that is all comment after trimming is skipped.
  CHECK(resolve("[a]\n   # nothing\nioengine=io_uring\niodepth=2\n").jobs[0].config.integer("iodepth") == 2);
}

TEST_CASE("fio job: include reads an options file inside a section, relative to the job file", "[fio]") {
  char dir_template[] = "/tmp/nvmesim_include_XXXXXX";
  REQUIRE(::mkdtemp(dir_template) != nullptr);
  const std::string dir = dir_template;
  std::ofstream(dir + "/depth.fio") << "iodepth=8 ; from the include\n";
  std::ofstream(dir + "/bogus.fio") << "iodepth=8\nbogus_option=1\n";
  std::ofstream(dir + "/job.fio") << "[global]\nrw=randread\nioengine=libaio\n[a]\ninclude depth.fio\nnumjobs=2\n";
  std::ofstream(dir + "/job2.fio") << "[a]\ninclude bogus.fio\n";
  std::ofstream(dir + "/section.fio") << "[b]\n";
  std::ofstream(dir + "/bad.fio") << "[a]\ninclude section.fio\n";
  std::ofstream(dir + "/loop.fio") << "[a]\ninclude loop_opts.fio\n";
  std::ofstream(dir + "/loop_opts.fio") << "include loop_opts.fio\n";
  std::ofstream(dir + "/missing.fio") << "[a]\ninclude nowhere.fio\n";

  const FioJobFile f = load_fio_job_file(dir + "/job.fio");
  const FioJobs j = resolve_fio_jobs(f, Config(), {}, false);
  REQUIRE(j.jobs.size() == 1);
  CHECK(j.jobs[0].config.integer("iodepth") == 8);
  CHECK(j.jobs[0].numjobs == 2);
  // A refusal of an included option names the included file and its line.
  try {
    resolve_fio_jobs(load_fio_job_file(dir + "/job2.fio"), Config(), {}, false);
    FAIL("no refusal");
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()).rfind("--job " + dir + "/bogus.fio line 2: fio option 'bogus_option' is not modelled", 0) == 0);
  }

  auto error_loading = [](const std::string& path) {
    try {
      load_fio_job_file(path);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  CHECK(error_loading(dir + "/bad.fio") ==
        "--job " + dir + "/section.fio line 1: no new sections in an included file (fio's rule)");
  CHECK(error_loading(dir + "/loop.fio").find("nested more than 16 deep (an include cycle?)") != std::string::npos);
  CHECK(error_loading(dir + "/missing.fio").rfind("--job " + dir + "/missing.fio line 2: include " + dir + "/nowhere.fio", 0) ==
        0);
  for (const char* n : {"depth.fio", "bogus.fio", "job2.fio", "job.fio", "section.fio", "bad.fio", "loop.fio", "loop_opts.fio", "missing.fio"})
    std::remove((dir + "/" + n).c_str());
  ::rmdir(dir.c_str());
}

TEST_CASE("fio job: a job's size just works: the namespace grows to it unless nvme.capacity is given", "[fio][e2e]") {
  // fio's own example jobs use size=10g and more; nvmesim's default namespace is 1 GiB.
  const TempJob big("[global]\nrw=randread\nbs=4k\n[a]\nsize=10g\nnumber_ios=500\n[b]\nsize=3g\nnumber_ios=500\n");
  const auto r = nvmesim::test::run_nvmesim("--job " + big.path + " --output-format=json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("\"nvme.capacity\": \"10g\"") != std::string::npos);
  // The RAM backend maps it sparsely: a 64 GiB namespace with data costs what is written.
  const auto ram = nvmesim::test::run_nvmesim("--size=64g --nvme.backend=ram --verify=pattern --rw=randrw "
                                              "--number_ios=5000 --host-stats --single-run");
  INFO(ram.err);
  REQUIRE(ram.exit_code == 0);
  const size_t at = ram.out.find(" MiB peak RSS");
  REQUIRE(at != std::string::npos);
  const size_t from = ram.out.rfind(' ', at - 1);
  CHECK(std::stod(ram.out.substr(from + 1, at - from - 1)) < 200);
  // Given explicitly, the namespace is the user's and the size must fit it.
  nvmesim::test::check_refused("--nvme.capacity=2g --size=3g", "nvmesim: error: --size: 3g is larger than nvme.capacity (2g)");
}
