// device=virtio-blk in the whole platform: kicks counted as SQ doorbell
// updates (updates = MMIO + suppressed, each MMIO one doorbell exit), used
// ring notifications as interrupts, VIRTIO_RING_F_EVENT_IDX on and off, and
// the configuration refusals. One System per TEST_CASE (one process each).
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "nvmesim/models/hv/vm_exit.h"
#include "nvmesim/platform/config/params.h"
#include "nvmesim/platform/report/stats_doc.h"
#include "nvmesim/platform/system/system.h"
#include "tests/platform/doc_table.h"
#include "tests/platform/virtio_config.h"

using namespace nvmesim;
using namespace nvmesim::platform;

namespace {

using test::Settings;
Config make_config(const Settings& settings) { return test::virtio_config(settings); }

uint64_t stat(const RunResults& r, const std::string& name) { return r.stats.at(name); }

void check_common(const RunResults& r, uint64_t ios) {
  REQUIRE(r.bringup_ok);
  CHECK_FALSE(r.stalled);
  CHECK(r.count("ios") == ios);
  CHECK(r.count("doorbells.sq.updates") == r.count("doorbells.sq.mmio") + r.count("doorbells.sq.suppressed"));
  // Every MMIO kick is one doorbell exit; nothing else writes the notify region.
  CHECK(r.count("exits.count.mmio_doorbell") == r.count("doorbells.sq.mmio"));
  CHECK(stat(r, "virtio_blk.notifies") == r.count("doorbells.sq.mmio"));
  CHECK(r.count("doorbells.cq.updates") == 0);
  CHECK(stat(r, "virtio_blk.requests") == ios);
  // Each used entry either notified or was held back.
  CHECK(stat(r, "virtio_blk.interrupts") + stat(r, "virtio_blk.interrupts_suppressed") == ios);
  CHECK(stat(r, "virtio_blk.interrupts") == r.count("controller.interrupts"));
  CHECK(stat(r, "virtio_blk.errors") == 0);
}

}  // namespace

TEST_CASE("virtio-blk platform: iodepth 1 without EVENT_IDX kicks and interrupts once per I/O") {
  Config c = make_config({{"iodepth", "1"}, {"number_ios", "500"}, {"virtio.event_idx", "off"}});
  System sys(c);
  const RunResults r = sys.run();
  check_common(r, 500);
  CHECK(r.count("doorbells.sq.updates") == 500);
  CHECK(r.count("doorbells.sq.mmio") == 500);
  CHECK(r.count("doorbells.sq.updates_with_dbbuf") == 0);
  CHECK(r.count("controller.interrupts") == 500);
  CHECK_FALSE(r.dbbuf_active);
}

TEST_CASE("virtio-blk platform: iodepth 1 with EVENT_IDX still kicks and interrupts once per I/O") {
  Config c = make_config({{"iodepth", "1"}, {"number_ios", "500"}, {"virtio.event_idx", "on"}});
  System sys(c);
  const RunResults r = sys.run();
  check_common(r, 500);
  CHECK(r.count("doorbells.sq.mmio") == 500);
  CHECK(r.count("doorbells.sq.suppressed") == 0);
  CHECK(r.count("doorbells.sq.updates_with_dbbuf") == 500);
  CHECK(r.count("controller.interrupts") == 500);
  CHECK(r.dbbuf_active);
}

TEST_CASE("virtio-blk platform: iodepth 32 with EVENT_IDX suppresses kicks and interrupts") {
  Config c = make_config({{"iodepth", "32"}, {"number_ios", "2000"}, {"virtio.event_idx", "on"}});
  System sys(c);
  const RunResults r = sys.run();
  check_common(r, 2000);
  CHECK(r.count("doorbells.sq.updates") == 2000);  // iodepth_batch_submit 1: one kick decision per I/O
  CHECK(r.count("doorbells.sq.suppressed") > 0);
  CHECK(r.count("doorbells.sq.updates_with_dbbuf") == 2000);
  CHECK(r.count("doorbells.sq.suppressed_with_dbbuf") == r.count("doorbells.sq.suppressed"));
  CHECK(stat(r, "virtio_blk.interrupts_suppressed") > 0);
  CHECK(r.count("controller.interrupts") < 2000);
  // Each pop writes avail_event, each notification switch re-arms it.
  CHECK(stat(r, "virtio_blk.avail_event_writes") >= 2000);
}

