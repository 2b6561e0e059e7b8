// Virtio-blk driver and device end to end (no time: the test decides when
// each side runs), counting kicks as SQ doorbell updates (updates = MMIO +
// suppressed) and used-ring notifications as interrupts.
#include <catch2/catch.hpp>

#include <cstdint>

#include "virtio_test_env.h"

using namespace nvmesim::fw;
using namespace nvmesim::fw::virtio;
namespace nvme = nvmesim::nvme;

using virtiotest::read_at;

namespace {
void check_invariant(const VirtqueueDriverCounters& c) { CHECK(c.updates == c.mmio + c.suppressed); }
}  // namespace

TEST_CASE("bring-up negotiates VIRTIO_RING_F_EVENT_IDX only when both sides want it") {
  for (int dev = 0; dev < 2; ++dev)
    for (int drv = 0; drv < 2; ++drv) {
      virtiotest::Harness h(2, 64, dev, drv);
      const auto r = h.driver.bring_up();
      REQUIRE(r.ok);
      CHECK(h.driver.event_idx() == (dev && drv));
      CHECK(h.device.event_idx() == (dev && drv));
      CHECK(r.queues == 2);
      CHECK(r.queue_size == 64);
      CHECK(r.queue_depth == 32);
      CHECK(r.capacity_sectors == (1u << 20));
      CHECK(h.device.status() == (STATUS_ACKNOWLEDGE | STATUS_DRIVER | STATUS_FEATURES_OK | STATUS_DRIVER_OK));
      CHECK(h.device.queue_vector(0) == 1);
      CHECK(h.device.queue_vector(1) == 2);
    }
}

TEST_CASE("iodepth 1: every request kicks and interrupts, EVENT_IDX on or off, across the u16 index wrap") {
  for (bool event : {false, true}) {
    virtiotest::Harness h(1, 16, true, event);
    REQUIRE(h.driver.bring_up().ok);
    const uint32_t ios = 70000;  // more than 65536: avail, used and event indices wrap
    uint32_t completed = 0;
    for (uint32_t i = 0; i < ios; ++i) {
      REQUIRE(h.driver.submit(0, read_at(i % 1000)) >= 0);
      REQUIRE(h.driver.kick(0).mmio);
      h.run_device();
      h.complete_backend();
      completed += uint32_t(h.run_driver_interrupts(0).size());
    }
    INFO("event_idx " << event);
    const auto& c = h.driver.counters(0);
    CHECK(completed == ios);
    CHECK(c.updates == ios);
    CHECK(c.mmio == ios);
    CHECK(c.suppressed == 0);
    CHECK(c.updates_with_dbbuf == (event ? ios : 0));
    check_invariant(c);
    CHECK(h.device.counters().notifies == ios);
    CHECK(h.device.counters().interrupts == ios);
    CHECK(h.device.counters().interrupts_suppressed == 0);
    CHECK(c.interrupts == ios);
    CHECK(c.spurious_interrupts == 0);
    CHECK(h.device.counters().errors == 0);
  }
}

