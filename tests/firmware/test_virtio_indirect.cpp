// VIRTIO_RING_F_INDIRECT_DESC (virtio 1.1 section 2.7.5.3 "Indirect
// Descriptors"): the guest side as Linux 6.1 virtqueue_add_split builds it
// (drivers/virtio/virtio_ring.c: one ring descriptor pointing at a table of
// the request's header, data and status), the device side as QEMU's
// hw/virtio/virtio.c virtqueue_split_pop walks it, with its checks (table
// length a nonzero multiple of 16, mappable, no nested table) breaking the
// device through virtio_error().
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "virtio_test_env.h"

using namespace nvmesim::fw;
using namespace nvmesim::fw::virtio;
namespace nvme = nvmesim::nvme;

namespace {

IoSpec io(uint8_t opcode, uint32_t nlb) {
  IoSpec s;
  s.opcode = opcode;
  s.nlb = nlb;
  return s;
}

// One struct virtq_desc as section 2.7.5 lays it out: le64 addr, le32 len,
// le16 flags, le16 next, written byte by byte.
void put_desc(std::vector<uint8_t>& b, uint64_t addr, uint32_t len, uint16_t flags, uint16_t next) {
  for (int i = 0; i < 8; ++i) b.push_back(uint8_t(addr >> (8 * i)));
  for (int i = 0; i < 4; ++i) b.push_back(uint8_t(len >> (8 * i)));
  b.push_back(uint8_t(flags));
  b.push_back(uint8_t(flags >> 8));
  b.push_back(uint8_t(next));
  b.push_back(uint8_t(next >> 8));
}

std::vector<uint8_t> bytes_at(virtiotest::Harness& h, uint64_t addr, size_t n) {
  return std::vector<uint8_t>(h.mem.begin() + long(addr), h.mem.begin() + long(addr + n));
}

// Requests accepted on a fresh queue of `size` descriptors until -ENOSPC.
unsigned fill(bool indirect, uint16_t size) {
  virtiotest::Harness h(1, size, true, true, indirect);
  REQUIRE(h.driver.bring_up().ok);
  CHECK(h.driver.indirect_desc() == indirect);
  unsigned n = 0;
  while (h.driver.submit(0, io(nvme::io::READ, 8)) >= 0) ++n;
  return n;
}

}  // namespace

TEST_CASE("virtio indirect: negotiated when both sides want it, depth = queue size as virtblk_probe sets it") {
  virtiotest::Harness on(1, 16, true, true, true);
  const VirtioBlkBringUp b = on.driver.bring_up();
  REQUIRE(b.ok);
  CHECK((b.features & bit(F_RING_INDIRECT_DESC)) != 0);
  CHECK(b.queue_depth == 16);
  virtiotest::Harness off(1, 16, true, true, false);
  const VirtioBlkBringUp c = off.driver.bring_up();
  REQUIRE(c.ok);
  CHECK((c.features & bit(F_RING_INDIRECT_DESC)) == 0);
  CHECK(c.queue_depth == 8);
}

TEST_CASE("virtio indirect: a read's table and ring descriptor, byte by byte") {
  virtiotest::Harness h(1, 16, true, true, true);
  REQUIRE(h.driver.bring_up().ok);
  const int32_t tag = h.driver.submit(0, io(nvme::io::READ, 8));
  REQUIRE(tag >= 0);
  const SplitRing& r = h.driver.vq(0).ring();
  const uint16_t head = ld16(h.mem.data() + r.avail_ring(0));
  CHECK(head == 0);
  const uint64_t table = h.driver.indirect_table(0, uint32_t(tag));
  const uint64_t hdr = h.driver.header_addr(0, uint32_t(tag));
  // alloc_indirect_split: next = i + 1 in every entry (the last one's too).
  std::vector<uint8_t> want;
  put_desc(want, hdr, 16, DESC_F_NEXT, 1);
  put_desc(want, h.driver.data_buffer(0, uint32_t(tag)), 4096, DESC_F_NEXT | DESC_F_WRITE, 2);
  put_desc(want, hdr + 16, 1, DESC_F_WRITE, 3);
  CHECK(bytes_at(h, table, 48) == want);
  // The ring holds one descriptor: the table, flags INDIRECT, next the free list's.
  std::vector<uint8_t> ring_desc;
  put_desc(ring_desc, table, 48, DESC_F_INDIRECT, 1);
  CHECK(bytes_at(h, r.desc_at(head), 16) == ring_desc);
  CHECK(h.driver.vq(0).num_free() == 15);
}

