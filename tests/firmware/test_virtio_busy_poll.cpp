// vhost-style busy polling, the firmware half: the notification switch of a
// polling device (Linux drivers/vhost/vhost.c vhost_disable_notify /
// vhost_enable_notify; virtio 1.x sections 2.7.7 and 2.7.10) seen from the
// guest's kick decisions, and the poll loop's decisions
// (firmware/virtio/virtqueue_busy_poll.h, drivers/vhost/net.c vhost_net_busy_poll).
#include <catch2/catch.hpp>

#include <cstdint>

#include "nvmesim/firmware/virtio/virtqueue_busy_poll.h"
#include "virtio_test_env.h"

using namespace nvmesim::fw;
using namespace nvmesim::fw::virtio;
namespace nvme = nvmesim::nvme;

using virtiotest::read_at;

namespace {

// The guest publishes one request and decides its kick.
DoorbellUpdate submit_and_kick(virtiotest::Harness& h, uint64_t lba) {
  REQUIRE(h.driver.submit(0, read_at(lba)) >= 0);
  return h.driver.kick(0);
}

uint16_t avail_event(virtiotest::Harness& h) { return ld16(h.mem.data() + h.device.queue(0).ring().avail_event()); }
uint16_t used_flags(virtiotest::Harness& h) { return ld16(h.mem.data() + h.device.queue(0).ring().used_flags()); }

}  // namespace

TEST_CASE("busy poll, EVENT_IDX: a polled queue's pops leave avail_event behind, so one kick per enable") {
  virtiotest::Harness h(1, 64, true, true, false, /*vhost_notify=*/true);
  REQUIRE(h.driver.bring_up().ok);
  REQUIRE(h.driver.event_idx());
  std::vector<VirtioBlkRequest> popped;

  // avail_event is 0 (rings zeroed): the first request, at index 0, is due a kick.
  CHECK(submit_and_kick(h, 0).mmio);
  h.device.handle_polled(0, popped);
  CHECK(popped.size() == 1);
  // vhost_get_vq_desc writes no avail_event (QEMU's pop would write 1 here).
  CHECK(h.device.counters().avail_event_writes == 0);
  CHECK(avail_event(h) == 0);
  CHECK(h.device.avail_empty(0));

  // While polled: old 1, new 2, avail_event 0 is not in [1, 2): no kick.
  for (uint64_t i = 1; i <= 5; ++i) {
    const DoorbellUpdate u = submit_and_kick(h, i);
    CHECK(u.suppressed);
    CHECK(u.eventidx == 0);
    CHECK_FALSE(h.device.avail_empty(0));  // the poll sees it
    h.device.handle_polled(0, popped);
    CHECK(popped.size() == 1);
  }
  CHECK(h.device.counters().avail_event_writes == 0);

  // The window expires: vhost_enable_notify writes avail_event = 6 (the avail
  // index last read) and finds nothing new.
  CHECK_FALSE(h.device.reenable(0));
  CHECK(avail_event(h) == 6);
  CHECK(h.device.counters().avail_event_writes == 1);
  // Notifications are on again: the request at index 6 kicks.
  CHECK(submit_and_kick(h, 6).mmio);
  CHECK(h.driver.counters(0).mmio == 2);
  CHECK(h.driver.counters(0).suppressed == 5);
  CHECK(h.device.counters().notifies == 2);
}

TEST_CASE("busy poll, EVENT_IDX: the re-enable finds a request published while notifications were off") {
  virtiotest::Harness h(1, 64, true, true, false, true);
  REQUIRE(h.driver.bring_up().ok);
  std::vector<VirtioBlkRequest> popped;
  CHECK(submit_and_kick(h, 0).mmio);
  h.device.handle_polled(0, popped);
  // Published after the last look, before the re-enable: no kick...
  CHECK(submit_and_kick(h, 1).suppressed);
  // ...so the re-check after the switch must find it (vhost_enable_notify returns true).
  CHECK(h.device.reenable(0));
  h.device.handle_polled(0, popped);
  CHECK(popped.size() == 1);
  CHECK(h.device.avail_empty(0));
  CHECK(h.device.counters().requests == 2);
}

TEST_CASE("busy poll without EVENT_IDX: NO_NOTIFY stays set while polled, cleared by the re-enable") {
  virtiotest::Harness h(1, 64, false, false, false, true);
  REQUIRE(h.driver.bring_up().ok);
  REQUIRE_FALSE(h.driver.event_idx());
  std::vector<VirtioBlkRequest> popped;
  CHECK(submit_and_kick(h, 0).mmio);
  h.device.handle_polled(0, popped);
  CHECK(used_flags(h) == USED_F_NO_NOTIFY);  // vhost_disable_notify, left set
  for (uint64_t i = 1; i <= 3; ++i) {
    CHECK(submit_and_kick(h, i).suppressed);
    h.device.handle_polled(0, popped);
    CHECK(popped.size() == 1);
  }
  CHECK(used_flags(h) == USED_F_NO_NOTIFY);
  CHECK_FALSE(h.device.reenable(0));
  CHECK(used_flags(h) == 0);
  CHECK(submit_and_kick(h, 4).mmio);
  // Published while the flag was set, then the re-enable's re-check finds it.
  h.device.handle_polled(0, popped);
  CHECK(submit_and_kick(h, 5).suppressed);
  CHECK(h.device.reenable(0));
  CHECK(h.driver.counters(0).mmio == 2);
  CHECK(h.driver.counters(0).suppressed == 4);
  CHECK(h.device.counters().avail_event_writes == 0);
}

