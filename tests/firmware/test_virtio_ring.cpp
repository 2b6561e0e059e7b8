// The split virtqueue's layout and EVENT_IDX rule, checked against the virtio
// 1.1 specification's own statements (OASIS, sections 2.7 and 2.7.7.2 /
// 2.7.10), never against the formula under test.
#include <catch2/catch.hpp>

#include <cstdint>

#include "nvmesim/firmware/nvme/eventidx.h"
#include "nvmesim/firmware/virtio/virtio_spec.h"
#include "virtio_test_env.h"

using namespace nvmesim::fw;
using namespace nvmesim::fw::virtio;
namespace nvme = nvmesim::nvme;

// Section 2.7.7.2: "If the idx field in the used ring was equal to
// used_event, the device MUST send a notification" - i.e. one of the
// entries placed, at free-running indices old, old+1, ..., new-1, was at
// used_event. Walked one index at a time.
static bool spec_notify(uint16_t event, uint16_t new_idx, uint16_t old_idx) {
  for (uint16_t i = old_idx; i != new_idx; ++i)
    if (i == event) return true;
  return false;
}

TEST_CASE("vring_need_event equals the spec's rule for every batch up to the ring size, across the u16 wrap") {
  for (uint32_t num : {1u, 2u, 4u, 8u, 16u}) {
    uint64_t checks = 0, mismatches = 0, notifies = 0;
    for (uint32_t old32 = 0; old32 < 65536; ++old32) {
      const uint16_t old_idx = uint16_t(old32);
      for (uint32_t batch = 0; batch <= num; ++batch) {
        const uint16_t new_idx = uint16_t(old_idx + batch);
        // Every event near the batch, and one half a lap away.
        for (int32_t k = -int32_t(num) - 2; k <= int32_t(2 * num) + 2; ++k) {
          const uint16_t event = uint16_t(old_idx + k);
          const bool want = spec_notify(event, new_idx, old_idx);
          mismatches += need_event_linux(event, new_idx, old_idx) != want;
          notifies += want;
          ++checks;
        }
        const uint16_t far = uint16_t(old_idx + 0x8000);
        mismatches += need_event_linux(far, new_idx, old_idx) != spec_notify(far, new_idx, old_idx);
        ++checks;
      }
    }
    INFO("ring size " << num);
    CHECK(mismatches == 0);
    // Each batch of b entries notifies for exactly b of the events tried.
    CHECK(notifies == 65536ull * (num * (num + 1) / 2));
    CHECK(checks == 65536ull * (num + 1) * (3 * num + 6));
  }
}

TEST_CASE("split ring parts sit where section 2.7 puts them") {
  SplitRing r;
  r.num = 4;
  r.desc = 0x1000;
  r.avail = 0x1040;
  r.used = 0x2000;
  CHECK(SplitRing::desc_bytes(4) == 64);
  CHECK(SplitRing::avail_bytes(4) == 14);  // flags, idx, ring[4], used_event
  CHECK(SplitRing::used_bytes(4) == 38);   // flags, idx, ring[4] of 8 bytes, avail_event
  CHECK(r.desc_at(3) == 0x1030);
  CHECK(r.avail_flags() == 0x1040);
  CHECK(r.avail_idx() == 0x1042);
  CHECK(r.avail_ring(0) == 0x1044);
  CHECK(r.avail_ring(3) == 0x104A);
  CHECK(r.used_event() == 0x104C);
  CHECK(r.used_flags() == 0x2000);
  CHECK(r.used_idx() == 0x2002);
  CHECK(r.used_ring(3) == 0x201C);
  CHECK(r.avail_event() == 0x2024);
  CHECK(r.slot(uint16_t(65535)) == 3);
  CHECK(valid_queue_size(32768));
  CHECK_FALSE(valid_queue_size(65536));
  CHECK_FALSE(valid_queue_size(96));
}

TEST_CASE("a read request's chain and avail entry, byte by byte") {
  virtiotest::Harness h(1, 4, true, true);
  REQUIRE(h.driver.bring_up().ok);
  const SplitRing& r = h.driver.vq(0).ring();
  IoSpec io;
  io.opcode = nvme::io::READ;
  io.slba = 0x1234;
  io.nlb = 8;
  REQUIRE(h.driver.submit(0, io) >= 0);
  const uint64_t hdr = h.driver.header_addr(0, 0);
  const uint64_t data = h.driver.data_buffer(0, 0);
  auto at = [&](uint64_t a) { return h.mem.data() + a; };
  // Header: type IN (0), reserved, sector 0x1234 (512-byte blocks).
  CHECK(ld32(at(hdr)) == BLK_T_IN);
  CHECK(ld64(at(hdr + 8)) == 0x1234);
  // desc[0]: header, device-readable, chained to 1.
  CHECK(ld64(at(r.desc_at(0))) == hdr);
  CHECK(ld32(at(r.desc_at(0) + 8)) == 16);
  CHECK(ld16(at(r.desc_at(0) + 12)) == DESC_F_NEXT);
  CHECK(ld16(at(r.desc_at(0) + 14)) == 1);
  // desc[1]: 4096 data bytes, device-writable, chained to 2.
  CHECK(ld64(at(r.desc_at(1))) == data);
  CHECK(ld32(at(r.desc_at(1) + 8)) == 4096);
  CHECK(ld16(at(r.desc_at(1) + 12)) == (DESC_F_NEXT | DESC_F_WRITE));
  CHECK(ld16(at(r.desc_at(1) + 14)) == 2);
  // desc[2]: the status byte, device-writable, end of chain.
  CHECK(ld64(at(r.desc_at(2))) == hdr + 16);
  CHECK(ld32(at(r.desc_at(2) + 8)) == 1);
  CHECK(ld16(at(r.desc_at(2) + 12)) == DESC_F_WRITE);
  // avail: ring[0] = head 0, idx 1, flags 0.
  CHECK(ld16(at(r.avail_ring(0))) == 0);
  CHECK(ld16(at(r.avail_idx())) == 1);
  CHECK(ld16(at(r.avail_flags())) == 0);
  CHECK(h.driver.vq(0).num_free() == 1);
  // A second read needs three descriptors: -ENOSPC with one free.
  CHECK(h.driver.submit(0, io) == -1);
  // The device pops it, sets avail_event to 1, completes it: used[0] = {0, 4097}.
  h.driver.kick(0);
  h.run_device();
  CHECK(ld16(at(r.avail_event())) == 1);
  REQUIRE(h.backend.size() == 1);
  CHECK(h.backend[0].sector == 0x1234);
  CHECK(h.backend[0].data_bytes == 4096);
  h.complete_backend();
  CHECK(ld32(at(r.used_ring(0))) == 0);
  CHECK(ld32(at(r.used_ring(0) + 4)) == 4097);
  CHECK(ld16(at(r.used_idx())) == 1);
  CHECK(at(hdr + 16)[0] == BLK_S_OK);
  auto done = h.run_driver_interrupts(0);
  REQUIRE(done.size() == 1);
  CHECK(done[0].tag == 0);
  CHECK(done[0].status == BLK_S_OK);
  CHECK(h.driver.vq(0).num_free() == 4);
  // enable_cb_prepare left used_event at the next entry.
  CHECK(ld16(at(r.used_event())) == 1);
}