TEST_CASE("virtio indirect: a write's data is device-readable, a flush's table has two entries") {
  virtiotest::Harness h(1, 16, true, true, true);
  REQUIRE(h.driver.bring_up().ok);
  const int32_t w = h.driver.submit(0, io(nvme::io::WRITE, 8));
  const int32_t f = h.driver.submit(0, io(nvme::io::FLUSH, 0));
  REQUIRE(w >= 0);
  REQUIRE(f >= 0);
  const SplitRing& r = h.driver.vq(0).ring();
  std::vector<uint8_t> want_w;
  const uint64_t hw = h.driver.header_addr(0, uint32_t(w));
  put_desc(want_w, hw, 16, DESC_F_NEXT, 1);
  put_desc(want_w, h.driver.data_buffer(0, uint32_t(w)), 4096, DESC_F_NEXT, 2);
  put_desc(want_w, hw + 16, 1, DESC_F_WRITE, 3);
  CHECK(bytes_at(h, h.driver.indirect_table(0, uint32_t(w)), 48) == want_w);
  std::vector<uint8_t> want_f;
  const uint64_t hf = h.driver.header_addr(0, uint32_t(f));
  put_desc(want_f, hf, 16, DESC_F_NEXT, 1);
  put_desc(want_f, hf + 16, 1, DESC_F_WRITE, 2);
  CHECK(bytes_at(h, h.driver.indirect_table(0, uint32_t(f)), 32) == want_f);
  std::vector<uint8_t> ring_f;
  put_desc(ring_f, h.driver.indirect_table(0, uint32_t(f)), 32, DESC_F_INDIRECT, 2);
  CHECK(bytes_at(h, r.desc_at(1), 16) == ring_f);
  CHECK(h.driver.vq(0).num_free() == 14);
}

TEST_CASE("virtio indirect: the device pops the table's buffers and the request completes") {
  virtiotest::Harness h(1, 16, true, true, true);
  REQUIRE(h.driver.bring_up().ok);
  const int32_t tag = h.driver.submit(0, io(nvme::io::READ, 8));
  REQUIRE(tag >= 0);
  REQUIRE(h.driver.kick(0).mmio);
  h.run_device();
  REQUIRE(h.backend.size() == 1);
  const VirtqElement& e = h.backend.front().elem;
  REQUIRE(e.out.size() == 1);
  REQUIRE(e.in.size() == 2);
  CHECK(e.out[0].addr == h.driver.header_addr(0, uint32_t(tag)));
  CHECK(e.in[0].addr == h.driver.data_buffer(0, uint32_t(tag)));
  CHECK(e.in[0].len == 4096);
  CHECK(e.in[1].len == 1);
  CHECK(h.backend.front().data_bytes == 4096);
  h.complete_backend();
  const auto done = h.run_driver_interrupts(0);
  REQUIRE(done.size() == 1);
  CHECK(done[0].tag == uint32_t(tag));
  CHECK(done[0].status == BLK_S_OK);
  CHECK(h.driver.vq(0).num_free() == 16);  // the one ring descriptor is back
  CHECK_FALSE(h.device.broken());
}

TEST_CASE("virtio indirect: a queue of N holds floor(N/3) requests without it, N with it") {
  CHECK(fill(false, 16) == 5);
  CHECK(fill(true, 16) == 16);
  CHECK(fill(false, 64) == 21);
  CHECK(fill(true, 64) == 64);
  CHECK(fill(false, 256) == 85);
  CHECK(fill(true, 256) == 256);
}

