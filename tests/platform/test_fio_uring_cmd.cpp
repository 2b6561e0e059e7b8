// fio's io_uring_cmd engine (NVMe passthrough on /dev/ngXnY, cmd_type=nvme)
// and the io_uring engines' sqthread_poll: fio's examples/uring-cmd-ng.fio
// as written, the counts and costs each rule gives, and what is refused.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/platform/fio_text_job.h"
#include "tests/platform/run_binary.h"
#include "tests/platform/temp_file.h"

namespace {

using nvmesim::test::fio_text_error;
using nvmesim::test::resolve_fio_text;

// fio's examples/uring-cmd-ng.fio, as fio ships it.
const char* const kUringCmdNg =
    "# io_uring_cmd I/O engine for nvme-ns generic character device\n"
    "\n"
    "[global]\n"
    "filename=/dev/ng0n1\n"
    "ioengine=io_uring_cmd\n"
    "cmd_type=nvme\n"
    "size=1G\n"
    "iodepth=32\n"
    "bs=4K\n"
    "thread=1\n"
    "stonewall=1\n"
    "\n"
    "[rand-write]\n"
    "rw=randwrite\n"
    "sqthread_poll=1\n"
    "\n"
    "[rand-read]\n"
    "rw=randread\n"
    "\n"
    "[write-opts]\n"
    "rw=write\n"
    "sqthread_poll=1\n"
    "sqthread_poll_cpu=0\n"
    "nonvectored=1\n"
    "registerfiles=1\n";

nlohmann::json run_json(const std::string& args) {
  const auto r = nvmesim::test::run_nvmesim(args + " --output-format=json");
  INFO(args);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return nlohmann::json::parse(r.out);
}

double num(const nlohmann::json& j, const char* vcpu, const char* name) {
  return j["stats"][vcpu][name].get<double>();
}

// The one line a refused run writes.
void check_refused(const std::string& args, const std::string& says) {
  INFO(args);
  const auto r = nvmesim::test::run_nvmesim(args);
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK(r.err.find(says) != std::string::npos);
}

}  // namespace

TEST_CASE("uring_cmd: fio's uring-cmd-ng.fio resolves to three passthrough jobs, two with SQPOLL", "[fio][uring_cmd]") {
  const auto jobs = resolve_fio_text(kUringCmdNg);
  REQUIRE(jobs.jobs.size() == 3);
  const bool sqpoll[] = {true, false, true};
  for (size_t i = 0; i < 3; ++i) {
    INFO(jobs.jobs[i].name);
    CHECK(jobs.jobs[i].engine == "io_uring_cmd");
    CHECK(jobs.jobs[i].config.flag("uring_cmd"));
    CHECK(jobs.jobs[i].config.flag("sqthread_poll") == sqpoll[i]);
    CHECK(jobs.jobs[i].config.integer("number_ios") == (1 << 30) / 4096);  // size / bs, as fio
    CHECK(jobs.jobs[i].stonewall);
  }
  CHECK(jobs.per_vcpu_workloads);  // sqthread_poll differs between the sections
  // Named and ignored: no modelled effect (fio_job.cpp kIgnored says why).
  for (const char* name : {"sqthread_poll_cpu", "nonvectored", "registerfiles", "filename", "thread"})
    CHECK(std::find(jobs.ignored.begin(), jobs.ignored.end(), name) != jobs.ignored.end());
  // fixedbufs too; hipri=0 is fio's default and changes nothing.
  CHECK(resolve_fio_text("[a]\nioengine=io_uring\nfixedbufs=1\nhipri=0\n").ignored ==
        std::vector<std::string>{"fixedbufs"});
  // A bare sqthread_poll sets it (fio's FIO_OPT_STR_SET); io_uring takes it too.
  CHECK(resolve_fio_text("[a]\nioengine=io_uring\nsqthread_poll\n").jobs[0].config.flag("sqthread_poll"));
  CHECK_FALSE(resolve_fio_text("[a]\nioengine=io_uring\nsqthread_poll\n").jobs[0].config.flag("uring_cmd"));
}

