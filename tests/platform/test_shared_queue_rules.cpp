// Jobs sharing a virtqueue (virtio.queues < numjobs), stated as Linux's
// rules rather than as figures seen once:
// - a request's tag is freed only when the request has completed
//   (blk_mq_end_request), so a job on another vCPU never reuses the tag,
//   data buffer or per-tag record of a request the interrupt handler has
//   taken from the used ring but not yet completed: every job completes
//   exactly its number_ios and verify=pattern finds no error;
// - the vCPU that takes a queue's interrupt serves it after its own job has
//   finished (virtblk_done runs on the interrupt's CPU whatever runs there),
//   so the other jobs on the queue finish too.
// NVMe jobs never share a queue (one I/O queue pair per job; numjobs above
// nvme.max_io_queues is refused), so the NVMe rows check the same counts
// with one queue per job as the reference.
#include <catch2/catch.hpp>

#include <string>
#include <systemc>

#include "nvmesim/models/guest/vcpu.h"
#include "nvmesim/platform/config/params.h"
#include "nvmesim/platform/system/system.h"
#include "run_binary.h"
#include "virtio_config.h"

using namespace nvmesim;
using namespace nvmesim::platform;

namespace {

struct SharedRow {
  unsigned numjobs, queues, iodepth;
  const char* rw;
};

// The same rule through the binary's JSON (one SystemC elaboration per
// process: a test case that runs several configurations runs the binary).
void check_binary_run(const std::string& args, unsigned numjobs, unsigned ios_per_job) {
  INFO("nvmesim " << args);
  // do_verify=0: each job's I/Os are its number_ios (no read-back phase after them).
  const auto r = test::run_nvmesim(args + " --single-run --output-format=json --do_verify=off --number_ios=" +
                                   std::to_string(ios_per_job));
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("\"outcome\": \"ok\"") != std::string::npos);
  CHECK(test::json_number(r.out, "ios") == double(numjobs) * ios_per_job);
  CHECK(test::json_number(r.out, "io_errors") == 0);
  const std::string verify = r.out.substr(r.out.find("\"verify\""));
  CHECK(test::json_number(verify, "errors") == 0);
  // Reads of blocks the job wrote: mixed jobs over a small region.
  if (args.find("randrw") != std::string::npos && args.find("--size=256k") != std::string::npos)
    CHECK(test::json_number(verify, "verified_reads") > 0);
  const std::string util = r.out.substr(r.out.find("\"utilization\""));
  for (unsigned v = 0; v < numjobs; ++v) {
    const size_t at = util.find("\"vcpu\": " + std::to_string(v) + ",");
    REQUIRE(at != std::string::npos);
    CHECK(test::json_number(util.substr(at), "ios") == ios_per_job);
  }
}

}  // namespace

TEST_CASE("shared virtqueues: verify=pattern finds no error and every job completes its I/Os", "[shared]") {
  // Generated: jobs per queue 2..4, depths 1..32 (within the 256-entry
  // queue), one and two queues, writes alone and mixed.
  for (const char* rw : {"randwrite", "randrw"})
    for (const SharedRow row : {SharedRow{2, 1, 1, rw}, SharedRow{2, 1, 8, rw}, SharedRow{4, 1, 4, rw},
                                SharedRow{4, 1, 16, rw}, SharedRow{3, 2, 8, rw}, SharedRow{4, 2, 32, rw}})
      check_binary_run("--device=virtio-blk --virtio.backend=ram --verify=pattern --size=256k --rw=" +
                           std::string(rw) + " --numjobs=" + std::to_string(row.numjobs) +
                           " --virtio.queues=" + std::to_string(row.queues) + " --iodepth=" +
                           std::to_string(row.iodepth),
                       row.numjobs, 300);
}

TEST_CASE("shared virtqueues: the reported case, 4 jobs on one queue, verify=pattern with no error", "[shared]") {
  for (const char* rw : {"randwrite", "randrw"})
    for (const char* size : {"", " --size=256k"})
      check_binary_run(std::string("--device=virtio-blk --numjobs=4 --virtio.queues=1 --verify=pattern "
                                   "--virtio.backend=ram --rw=") + rw + size,
                       4, 500);
}

