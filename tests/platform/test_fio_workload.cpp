// fio 3.33's defaults and workload options in nvmesim's job (issue: fio job
// files run as fio runs them): the defaults of a silent job file, the
// synchronous engines' depth, iodepth_batch / iodepth_low, the command line's
// spellings, and the generated stream checked against independent
// statements of fio's rules: bssplit's weights and bsrange's sizes
// (io_u.c get_next_buflen), zipf's and pareto's hit shares (lib/zipf.c),
// rate_iops / rate (backend.c usec_for_io, io_u.c rate_ddir) and thinktime
// (backend.c handle_thinktime).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "nvmesim/models/guest/workload.h"
#include "nvmesim/platform/cli/cli.h"
#include "nvmesim/platform/fio/fio_job.h"
#include "nvmesim/platform/system/system.h"
#include "fio_text_job.h"
#include "run_binary.h"
#include "temp_file.h"

using namespace nvmesim;
using namespace nvmesim::platform;

namespace {

FioJobs resolve(const std::string& text, std::vector<std::pair<std::string, std::string>> cli = {}) {
  return test::resolve_fio_text(text, std::move(cli));
}
std::string error_of(const std::string& text) { return test::fio_text_error(text); }

CliResult parse(std::vector<std::string> args) {
  args.insert(args.begin(), "nvmesim");
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  return parse_command_line(int(args.size()), argv.data());
}

models::JobSpec spec(models::RwMode rw, uint64_t size = 1ull << 30) {
  models::JobSpec s;
  s.rw = rw;
  s.bs = 4096;
  s.size = size;
  s.rwmixread = 50;
  s.seed = 7;
  s.distribution_text = "random";
  return s;
}

}  // namespace

TEST_CASE("fio defaults: a job file with no options runs fio's: QD1 sequential 4k reads (psync)", "[fio][defaults]") {
  const FioJobs jobs = resolve("[a]\n");
  const Config& c = jobs.jobs[0].config;
  CHECK(c.choice("rw") == "read");
  CHECK(c.size_bytes("bs") == 4096);
  CHECK(c.integer("iodepth") == 1);
  CHECK(c.integer("iodepth_batch_submit") == 1);
  CHECK(c.integer("iodepth_batch_complete_min") == 1);
  CHECK(c.integer("numjobs") == 1);
  CHECK(c.integer("rwmixread") == 50);
  CHECK(c.integer("seed") == 0x89);  // fio's randseed default
  CHECK(c.integer("number_ios") == (1 << 30) / 4096);  // size bytes of I/O
  CHECK(jobs.jobs[0].engine == "psync");
  // The stream: block after block from offset 0.
  models::Workload w(spec(models::RwMode::Read));
  for (uint64_t k = 0; k < 5; ++k) {
    const models::NextIo io = w.next();
    CHECK_FALSE(io.write);
    CHECK(io.offset == k * 4096);
    CHECK(io.bytes == 4096);
  }
  // The bare command line keeps nvmesim's experiment.
  const CliResult bare = parse({});
  REQUIRE(bare.action == CliResult::Run);
  CHECK(bare.config.choice("rw") == "randread");
  CHECK(bare.config.integer("iodepth") == 32);
  CHECK(bare.options.default_experiment);
}

TEST_CASE("fio defaults: synchronous engines run at depth 1, asynchronous ones at iodepth", "[fio][defaults]") {
  for (const char* e : {"psync", "sync", "vsync", "pvsync", "pvsync2"}) {
    INFO(e);
    CHECK(resolve(std::string("[a]\niodepth=32\nioengine=") + e + "\n").jobs[0].config.integer("iodepth") == 1);
    // As fio, whatever the command line says.
    CHECK(resolve(std::string("[a]\nioengine=") + e + "\n", {{"iodepth", "16"}}).jobs[0].config.integer("iodepth") == 1);
  }
  for (const char* e : {"libaio", "io_uring", "posixaio"}) {
    INFO(e);
    CHECK(resolve(std::string("[a]\niodepth=32\nioengine=") + e + "\n").jobs[0].config.integer("iodepth") == 32);
  }
  CHECK(resolve("[a]\niodepth=32\n").jobs[0].config.integer("iodepth") == 1);  // fio's default engine: psync
  // --ioengine on the command line as in a file.
  CHECK(resolve("[a]\niodepth=32\n", {{"ioengine", "libaio"}}).jobs[0].config.integer("iodepth") == 32);
}