TEST_CASE("busy poll decisions: the window first, then other work, then the avail rings") {
  VirtqueueBusyPoll p(5000);
  REQUIRE(p.enabled());
  CHECK_FALSE(VirtqueueBusyPoll().enabled());
  p.add(3);
  p.add(1);
  p.add(3);  // once
  CHECK(p.polled() == std::vector<uint16_t>{3, 1});
  CHECK(p.open(100) == 5100);
  CHECK(p.deadline_ns() == 5100);
  using Step = VirtqueueBusyPoll::Step;
  int looks = 0;
  auto found = [&] { ++looks; return true; };
  auto nothing = [&] { ++looks; return false; };
  CHECK(p.step(100, false, nothing) == Step::Spin);
  CHECK(p.step(5099, false, found) == Step::Found);
  CHECK(looks == 2);
  // Other work on the thread breaks the window without a look at the rings.
  CHECK(p.step(200, true, found) == Step::Interrupted);
  // At the deadline the window is over, whatever else is true.
  CHECK(p.step(5100, true, found) == Step::Expired);
  CHECK(p.step(9000, false, nothing) == Step::Expired);
  CHECK(looks == 2);
  // A re-opened window runs its full length from the new start.
  CHECK(p.open(6000) == 11000);
  CHECK(p.step(10999, false, nothing) == Step::Spin);
  p.drop(3);
  CHECK(p.polled() == std::vector<uint16_t>{1});
  CHECK(p.polled(1));
  CHECK_FALSE(p.polled(3));
  p.clear();
  CHECK(p.polled().empty());
}

// QEMU's AioContext polling (util/aio-posix.c poll_set_started; hw/virtio/virtio.c
// virtio_queue_host_notifier_aio_poll_begin / _poll_end, virtio_queue_split_set_notification):
// without EVENT_IDX the switch is VRING_USED_F_NO_NOTIFY, set at poll begin and
// cleared at poll end, after which one more look at avail->idx finds what was
// published meanwhile.
TEST_CASE("aio poll without EVENT_IDX: poll begin silences the guest, poll end re-checks") {
  virtiotest::Harness h(1, 64, false, false, false);
  REQUIRE(h.driver.bring_up().ok);
  std::vector<VirtioBlkRequest> popped;
  CHECK(submit_and_kick(h, 0).mmio);  // notifications on: a kick
  h.device.handle_queue(0, popped);
  CHECK(used_flags(h) == 0);  // the handler's own switch ends on

  h.device.poll_begin(0);
  CHECK_FALSE(h.device.queue(0).notification());
  CHECK(used_flags(h) == USED_F_NO_NOTIFY);
  for (uint64_t i = 1; i <= 3; ++i) {
    CHECK(submit_and_kick(h, i).suppressed);  // the poll finds it instead
    CHECK_FALSE(h.device.avail_empty(0));
    h.device.handle_queue(0, popped);  // virtio_blk_handle_vq leaves them off in poll mode
    CHECK(popped.size() == 1);
    CHECK(used_flags(h) == USED_F_NO_NOTIFY);
  }
  // Poll end with nothing new: on again, nothing found.
  CHECK_FALSE(h.device.poll_end(0));
  CHECK(h.device.queue(0).notification());
  CHECK(used_flags(h) == 0);
  CHECK(submit_and_kick(h, 4).mmio);
  h.device.handle_queue(0, popped);

  // Published while off, then poll end: the last io_poll finds it.
  h.device.poll_begin(0);
  CHECK(submit_and_kick(h, 5).suppressed);
  CHECK(h.device.poll_end(0));
  h.device.handle_queue(0, popped);
  CHECK(popped.size() == 1);

  const auto& k = h.device.aio_poll_counters();
  CHECK(k.poll_begins == 2);
  CHECK(k.poll_ends == 2);
  CHECK(k.poll_end_found == 1);
  CHECK(k.notifies_while_off == 0);
  // Exact: every kick decision is an MMIO kick or a suppressed one, and the
  // device saw each MMIO kick.
  CHECK(h.driver.counters(0).mmio == 2);
  CHECK(h.driver.counters(0).suppressed == 4);
  CHECK(uint64_t(h.driver.counters(0).updates) == uint64_t(h.driver.counters(0).mmio) + uint64_t(h.driver.counters(0).suppressed));
  CHECK(h.device.counters().notifies == h.driver.counters(0).mmio);
}

// With EVENT_IDX, virtio_queue_split_set_notification stores avail_event =
// avail->idx for both switches: poll begin does not silence a guest that
// publishes on a drained ring (its new entry crosses avail_event).
TEST_CASE("aio poll with EVENT_IDX: poll begin stores avail_event = avail->idx and the guest still kicks") {
  virtiotest::Harness h(1, 64, true, true, false);
  REQUIRE(h.driver.bring_up().ok);
  REQUIRE(h.driver.event_idx());
  std::vector<VirtioBlkRequest> popped;
  CHECK(submit_and_kick(h, 0).mmio);
  h.device.handle_queue(0, popped);
  h.device.poll_begin(0);
  CHECK_FALSE(h.device.queue(0).notification());
  CHECK(avail_event(h) == 1);
  CHECK(submit_and_kick(h, 1).mmio);  // old 1, new 2, avail_event 1 in [1, 2)
  h.device.handle_queue(0, popped);  // the pop stores avail_event = 2
  CHECK(avail_event(h) == 2);
  CHECK_FALSE(h.device.poll_end(0));
  CHECK(h.device.aio_poll_counters().notifies_while_off == 1);
  CHECK(h.device.counters().notifies == 2);
}