TEST_CASE("uring_cmd: what fio's io_uring engines would not run, or nvmesim does not model, is refused",
          "[fio][uring_cmd]") {
  CHECK(fio_text_error("[a]\nioengine=io_uring_cmd\ncmd_type=bsg\n") ==
        "--job t.fio line 3: cmd_type=bsg: not modelled (nvmesim runs cmd_type=nvme only)");
  CHECK(fio_text_error("[a]\nioengine=io_uring_cmd\nhipri=1\n") ==
        "--job t.fio line 3: hipri=1: not modelled (io_uring's polled completions; nvmesim runs hipri=0, and "
        "polls the driver's CQ with guest.completion=poll)");
  CHECK(fio_text_error("[a]\nioengine=libaio\nsqthread_poll=1\n") ==
        "--job t.fio [a]: sqthread_poll=1 needs ioengine=io_uring or io_uring_cmd (this job's is libaio)");
  CHECK(fio_text_error("[a]\nsqthread_poll=1\n") ==
        "--job t.fio [a]: sqthread_poll=1 needs ioengine=io_uring or io_uring_cmd (this job's is psync)");
  CHECK(fio_text_error("[a]\nioengine=io_uring\ncmd_type=nvme\n") ==
        "--job t.fio line 3: cmd_type=nvme: an option of ioengine=io_uring_cmd (this job's is io_uring)");
}

TEST_CASE("uring_cmd: fio's uring-cmd-ng.fio runs: counts per job, no submit or reap call with SQPOLL",
          "[fio][uring_cmd][binary]") {
  nvmesim::test::TempFile job(kUringCmdNg);
  const std::string args = "--job " + job.path + " --number_ios=300 --single-run --output-format=json";
  const auto first = nvmesim::test::run_nvmesim(args);
  INFO(first.err);
  REQUIRE(first.exit_code == 0);
  const auto j = nlohmann::json::parse(first.out);
  // The model's defaults: guest.submit_cost 1500 ns, guest.uring_cmd_share 0.75.
  const double per_command = 1500 * 0.75;
  // [rand-write] and [write-opts]: sqthread_poll=1; [rand-read]: without.
  for (const char* v : {"vcpu0", "vcpu2"}) {
    INFO(v);
    CHECK(num(j, v, "ios") == 300);
    CHECK(num(j, v, "write_ios") == 300);
    CHECK(num(j, v, "read_ios") == 0);
    CHECK(num(j, v, "write_bytes") == 300 * 4096);
    CHECK(num(j, v, "submit_calls") == 0);  // fio_ioring_commit: no io_uring_enter
    CHECK(num(j, v, "reap_calls") == 0);    // fio_ioring_getevents: no io_uring_enter
    CHECK(num(j, v, "reap_events") == 300);
    CHECK(num(j, v, "sqpoll_time") == 300 * per_command);  // on the SQPOLL thread
    CHECK(num(j, v, "idle_time") == 0);  // fio spins on the CQ ring: the vCPU never halts
  }
  CHECK(num(j, "vcpu1", "ios") == 300);
  CHECK(num(j, "vcpu1", "read_ios") == 300);
  CHECK(num(j, "vcpu1", "read_bytes") == 300 * 4096);
  // fio's defaults: iodepth_batch_submit=1 and iodepth_batch_complete_min=1,
  // one io_uring_enter per I/O each way (test_guest_calls.cpp's rule).
  CHECK(num(j, "vcpu1", "submit_calls") == 300);
  CHECK(num(j, "vcpu1", "reap_calls") == 300);
  CHECK(num(j, "vcpu1", "sqpoll_time") == 0);
  // The same seed, the same run, byte for byte.
  CHECK(nvmesim::test::run_nvmesim(args).out == first.out);
}