TEST_CASE("NVMe jobs (one queue pair each): verify=pattern finds no error at the same depths", "[shared]") {
  for (const char* jobs : {"2", "4"})
    for (const char* depth : {"1", "16"})
      check_binary_run(std::string("--nvme.backend=ram --rw=randrw --verify=pattern --size=256k --numjobs=") +
                           jobs + " --iodepth=" + depth,
                       unsigned(std::stoul(jobs)), 300);
}

namespace {
// Counts the interrupts vCPU `v` has taken when its job finishes.
struct InterruptsAtFinish : sc_core::sc_module {
  models::Vcpu& vcpu;
  uint64_t at_finish = 0;
  bool seen = false;
  InterruptsAtFinish(sc_core::sc_module_name n, models::Vcpu& v) : sc_module(n), vcpu(v) {
    SC_HAS_PROCESS(InterruptsAtFinish);
    SC_METHOD(snapshot);
    sensitive << vcpu.finished_event();
    dont_initialize();
  }
  void snapshot() {
    at_finish = uint64_t(vcpu.results().interrupts.value());
    seen = true;
  }
};

const test::Settings kStallCase = {{"hv.notify", "ioeventfd"},   {"iodepth", "64"},
                                   {"numjobs", "2"},             {"virtio.queues", "1"},
                                   {"virtio.queue_size", "256"}, {"hv.device_thread", "iothread"},
                                   {"hv.poll_max_ns", "0"},      {"hv.exit_ioeventfd", "100us"},
                                   {"number_ios", "20000"}};
}  // namespace

TEST_CASE("shared virtqueue: the interrupt's vCPU serves the queue after its own job has finished", "[shared]") {
  const Config c = test::virtio_config(kStallCase);
  System sys(c);
  REQUIRE(sys.vcpus().size() == 2);
  InterruptsAtFinish probe("probe", *sys.vcpus()[0]);
  const RunResults r = sys.run();
  REQUIRE(r.bringup_ok);
  CHECK_FALSE(r.stalled);
  CHECK(r.count("ios") == 40000);
  CHECK(r.count("utilization.vcpu.ios", 0) == 20000);
  CHECK(r.count("utilization.vcpu.ios", 1) == 20000);
  // Job 0 (on the interrupt's vCPU) finishes first; job 1's later I/Os are
  // completed by vCPU 0's handler all the same.
  REQUIRE(probe.seen);
  CHECK(r.vcpus[0].done_ns < r.vcpus[1].done_ns);
  const uint64_t taken = r.count("utilization.vcpu.interrupts", 0);
  CHECK(taken > probe.at_finish);  // interrupts taken after its job finished
  // Every interrupt of the queue went to vCPU 0 and was taken there (with or
  // without new used entries), none to vCPU 1.
  CHECK(r.count("utilization.vcpu.interrupts", 1) == 0);
  CHECK(taken == r.stats.at("virtio_driver.vq0.interrupts") + r.stats.at("virtio_driver.vq0.spurious_interrupts"));
  CHECK(r.stats.at("virtio_driver.vq0.completions") == 40000);
}

TEST_CASE("shared virtqueue: the reported stall command completes all 40000 I/Os with outcome ok", "[shared][e2e]") {
  const auto r = test::run_nvmesim(
      "--device=virtio-blk --hv.notify=ioeventfd --iodepth=64 --numjobs=2 --virtio.queues=1 "
      "--virtio.queue_size=256 --hv.device_thread=iothread --hv.poll_max_ns=0 --hv.exit_ioeventfd=100us "
      "--number_ios=20000 --output-format=json");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("\"outcome\": \"ok\"") != std::string::npos);
  CHECK(test::json_number(r.out, "ios") == 40000);
}

// blk_mq_get_tag sleeps when the queue has no free tag: jobs whose total
// depth exceeds the queue wait for tags (FioJob::wait_for_tag) and complete.
TEST_CASE("shared virtqueue: jobs deeper than the queue wait for tags and complete", "[shared][tag_wait]") {
  for (const char* size : {"16", "64"})
    check_binary_run(std::string("--device=virtio-blk --virtio.backend=ram --numjobs=4 --virtio.queues=1 "
                                 "--iodepth=16 --rw=randrw --verify=pattern --size=256k --virtio.queue_size=") +
                         size,
                     4, 500);
}
