// fio's latency_target / latency_window / latency_percentile / latency_run
// through a job file and the whole system: the search ends at the depth the
// device's latency allows (worked out by hand), fio's own
// examples/latency-profile.fio runs, and what is not modelled is refused.
#include <catch2/catch.hpp>

#include <string>

#include "run_binary.h"
#include "temp_file.h"

using namespace nvmesim;

namespace {
// The first "depth=N" of the text report's latency line.
long depth_in(const std::string& out) {
  const size_t at = out.find("latency   : target=");
  if (at == std::string::npos) return -1;
  const size_t d = out.find("depth=", at);
  return d == std::string::npos ? -1 : std::stol(out.substr(d + 6));
}
}  // namespace

TEST_CASE("fio latency_target: a device serving one I/O at a time ends the search at target / service time",
          "[fio][latency_target]") {
  // backend_concurrency=1, 100 us per I/O: at depth qd an I/O waits for the
  // qd - 1 ahead of it, so its total latency is qd x 100 us plus the path's
  // few us. Target 450 us: depths up to 4 are within it, 5 is not; the
  // search (1, 2, 4, 8, 6, 5, 4, final window at 4) ends at 4.
  test::TempFile job(
      "[a]\nioengine=libaio\nrw=randread\niodepth=32\nlatency_target=450\nlatency_window=3000\n"
      "latency_percentile=99\nnumber_ios=100000\n");
  // hv.wakeup=fixed: no measured host wake-up draws (some over 1 ms) in the
  // latencies, so the percentile sees the device's queueing alone.
  const std::string dev =
      " --nvme.backend=latency --nvme.backend_latency=100us --nvme.backend_concurrency=1 --hv.wakeup=fixed";
  const auto r = test::run_nvmesim("--job " + job.path + dev + " --single-run");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(depth_in(r.out) == 4);
  CHECK(r.out.find("8 windows judged") != std::string::npos);
  const auto j = test::run_nvmesim("--job " + job.path + dev + " --output-format=json");
  REQUIRE(j.exit_code == 0);
  CHECK(test::json_number(j.out, "latency_target_depth") == 4);
  CHECK(test::json_number(j.out, "latency_target_windows") == 8);
  // fio's JSON (stat.c): latency_depth, latency_target in ns, latency_window in us.
  const auto f = test::run_nvmesim("--job " + job.path + dev + " --output-format=json+");
  REQUIRE(f.exit_code == 0);
  const size_t at = f.out.find("\"latency_depth\" : ");
  REQUIRE(at != std::string::npos);
  CHECK(std::stol(f.out.substr(at + 18)) == 4);
  CHECK(f.out.find("\"latency_target\" : 450000,") != std::string::npos);
  CHECK(f.out.find("\"latency_window\" : 3000\n") != std::string::npos);
  // The search ended the job long before number_ios: 8 windows of ~3 ms at
  // depths up to 8, each I/O 100 us: about 30 ms, 300 I/Os or so.
  CHECK(test::json_number(j.out, "ios") < 1000);
}

TEST_CASE("fio latency_target: latency_run=1 keeps searching until number_ios", "[fio][latency_target]") {
  // The same device and target: the search never ends the job, which runs
  // its number_ios; the depth stays at 4 or tries 5 (rule:
  // tests/models/test_fio_latency_target.cpp).
  test::TempFile job(
      "[a]\nioengine=libaio\nrw=randread\niodepth=32\nlatency_target=450\nlatency_window=3000\n"
      "latency_percentile=99\nlatency_run=1\nnumber_ios=600\n");
  const auto j = test::run_nvmesim("--job " + job.path +
                                   " --nvme.backend=latency --nvme.backend_latency=100us "
                                   "--nvme.backend_concurrency=1 --hv.wakeup=fixed --single-run --output-format=json");
  INFO(j.err);
  REQUIRE(j.exit_code == 0);
  CHECK(test::json_number(j.out, "ios") == 600);
  const double depth = test::json_number(j.out, "latency_target_depth");
  CHECK((depth == 4 || depth == 5));
  CHECK(test::json_number(j.out, "latency_target_windows") > 8);
}

TEST_CASE("fio latency_target: fio's examples/latency-profile.fio runs (its window shortened)",
          "[fio][latency_target]") {
  // fio's examples/latency-profile.fio as written; the 5 s window made 1 ms
  // on the command line so that the test is fast.
  test::TempFile job(
      "[global]\nbs=4k\nrw=randread\nrandom_generator=lfsr\ndirect=1\nioengine=libaio\niodepth=128\n"
      "latency_target=500000\nlatency_window=5000000\nlatency_percentile=99.9\n\n[device]\nfilename=/dev/sda\n");
  const auto r = test::run_nvmesim("--job " + job.path + " --latency_window=1000 --single-run");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  // 500 ms is far above any latency here: the depth doubles to iodepth, where
  // a success changes nothing: a final window, then the end.
  CHECK(depth_in(r.out) == 128);
  // Doubling 1 .. 128, a success at 128 (capped: unchanged), the final window.
  CHECK(r.out.find("latency   : target=500000us, window=1000us, percentile=99.90%, depth=128 (vcpu0, 9 windows "
                   "judged)") != std::string::npos);
  // lfsr is accepted with a one-line warning of the difference.
  CHECK(r.err.find("random_generator=lfsr: random offsets come from nvmesim's own generator") != std::string::npos);
}

TEST_CASE("fio latency_target: refusals and bad values", "[fio][latency_target]") {
  test::TempFile offload("[a]\nioengine=libaio\nio_submit_mode=offload\nrate_iops=1000\n");
  test::check_refused("--job " + offload.path,
                      "nvmesim: error: --job " + offload.path +
                          " line 3: io_submit_mode=offload: not modelled (nvmesim runs only fio's default, "
                          "io_submit_mode=inline)");
  test::TempFile pct("[a]\nioengine=libaio\nlatency_target=100\nlatency_percentile=101\n");
  const auto r = test::run_nvmesim("--job " + pct.path);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("line 4: latency_percentile") != std::string::npos);
  test::TempFile bad("[a]\nioengine=libaio\nlatency_target=soon\n");
  const auto b = test::run_nvmesim("--job " + bad.path);
  CHECK(b.exit_code == 2);
  CHECK(b.err.find("line 3: latency_target=soon: not a time") != std::string::npos);
}
