// Hostile guest input to the virtio-blk device, answered as QEMU's
// hw/virtio/virtio.c does: virtio_error() marks the device broken and sets
// DEVICE_NEEDS_RESET; nothing more is popped or completed, the run goes on,
// and a device reset brings it back.
#include <catch2/catch.hpp>

#include <cstdint>
#include <functional>
#include <string>

#include "virtio_test_env.h"

using namespace nvmesim::fw;
using namespace nvmesim::fw::virtio;
namespace nvme = nvmesim::nvme;

namespace {
IoSpec read0() {
  IoSpec io;
  io.opcode = nvme::io::READ;
  io.nlb = 8;
  return io;
}

// Submits one read, lets `corrupt` damage the ring, kicks and runs the device.
void hostile(const std::function<void(virtiotest::Harness&, const SplitRing&, uint16_t head)>& corrupt,
             const std::string& error) {
  virtiotest::Harness h(1, 16, true, true);
  REQUIRE(h.driver.bring_up().ok);
  REQUIRE(h.driver.submit(0, read0()) >= 0);
  const SplitRing& r = h.driver.vq(0).ring();
  const uint16_t head = ld16(h.mem.data() + r.avail_ring(0));
  corrupt(h, r, head);
  REQUIRE(h.driver.kick(0).mmio);
  h.run_device();
  CHECK(h.device.broken());
  CHECK(h.device.error() == error);
  CHECK((h.device.status() & STATUS_DEVICE_NEEDS_RESET) != 0);
  CHECK(h.device.counters().errors == 1);
  CHECK(h.backend.empty());
  CHECK(ld16(h.mem.data() + r.used_idx()) == 0);
  CHECK(h.msix_log.empty());
  // The guest goes on: a further request is accepted and kicked, never completed.
  REQUIRE(h.driver.submit(0, read0()) >= 0);
  h.driver.kick(0);
  h.run_device();
  CHECK(h.backend.empty());
  CHECK(h.run_driver_interrupts(0).empty());
  CHECK(h.driver.outstanding(0) == 2);
  // The config-change ISR bit is set; reading the ISR clears it.
  CHECK(h.device.bar_read(VirtioBlkDevice::ISR_OFFSET, 1) == 0x3);
  CHECK(h.device.bar_read(VirtioBlkDevice::ISR_OFFSET, 1) == 0);
  // A reset (bring-up again) clears the broken state and I/O flows.
  REQUIRE(h.driver.bring_up().ok);
  CHECK_FALSE(h.device.broken());
  REQUIRE(h.driver.submit(0, read0()) >= 0);
  h.driver.kick(0);
  h.run_device();
  h.complete_backend();
  CHECK(h.run_driver_interrupts(0).size() == 1);
}
}  // namespace

TEST_CASE("a descriptor loop breaks the device") {
  hostile([](virtiotest::Harness& h, const SplitRing& r, uint16_t head) {
    // The chain's last (writable) descriptor points to itself: the order of
    // readable and writable buffers stays legal, only the count grows.
    uint16_t i = head;
    while (ld16(h.mem.data() + r.desc_at(i) + 12) & DESC_F_NEXT) i = ld16(h.mem.data() + r.desc_at(i) + 14);
    uint8_t* d = h.mem.data() + r.desc_at(i);
    st16(d + 12, uint16_t(ld16(d + 12) | DESC_F_NEXT));
    st16(d + 14, i);
  }, "Looped descriptor");
}

TEST_CASE("an avail entry past the queue size breaks the device") {
  hostile([](virtiotest::Harness& h, const SplitRing& r, uint16_t) {
    st16(h.mem.data() + r.avail_ring(0), 16);
  }, "Guest says index 16 is available");
}

TEST_CASE("a next index past the queue size breaks the device") {
  hostile([](virtiotest::Harness& h, const SplitRing& r, uint16_t head) {
    st16(h.mem.data() + r.desc_at(head) + 14, 40000);
  }, "Desc next is 40000");
}

TEST_CASE("a buffer outside guest memory breaks the device") {
  hostile([](virtiotest::Harness& h, const SplitRing& r, uint16_t head) {
    st64(h.mem.data() + r.desc_at(head), virtiotest::Harness::MEM_BYTES - 8);  // 16 bytes, 8 outside
  }, "virtio: bogus descriptor or out of resources");
}

TEST_CASE("a writable descriptor before a readable one breaks the device") {
  hostile([](virtiotest::Harness& h, const SplitRing& r, uint16_t head) {
    uint8_t* d = h.mem.data() + r.desc_at(head);
    st16(d + 12, uint16_t(ld16(d + 12) | DESC_F_WRITE));  // header writable, then... data writable, status writable
    // Make the data descriptor device-readable after the writable header.
    uint8_t* d1 = h.mem.data() + r.desc_at(ld16(d + 14));
    st16(d1 + 12, uint16_t(ld16(d1 + 12) & ~DESC_F_WRITE));
  }, "Incorrect order for descriptors");
}

TEST_CASE("avail->idx moved past a whole ring breaks the device after the entries it could pop") {
  virtiotest::Harness h(1, 16, true, true);
  REQUIRE(h.driver.bring_up().ok);
  REQUIRE(h.driver.submit(0, read0()) >= 0);
  const SplitRing& r = h.driver.vq(0).ring();
  st16(h.mem.data() + r.avail_idx(), 40);  // 40 entries claimed on a 16-entry ring
  REQUIRE(h.driver.kick(0).mmio);
  h.run_device();
  // QEMU pops until inuse reaches the ring size (the zeroed slots name head 0
  // again), then "Virtqueue size exceeded". Those 16 went to the backend; their
  // completions reach no ring and send no interrupt.
  CHECK(h.device.broken());
  CHECK(h.device.error() == "Virtqueue size exceeded");
  CHECK(h.backend.size() == 16);
  h.complete_backend();
  CHECK(ld16(h.mem.data() + r.used_idx()) == 0);
  CHECK(h.msix_log.empty());
  CHECK(h.device.queue(0).inuse() == 0);
  CHECK(h.run_driver_interrupts(0).empty());
}