TEST_CASE("uring_cmd: a passthrough command costs guest.uring_cmd_share of guest.submit_cost, exactly",
          "[fio][uring_cmd][binary]") {
  // iodepth 1: the same interrupts, calls and completions either way; only
  // the per-command work differs (no store-buffer wait at a barrier).
  const std::string base =
      "--single-run --number_ios=200 --iodepth=1 --guest.store_visibility=0ns --guest.submit_cost=1500ns ";
  const auto block = run_json(base + "--ioengine=io_uring");
  for (const char* share : {"0.75", "0.5", "1"}) {
    INFO(share);
    const auto cmd = run_json(base + "--ioengine=io_uring_cmd --guest.uring_cmd_share=" + share);
    CHECK(num(cmd, "vcpu0", "interrupts") == num(block, "vcpu0", "interrupts"));
    CHECK(num(cmd, "vcpu0", "submit_calls") == 200);
    CHECK(num(block, "vcpu0", "guest_time") - num(cmd, "vcpu0", "guest_time") ==
          200 * 1500 * (1 - std::stod(share)));
  }
  // sqthread_poll moves that work off the job's vCPU: none of it, and no call, is the job's.
  const auto sq = run_json(base + "--ioengine=io_uring_cmd --sqthread_poll=1 --guest.submit_call_cost=700ns");
  CHECK(num(sq, "vcpu0", "sqpoll_time") == 200 * 1500 * 0.75);
  CHECK(num(sq, "vcpu0", "submit_calls") == 0);
  // Batches of 8, reaps of 4 (test_guest_calls.cpp's rule, worked there): 1 + (200 - 8) / 4 io_uring_enter
  // calls to submit, 200 / 4 to reap; none of either with sqthread_poll.
  const std::string batched = "--single-run --number_ios=200 --iodepth=8 --iodepth_batch_submit=8 "
                              "--iodepth_batch_complete_min=4 --ioengine=io_uring_cmd ";
  const auto b = run_json(batched);
  CHECK(num(b, "vcpu0", "submit_calls") == 1 + (200 - 8) / 4);
  CHECK(num(b, "vcpu0", "reap_calls") == 200 / 4);
  const auto bs = run_json(batched + "--sqthread_poll=1");
  CHECK(num(bs, "vcpu0", "submit_calls") == 0);
  CHECK(num(bs, "vcpu0", "reap_calls") == 0);
  CHECK(num(bs, "vcpu0", "reap_events") == 200);
  const auto sq_block = run_json(base + "--ioengine=io_uring --sqthread_poll=1");
  CHECK(num(sq_block, "vcpu0", "sqpoll_time") == 200 * 1500);  // the block path's whole submit_cost
}

TEST_CASE("uring_cmd: refused in one line: cmd_type, a transfer above MDTS, virtio-blk, the parameter's range",
          "[fio][uring_cmd][binary]") {
  nvmesim::test::TempFile bsg(std::string(kUringCmdNg) + "cmd_type=bsg\n");
  check_refused("--job " + bsg.path + " --number_ios=10", "cmd_type=bsg: not modelled (nvmesim runs cmd_type=nvme only)");
  // nvme.mdts=3: 32 KiB; the block path splits a 64 KiB I/O, passthrough cannot.
  check_refused("--single-run --number_ios=10 --ioengine=io_uring_cmd --bs=64k --nvme.mdts=3",
                "bs 65536 bytes is above the largest passthrough transfer (32768 bytes, nvme.mdts)");
  CHECK(nvmesim::test::run_nvmesim("--single-run --number_ios=10 --ioengine=io_uring --bs=64k --nvme.mdts=3")
            .exit_code == 0);
  check_refused("--single-run --number_ios=10 --ioengine=io_uring_cmd --device=virtio-blk", "needs device=nvme");
  check_refused("--single-run --number_ios=10 --ioengine=libaio --uring_cmd=on",
                "uring_cmd=on is fio's ioengine=io_uring_cmd, not ioengine=libaio");
  check_refused("--guest.uring_cmd_share=3", "guest.uring_cmd_share");
  check_refused("--single-run --number_ios=10 --sqthread_poll=1", "sqthread_poll=1 needs ioengine=io_uring");
}
