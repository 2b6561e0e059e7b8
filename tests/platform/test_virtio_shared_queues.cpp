// virtio.queues below numjobs: job (vCPU) j submits on queue j % queues as
// Linux 6.1 blk_mq_map_queues maps CPUs without SMT siblings; queue q's
// interrupt goes to vCPU q, whose virtblk_done completes the other jobs'
// I/Os and wakes them. Exact kick and interrupt invariants per queue.
#include <catch2/catch.hpp>

#include "nvmesim/firmware/guest/virtio_blk_driver.h"
#include "nvmesim/platform/config/params.h"
#include "nvmesim/platform/system/system.h"
#include "virtio_config.h"

using namespace nvmesim;
using namespace nvmesim::platform;

TEST_CASE("virtio shared queues: blk_mq_map_queues maps CPU c to queue c % queues") {
  CHECK(fw::VirtioBlkDriver::queue_of_cpu(0, 2) == 0);
  CHECK(fw::VirtioBlkDriver::queue_of_cpu(1, 2) == 1);
  CHECK(fw::VirtioBlkDriver::queue_of_cpu(2, 2) == 0);
  CHECK(fw::VirtioBlkDriver::queue_of_cpu(3, 2) == 1);
  CHECK(fw::VirtioBlkDriver::queue_of_cpu(4, 3) == 1);
  CHECK(fw::VirtioBlkDriver::queue_of_cpu(5, 1) == 0);
}

TEST_CASE("virtio shared queues: 4 jobs on 2 queues, per-queue kicks and interrupts add up exactly") {
  const Config c = test::virtio_config({{"numjobs", "4"}, {"virtio.queues", "2"}, {"iodepth", "1"}, {"number_ios", "1000"}});
  System sys(c);
  const RunResults r = sys.run();
  REQUIRE(r.bringup_ok);
  CHECK_FALSE(r.stalled);
  CHECK(r.count("ios") == 4000);
  for (const char* q : {"vq0", "vq1"}) {
    const std::string g = std::string("virtio_driver.") + q + ".";
    // Two jobs per queue, iodepth 1: one kick decision per I/O of either.
    CHECK(r.stats.at(g + "updates") == 2000);
    CHECK(r.stats.at(g + "updates") == r.stats.at(g + "mmio") + r.stats.at(g + "suppressed"));
    CHECK(r.stats.at(g + "completions") == 2000);
    CHECK(r.stats.at(g + "spurious_interrupts") == 0);
  }
  CHECK(r.stats.at("virtio_blk.notifies") ==
        r.stats.at("virtio_driver.vq0.mmio") + r.stats.at("virtio_driver.vq1.mmio"));
  CHECK(r.count("doorbells.sq.updates") == 4000);
  CHECK(r.count("doorbells.sq.mmio") == r.stats.at("virtio_blk.notifies"));
  CHECK(r.stats.at("virtio_blk.requests") == 4000);
  CHECK(r.stats.at("virtio_blk.interrupts") + r.stats.at("virtio_blk.interrupts_suppressed") == 4000);
  CHECK(r.stats.at("virtio_blk.interrupts") ==
        r.stats.at("virtio_driver.vq0.interrupts") + r.stats.at("virtio_driver.vq1.interrupts"));
  // Only vCPUs 0 and 1 (the first on each queue) take interrupts; every job finished its I/Os.
  REQUIRE(r.vcpus.size() == 4);
  CHECK(r.count("utilization.vcpu.interrupts", 2) == 0);
  CHECK(r.count("utilization.vcpu.interrupts", 3) == 0);
  CHECK(r.count("utilization.vcpu.interrupts", 0) + r.count("utilization.vcpu.interrupts", 1) ==
        r.stats.at("virtio_blk.interrupts"));
  for (unsigned v = 0; v < r.vcpus.size(); ++v) CHECK(r.count("utilization.vcpu.ios", v) == 1000);
}

// At depth, one interrupt hands back several used requests. Their descriptor
// heads are free from virtqueue_get_buf on, and another job on the queue may
// reuse one while the handler still works through the list, so who submitted
// each must be read with it (as Linux takes the request from the token), not
// looked up by head later: else a job's I/O is completed in another job's
// name, one job waits forever and the other's count goes below zero.
TEST_CASE("virtio shared queues: at iodepth 4 every job completes its own I/Os") {
  const Config c = test::virtio_config({{"numjobs", "4"}, {"virtio.queues", "2"}, {"iodepth", "4"}, {"number_ios", "500"}});
  System sys(c);
  const RunResults r = sys.run();
  REQUIRE(r.bringup_ok);
  CHECK_FALSE(r.stalled);
  CHECK(r.count("ios") == 2000);
  REQUIRE(r.vcpus.size() == 4);
  for (unsigned v = 0; v < r.vcpus.size(); ++v) CHECK(r.count("utilization.vcpu.ios", v) == 500);
  for (const char* q : {"vq0", "vq1"})
    CHECK(r.stats.at(std::string("virtio_driver.") + q + ".completions") == 1000);
}