TEST_CASE("fio defaults: iodepth_batch=0 is iodepth, iodepth_batch_complete_min=0 reaps one, iodepth_low", "[fio][defaults]") {
  const FioJobs j = resolve("[a]\nioengine=libaio\niodepth=8\niodepth_batch=0\niodepth_batch_complete=0\niodepth_low=2\n");
  const Config& c = j.jobs[0].config;
  CHECK(c.integer("iodepth_batch_submit") == 8);
  CHECK(c.integer("iodepth_batch_complete_min") == 1);
  CHECK(c.integer("iodepth_low") == 2);
}

TEST_CASE("fio iodepth_low: a full queue of 8 is reaped down to 2, then refilled (backend.c wait_for_completions)",
          "[fio][e2e]") {
  const FioJobs j = resolve("[a]\nioengine=libaio\nrw=randread\niodepth=8\niodepth_low=2\nnumber_ios=6002\n");
  Config c = j.jobs[0].config;
  c.set("nvme.dbbuf", "spec");
  System system(c);
  const RunResults r = system.run();
  REQUIRE(r.bringup_ok);
  // Each cycle submits one at a time from depth 2 to 8: depths 3..8 after
  // each submission, so of every 6 I/Os one lands in fio's "2" bucket (2-3),
  // four in "4" (4-7) and one in "8" (8-15); without iodepth_low every I/O
  // after the first fill finds 8.
  const auto& d = r.depths.depth;
  const double n = double(d[0] + d[1] + d[2] + d[3] + d[4] + d[5] + d[6]);
  CHECK(n == 6002);
  CHECK(d[3] / n == Approx(1.0 / 6).margin(0.01));
  CHECK(d[2] / n == Approx(4.0 / 6).margin(0.01));
  CHECK(d[1] / n == Approx(1.0 / 6).margin(0.01));
}

TEST_CASE("fio bssplit: block-size shares follow the weights, unweighted entries share the rest", "[fio][workload]") {
  models::JobSpec s = spec(models::RwMode::RandRead);
  s.bssplit_text = "4k/10:64k/50:32k/40";
  models::Workload w(s);
  std::map<uint32_t, double> count;
  const int N = 200000;
  for (int i = 0; i < N; ++i) {
    const models::NextIo io = w.next();
    ++count[io.bytes];
    REQUIRE(io.offset % 4096 == 0);  // aligned to the smallest size
    REQUIRE(io.offset + io.bytes <= s.size);
  }
  CHECK(count.size() == 3);
  CHECK(count[4096] / N == Approx(0.10).margin(0.005));
  CHECK(count[65536] / N == Approx(0.50).margin(0.005));
  CHECK(count[32768] / N == Approx(0.40).margin(0.005));

  // "8k" has no weight: it takes what 4k/20 leaves (bssplit_ddir).
  s.bssplit_text = "4k/20:8k";
  models::Workload w2(s);
  double small = 0;
  for (int i = 0; i < N; ++i) small += w2.next().bytes == 4096;
  CHECK(small / N == Approx(0.20).margin(0.005));

  // Per direction (',' read's, write's): rw=randrw writes are all 8k.
  s = spec(models::RwMode::RandRw);
  s.bssplit_text = "4k,8k";
  models::Workload w3(s);
  for (int i = 0; i < 1000; ++i) {
    const models::NextIo io = w3.next();
    REQUIRE(io.bytes == (io.write ? 8192u : 4096u));
  }
}