TEST_CASE("virtio-blk platform: iodepth 32 without EVENT_IDX interrupts for every completion") {
  Config c = make_config({{"iodepth", "32"}, {"number_ios", "2000"}, {"virtio.event_idx", "off"}});
  System sys(c);
  const RunResults r = sys.run();
  check_common(r, 2000);
  CHECK(r.count("doorbells.sq.updates_with_dbbuf") == 0);
  CHECK(r.count("doorbells.sq.suppressed_with_dbbuf") == 0);
  // Not negotiated: the device never writes avail_event.
  CHECK(stat(r, "virtio_blk.avail_event_writes") == 0);
  CHECK_FALSE(r.dbbuf_active);
}

TEST_CASE("virtio-blk platform: data written through the ring reads back (ram backend, verify=pattern)") {
  Config c = make_config({{"virtio.backend", "ram"}, {"rw", "randrw"}, {"verify", "pattern"}, {"size", "64k"},
                          {"bs", "16k"}, {"number_ios", "2000"},
                          {"do_verify", "off"}});  // 2000 I/Os, no read-back after them
  System sys(c);
  const RunResults r = sys.run();
  check_common(r, 2000);
  CHECK(r.count("io_errors") == 0);
  CHECK(r.count("verify.verified_reads") > 500);  // 4 blocks: nearly every read follows a write of its block
  CHECK(r.count("verify.errors") == 0);
}

TEST_CASE("virtio-blk platform: bad virtio settings are refused naming the field") {
  {
    Config c = make_config({{"virtio.queue_size", "100"}});
    CHECK_THROWS_WITH(System(c), Catch::Contains("--virtio.queue_size: 100 is not a power of 2"));
  }
  {
    // Without indirect descriptors a request takes 3 of the 64: at most 21.
    Config c = make_config({{"virtio.queue_size", "64"}, {"iodepth", "22"}, {"virtio.indirect_desc", "off"}});
    CHECK_THROWS_WITH(System(c), Catch::Contains("--iodepth: 22 does not fit a virtqueue of 64 descriptors, 3 per "
                                                 "request (allowed 1..21; raise virtio.queue_size or set "
                                                 "virtio.indirect_desc=on)"));
  }
  {
    // With them one: at most 64.
    Config c = make_config({{"virtio.queue_size", "64"}, {"iodepth", "65"}});
    CHECK_THROWS_WITH(System(c), Catch::Contains("--iodepth: 65 does not fit a virtqueue of 64 descriptors, 1 per "
                                                 "request (allowed 1..64; raise virtio.queue_size)"));
  }
  {
    Config c = make_config({{"guest.virtio_fault", "indirect_nested"}, {"virtio.indirect_desc", "off"}});
    CHECK_THROWS_WITH(System(c), Catch::Contains("--guest.virtio_fault: indirect_nested needs virtio.indirect_desc=on"));
  }
}

// docs/metrics.md's virtio-blk table is the groups' own rows (virtio_driver.*,
// virtio_blk.*; virtio_blk.busy_poll.* exists with virtio.busy_poll only).
TEST_CASE("virtio-blk platform: docs/metrics.md lists the virtio-blk statistics", "[stats][docs]") {
  Config c = make_config({{"numjobs", "2"}, {"number_ios", "20"}, {"virtio.busy_poll", "1us"}});
  System sys(c);
  const RunResults r = sys.run();
  test::check_documented(r.stats, "virtio", "virtio-blk statistics: checked by tests/platform/test_virtio_blk_platform.cpp",
                         "virtio_stats_table.md");
}

// ... and the aio_poll group's own table (an iothread polling, no busy poll).
TEST_CASE("virtio-blk platform: docs/metrics.md lists the aio_poll statistics", "[stats][docs]") {
  Config c = make_config({{"hv.device_thread", "iothread"}, {"hv.poll_max", "50us"}, {"number_ios", "200"}});
  System sys(c);
  const RunResults r = sys.run();
  test::check_documented(r.stats, "virtio_blk.aio_poll.",
                         "virtio-blk aio_poll statistics: checked by tests/platform/test_virtio_blk_platform.cpp",
                         "aio_poll_stats_table.md");
}

TEST_CASE("virtio-blk platform: with indirect descriptors iodepth can equal the queue size") {
  // 16 descriptors: 16 requests in flight through tables (5 without them).
  Config c = make_config({{"virtio.queue_size", "16"}, {"iodepth", "16"}, {"number_ios", "500"}});
  System sys(c);
  const RunResults r = sys.run();
  check_common(r, 500);
  CHECK(r.stats.at("virtio_blk.requests") == 500);
}