TEST_CASE("iodepth 32 before the device runs: EVENT_IDX suppresses 31 kicks and 31 interrupts") {
  for (bool event : {false, true}) {
    virtiotest::Harness h(1, 128, true, event);
    REQUIRE(h.driver.bring_up().ok);
    // 32 single-request batches (fio's iodepth_batch 1) before the device pops any.
    for (int i = 0; i < 32; ++i) {
      REQUIRE(h.driver.submit(0, read_at(uint64_t(i))) >= 0);
      h.driver.kick(0);
    }
    h.run_device();
    REQUIRE(h.backend.size() == 32);
    // The backend finishes all 32 before the guest takes its interrupt.
    h.complete_backend();
    const auto done = h.run_driver_interrupts(0);
    INFO("event_idx " << event);
    CHECK(done.size() == 32);
    const auto& c = h.driver.counters(0);
    const auto& d = h.device.counters();
    check_invariant(c);
    CHECK(c.updates == 32);
    if (event) {
      // avail_event stayed 0 until the device popped: only the first kick is due.
      CHECK(c.mmio == 1);
      CHECK(c.suppressed == 31);
      CHECK(c.updates_with_dbbuf == 32);
      // used_event stayed 0 until the driver ran: only the first entry notifies.
      CHECK(d.interrupts == 1);
      CHECK(d.interrupts_suppressed == 31);
      CHECK(c.interrupts == 1);
      CHECK(c.spurious_interrupts == 0);
      // handle_queue's pops wrote avail_event 32 times, set_notification twice (off, on).
      CHECK(d.avail_event_writes == 34);
    } else {
      // Without EVENT_IDX the device's NO_NOTIFY flag is clear while it is
      // idle, and NO_INTERRUPT is clear while the driver waits.
      CHECK(c.mmio == 32);
      CHECK(c.suppressed == 0);
      CHECK(c.updates_with_dbbuf == 0);
      CHECK(d.interrupts == 32);
      CHECK(d.interrupts_suppressed == 0);
      // The first interrupt consumes all 32: the other 31 find nothing (IRQ_NONE).
      CHECK(c.interrupts == 1);
      CHECK(c.spurious_interrupts == 31);
      CHECK(d.avail_event_writes == 0);
    }
    CHECK(d.notifies == c.mmio);
    CHECK(h.driver.outstanding(0) == 0);
  }
}

TEST_CASE("without EVENT_IDX a kick while the device has NO_NOTIFY set is suppressed") {
  virtiotest::Harness h(1, 16, true, false);
  REQUIRE(h.driver.bring_up().ok);
  h.device.queue(0).set_notification(false);  // the device is popping (virtio_blk_handle_vq)
  REQUIRE(h.driver.submit(0, read_at(0)) >= 0);
  const auto u = h.driver.kick(0);
  CHECK(u.suppressed);
  CHECK_FALSE(u.mmio);
  h.device.queue(0).set_notification(true);
  REQUIRE(h.driver.submit(0, read_at(1)) >= 0);
  CHECK(h.driver.kick(0).mmio);
  h.run_device();
  CHECK(h.backend.size() == 2);  // the re-check after re-enabling finds both
}

TEST_CASE("interrupts re-enabled with used_event: a completion after the driver ran notifies again") {
  virtiotest::Harness h(1, 64, true, true);
  REQUIRE(h.driver.bring_up().ok);
  for (int i = 0; i < 4; ++i) REQUIRE(h.driver.submit(0, read_at(uint64_t(i))) >= 0);
  h.driver.kick(0);
  h.run_device();
  h.complete_backend(2);  // entries 0, 1: the first notifies, the second is held back
  CHECK(h.run_driver_interrupts(0).size() == 2);
  // The driver left used_event = 2: entry 2 notifies, entry 3 does not.
  CHECK(ld16(h.mem.data() + h.driver.vq(0).ring().used_event()) == 2);
  h.complete_backend(2);
  CHECK(h.device.counters().interrupts == 2);
  CHECK(h.device.counters().interrupts_suppressed == 2);
  CHECK(h.run_driver_interrupts(0).size() == 2);
}

TEST_CASE("requests outside the disk or of an unknown type complete with IOERR / UNSUPP") {
  virtiotest::Harness h(1, 16, true, true);
  REQUIRE(h.driver.bring_up().ok);
  REQUIRE(h.driver.submit(0, read_at((1u << 20) - 4)) >= 0);  // 8 sectors, 4 past the end
  h.driver.kick(0);
  h.run_device();
  CHECK(h.backend.empty());
  auto done = h.run_driver_interrupts(0);
  REQUIRE(done.size() == 1);
  CHECK(done[0].status == BLK_S_IOERR);
  const int32_t tag = h.driver.submit(0, read_at(0));
  REQUIRE(tag >= 0);
  st32(h.mem.data() + h.driver.header_addr(0, uint32_t(tag)), 77);  // no such request type
  h.driver.kick(0);
  h.run_device();
  done = h.run_driver_interrupts(0);
  REQUIRE(done.size() == 1);
  CHECK(done[0].status == BLK_S_UNSUPP);
  CHECK_FALSE(h.device.broken());
}