TEST_CASE("fio bsrange: sizes uniform over the multiples of the minimum up to the maximum", "[fio][workload]") {
  // get_next_buflen: minbs + maxbs * u, aligned down to minbs, capped at
  // maxbs: 4k-16k gives 4k, 8k, 12k, 16k a quarter each.
  models::JobSpec s = spec(models::RwMode::RandWrite);
  s.bsrange_text = "4k-16k";
  models::Workload w(s);
  std::map<uint32_t, double> count;
  const int N = 200000;
  for (int i = 0; i < N; ++i) ++count[w.next().bytes];
  REQUIRE(count.size() == 4);
  for (uint32_t b : {4096u, 8192u, 12288u, 16384u}) CHECK(count[b] / N == Approx(0.25).margin(0.005));
  // The job file's bs=min-max is bsrange's.
  CHECK(resolve("[a]\nbs=4k-16k\n").jobs[0].config.text("bsrange") == "4k-16k");
}

TEST_CASE("fio random_distribution=zipf:1.2: the hottest blocks' shares are 1/zeta(N) and 2^-theta/zeta(N)",
          "[fio][workload]") {
  const uint64_t blocks = 4096;  // a power of two: fio's __hash_u64 scatter is one-to-one
  models::JobSpec s = spec(models::RwMode::RandRead, blocks * 4096);
  s.distribution_text = "zipf:1.2";
  models::Workload w(s);
  std::vector<double> hits(blocks);
  const int N = 400000;
  for (int i = 0; i < N; ++i) ++hits[w.next().offset / 4096];
  std::sort(hits.rbegin(), hits.rend());
  // Zipf's law over N ranks: rank k has k^-theta / sum_i i^-theta.
  double zeta = 0;
  for (uint64_t i = 1; i <= blocks; ++i) zeta += std::pow(double(i), -1.2);
  CHECK(hits[0] / N == Approx(1.0 / zeta).epsilon(0.02));
  CHECK(hits[1] / N == Approx(std::pow(2.0, -1.2) / zeta).epsilon(0.03));
  // The top 10% of blocks: the formula's share of ranks 1..410 (fio's
  // approximation of the tail, within 2 points).
  double top = 0, expect = 0;
  for (uint64_t k = 0; k < blocks / 10; ++k) top += hits[k], expect += std::pow(double(k + 1), -1.2) / zeta;
  CHECK(top / N == Approx(expect).margin(0.02));
}

TEST_CASE("fio random_distribution=pareto:0.2: the hottest 20% of blocks take 80% of the I/O", "[fio][workload]") {
  // pareto_next: rank (N-1) * u^(log h / log(1-h)); P(rank < 0.2 N) = 0.2^(log 0.8 / log 0.2) = 0.8.
  // (A power-of-two block count: fio's __hash_u64 scatter is then one-to-one.)
  const uint64_t blocks = 8192;
  models::JobSpec s = spec(models::RwMode::RandRead, blocks * 4096);
  s.distribution_text = "pareto:0.2";
  models::Workload w(s);
  std::vector<double> hits(blocks);
  const int N = 300000;
  for (int i = 0; i < N; ++i) ++hits[w.next().offset / 4096];
  std::sort(hits.rbegin(), hits.rend());
  double top = 0;
  for (uint64_t k = 0; k < blocks / 5; ++k) top += hits[k];  // 1638 blocks
  CHECK(top / N == Approx(0.8).margin(0.02));
  // normal and random parse; a bad value is refused by file and line.
  CHECK(resolve("[a]\nrandom_distribution=normal:10\n").jobs.size() == 1);
  CHECK(error_of("[a]\nrandom_distribution=zipf:1\n") ==
        "--job t.fio line 2: random_distribution: 'zipf:1': zipf theta must be > 0 and not 1.0");
}