namespace {
// Publishes one read through an indirect table, lets `corrupt` damage the
// table or its ring descriptor, and runs the device.
void bad_table(const std::function<void(virtiotest::Harness&, uint64_t ring_desc, uint64_t table)>& corrupt,
               const std::string& error) {
  virtiotest::Harness h(1, 16, true, true, true);
  REQUIRE(h.driver.bring_up().ok);
  const int32_t tag = h.driver.submit(0, io(nvme::io::READ, 8));
  REQUIRE(tag >= 0);
  const SplitRing& r = h.driver.vq(0).ring();
  corrupt(h, r.desc_at(ld16(h.mem.data() + r.avail_ring(0))), h.driver.indirect_table(0, uint32_t(tag)));
  REQUIRE(h.driver.kick(0).mmio);
  h.run_device();
  CHECK(h.device.broken());
  CHECK(h.device.error() == error);
  CHECK((h.device.status() & STATUS_DEVICE_NEEDS_RESET) != 0);
  CHECK(h.device.counters().errors == 1);
  CHECK(h.device.counters().requests == 0);
  CHECK(h.backend.empty());
  CHECK(ld16(h.mem.data() + r.used_idx()) == 0);
  CHECK(h.msix_log.empty());
}
}  // namespace

TEST_CASE("virtio indirect: a table length not a multiple of 16 breaks the device") {
  bad_table([](virtiotest::Harness& h, uint64_t d, uint64_t) { st32(h.mem.data() + d + 8, 40); },
            "Invalid size for indirect buffer table");
}

TEST_CASE("virtio indirect: a zero-length table breaks the device") {
  bad_table([](virtiotest::Harness& h, uint64_t d, uint64_t) { st32(h.mem.data() + d + 8, 0); },
            "Invalid size for indirect buffer table");
}

TEST_CASE("virtio indirect: a table outside guest memory breaks the device") {
  bad_table([](virtiotest::Harness& h, uint64_t d, uint64_t) {
    st64(h.mem.data() + d, virtiotest::Harness::MEM_BYTES - 32);  // 48 bytes from 32 before the end
  }, "Cannot map indirect buffer");
}

TEST_CASE("virtio indirect: a table inside a table breaks the device") {
  bad_table([](virtiotest::Harness& h, uint64_t, uint64_t t) {
    st16(h.mem.data() + t + 16 + 12, uint16_t(DESC_F_NEXT | DESC_F_WRITE | DESC_F_INDIRECT));
  }, "Nested indirect descriptor");
}

TEST_CASE("virtio indirect: a next index past the table's end breaks the device") {
  bad_table([](virtiotest::Harness& h, uint64_t, uint64_t t) { st16(h.mem.data() + t + 14, 3); },
            "Desc next is 3");
}

TEST_CASE("virtio indirect: a loop inside the table breaks the device") {
  bad_table([](virtiotest::Harness& h, uint64_t, uint64_t t) {
    st16(h.mem.data() + t + 32 + 12, uint16_t(DESC_F_NEXT | DESC_F_WRITE));
    st16(h.mem.data() + t + 32 + 14, 2);
  }, "Looped descriptor");
}

TEST_CASE("virtio indirect: a table the device did not negotiate breaks it") {
  // The device offers no VIRTIO_RING_F_INDIRECT_DESC; the driver's read is
  // rewritten to point at a table anyway (section 2.7.5.3.1: MUST NOT).
  virtiotest::Harness h(1, 16, true, true, false);
  REQUIRE(h.driver.bring_up().ok);
  REQUIRE(h.driver.submit(0, io(nvme::io::READ, 8)) >= 0);
  const SplitRing& r = h.driver.vq(0).ring();
  uint8_t* d = h.mem.data() + r.desc_at(ld16(h.mem.data() + r.avail_ring(0)));
  st16(d + 12, DESC_F_INDIRECT);
  REQUIRE(h.driver.kick(0).mmio);
  h.run_device();
  CHECK(h.device.broken());
  CHECK(h.device.error() == "Indirect descriptor without VIRTIO_RING_F_INDIRECT_DESC");
}