TEST_CASE("fio rate_iops and rate: the job issues at the rate (within 1%), thinktime stalls it",
          "[fio][e2e][binary]") {
  // usec_for_io: the k-th I/O is due at k * bs / (rate_iops * bs) seconds.
  test::TempFile iops("[a]\nioengine=libaio\nrw=randread\niodepth=4\nrate_iops=2000\nnumber_ios=400\n");
  const auto r1 = test::run_nvmesim("--job " + iops.path + " --nvme.dbbuf=spec --output-format=json");
  REQUIRE(r1.exit_code == 0);
  CHECK(test::json_number(r1.out, "iops") == Approx(2000).epsilon(0.01));
  // rate=8m with bs=4k: 2048 I/Os per second.
  test::TempFile bw("[a]\nioengine=libaio\nrw=write\nbs=4k\niodepth=8\nrate=8m\nnumber_ios=400\n");
  const auto r2 = test::run_nvmesim("--job " + bw.path + " --nvme.dbbuf=spec --output-format=json");
  REQUIRE(r2.exit_code == 0);
  CHECK(test::json_number(r2.out, "iops") == Approx(2048).epsilon(0.01));
  // thinktime=100 (us, fio's unit) after every 4 I/Os: 100 stalls of 100 us
  // in 400 I/Os, so the run lasts more than 99 * 100 us.
  test::TempFile think("[a]\nioengine=libaio\niodepth=4\nthinktime=100\nthinktime_blocks=4\nnumber_ios=400\n");
  const auto r3 = test::run_nvmesim("--job " + think.path + " --nvme.dbbuf=spec --output-format=json");
  REQUIRE(r3.exit_code == 0);
  const double sim_ns = test::json_number(r3.out, "sim_time_ns");
  CHECK(sim_ns > 99 * 100e3);
  CHECK(sim_ns < 100 * 100e3 + 400 * 20e3);  // plus at most 20 us per I/O
}

TEST_CASE("fio spellings: the command line means what a file means", "[fio][cli]") {
  // --runtime=5 is seconds, as runtime=5 in a file; --thinktime=10 microseconds.
  const CliResult r = parse({"--runtime=5", "--thinktime=10"});
  REQUIRE(r.action == CliResult::Run);
  CHECK(r.config.time_ns("runtime") == 5e9);
  CHECK(r.config.time_ns("thinktime") == 10e3);
  // --size alone: the job does size bytes of I/O, as size= in a file.
  const CliResult s = parse({"--size=64m"});
  REQUIRE(s.action == CliResult::Run);
  CHECK(s.config.integer("number_ios") == 16384);
  test::TempFile job("[a]\nioengine=libaio\n");
  const CliResult js = parse({"--job", job.path, "--size=8m", "--runtime=2"});
  REQUIRE(js.action == CliResult::Run);
  CHECK(js.config.integer("number_ios") == 2048);
  CHECK(js.config.time_ns("runtime") == 2e9);
  // The log options on the command line too.
  const CliResult logs = parse({"--job", job.path, "--write_lat_log=lat", "--nvme.dbbuf=spec"});
  REQUIRE(logs.action == CliResult::Run);
  REQUIRE(logs.options.fio);
  CHECK(logs.options.fio->jobs[0].logs.lat == "lat");
  const CliResult bare_logs = parse({"--write_lat_log=lat", "--time_based", "--runtime=1ms", "--nvme.dbbuf=spec"});
  REQUIRE(bare_logs.action == CliResult::Run);
  CHECK(bare_logs.config.integer("iodepth") == 32);  // nvmesim's defaults: no job file
  CHECK(bare_logs.config.integer("number_ios") == 0);
}

TEST_CASE("fio jobs: a job file's bs above MDTS is split and runs", "[fio][cli]") {
  test::TempFile job("[a]\nioengine=libaio\nbs=1m\n");
  const CliResult r = parse({"--job", job.path, "--nvme.mdts=5"});
  CHECK(r.action == CliResult::Run);
  test::TempFile split("[a]\nbssplit=4k/50:256k/50\n");
  CHECK(parse({"--job", split.path, "--nvme.mdts=5"}).action == CliResult::Run);
}
