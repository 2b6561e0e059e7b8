// PRP walking (firmware/nvme/prp.h), directly and through I/O commands.
#include "nvmesim/firmware/nvme/prp.h"
#include "tests/firmware/test_controller_env.h"

using namespace ctltest;

namespace {
struct Walk {
  TestEnv env{4u << 20};
  std::vector<IoRequest::Segment> segs;
  size_t n = 0;
  uint16_t run(uint64_t prp1, uint64_t prp2, uint32_t len, uint32_t page = 4096) {
    const uint16_t st = map_prp(env, prp1, prp2, len, page, segs);
    n = st == 0 ? segs.size() : 0;
    return st;
  }
};
}  // namespace

TEST_CASE("prp: single page, offset, two pages", "[controller][prp]") {
  Walk w;
  REQUIRE(w.run(0x200000, 0, 4096) == 0);
  REQUIRE(w.n == 1);
  CHECK(w.segs[0].addr == 0x200000);
  CHECK(w.segs[0].len == 4096);

  // Offset 0x100: 3840 bytes in PRP1's page, 256 in PRP2's.
  REQUIRE(w.run(0x200100, 0x300000, 4096) == 0);
  REQUIRE(w.n == 2);
  CHECK(w.segs[0].addr == 0x200100);
  CHECK(w.segs[0].len == 3840);
  CHECK(w.segs[1].addr == 0x300000);
  CHECK(w.segs[1].len == 256);

  // Small transfer inside PRP1's page: PRP2 ignored (even if garbage).
  REQUIRE(w.run(0x200100, 0x123, 512) == 0);
  REQUIRE(w.n == 1);
  CHECK(w.segs[0].len == 512);

  REQUIRE(w.run(0x200000, 0x300000, 8192) == 0);
  REQUIRE(w.n == 2);
  CHECK(w.segs[1].addr == 0x300000);
  CHECK(w.segs[1].len == 4096);

  REQUIRE(w.run(0x200000, 0x300000, 0) == 0);
  CHECK(w.n == 0);
}

TEST_CASE("prp: list spanning pages with chaining", "[controller][prp]") {
  Walk w;
  // 4 KiB in PRP1 + 3 pages through a list whose first page (PRP2 at
  // offset 0xFF0) holds 2 entries: one data pointer, then the chain.
  const uint64_t list1 = 0x100FF0, list2 = 0x180000;
  w.env.w64(list1, 0x210000);
  w.env.w64(list1 + 8, list2);
  w.env.w64(list2, 0x220000);
  w.env.w64(list2 + 8, 0x230000);
  w.env.w64(list2 + 16, 0xDEAD000);  // beyond the transfer: never read as data
  REQUIRE(w.run(0x200000, list1, 4 * 4096 - 512) == 0);
  REQUIRE(w.n == 4);
  CHECK(w.segs[0].addr == 0x200000);
  CHECK(w.segs[0].len == 4096);
  CHECK(w.segs[1].addr == 0x210000);
  CHECK(w.segs[1].len == 4096);
  CHECK(w.segs[2].addr == 0x220000);
  CHECK(w.segs[2].len == 4096);
  CHECK(w.segs[3].addr == 0x230000);
  CHECK(w.segs[3].len == 4096 - 512);

  // A list that fits its page exactly does not chain: 1 + 2 entries at 0xFF0.
  w.env.w64(list1 + 8, 0x240000);
  REQUIRE(w.run(0x200000, list1, 3 * 4096) == 0);
  REQUIRE(w.n == 3);
  CHECK(w.segs[2].addr == 0x240000);

  // Page-aligned list with many entries (32 pages), in one list page.
  const uint64_t list3 = 0x190000;
  for (int i = 0; i < 32; ++i) w.env.w64(list3 + 8 * i, 0x300000 + 0x1000 * uint64_t(i));
  REQUIRE(w.run(0x200800, list3, 32 * 4096) == 0);
  REQUIRE(w.n == 33);
  CHECK(w.segs[0].len == 2048);
  CHECK(w.segs[32].addr == 0x300000 + 0x1000 * 31);
  CHECK(w.segs[32].len == 2048);
}

TEST_CASE("prp: offsets, zero pointers and unreadable lists", "[controller][prp]") {
  Walk w;
  CHECK(w.run(0x200002, 0, 512) == 0x4013);             // PRP1 not dword aligned, DNR
  CHECK(w.run(0x200000, 0x300200, 8192) == 0x4013);     // PRP2 data pointer with offset
  CHECK(w.run(0x200000, 0x100002, 3 * 4096) == 0x4013); // list pointer not dword aligned
  w.env.w64(0x100000, 0x210000);
  w.env.w64(0x100008, 0x220010);                        // list entry with offset
  CHECK(w.run(0x200000, 0x100000, 3 * 4096) == 0x4013);
  w.env.w64(0x100008, 0);                               // zero entry
  CHECK(w.run(0x200000, 0x100000, 3 * 4096) == 0x4002);
  CHECK(w.run(0, 0, 512) == 0x4002);                    // zero PRP1
  CHECK(w.run(0x200000, 0, 8192) == 0x4002);            // zero PRP2
  // List outside guest memory (4 MiB): Data Transfer Error.
  CHECK(w.run(0x200000, 0x10000000, 3 * 4096) == 0x4004);
  // Chain pointer with an offset.
  w.env.w64(0x100FF0, 0x210000);
  w.env.w64(0x100FF8, 0x180010);
  CHECK(w.run(0x200000, 0x100FF0, 4 * 4096) == 0x4013);
}

TEST_CASE("prp: I/O commands hand the segments to the backend", "[controller][prp]") {
  Harness h;
  h.enable();
  h.create_pair(1, 16, 16);
  const uint64_t list = 0x300000;
  h.env.w64(list, 0x211000);
  h.env.w64(list + 8, 0x212000);
  // 24 LBAs of 512 = 12 KiB from PRP1 at 0x210000: PRP1 + list of 2.
  const uint16_t cid = h.submit_io(1, Harness::read_cmd(100, 24, 0x210000, list));
  REQUIRE(h.ctrl.process_sq(1, 8) == 1);
  REQUIRE(h.env.submitted.size() == 1);
  const IoRequest& r = h.env.submitted[0];
  CHECK(r.sqid == 1);
  CHECK(r.cid == cid);
  CHECK(r.opcode == nvme::io::READ);
  CHECK(r.nsid == 1);
  CHECK(r.slba == 100);
  CHECK(r.nlb == 24);
  CHECK(r.bytes == 12288);
  REQUIRE(r.segment_count == 3);
  CHECK(r.segments[0].addr == 0x210000);
  CHECK(r.segments[1].addr == 0x211000);
  CHECK(r.segments[2].addr == 0x212000);
  CHECK(r.segments[2].len == 4096);
  CHECK(h.ctrl.outstanding_io() == 1);

  // Bad offset and unreadable list complete at once, posted by process_sq.
  h.submit_io(1, Harness::read_cmd(0, 24, 0x210000, 0x300FFC));  // list: no room for an entry
  h.submit_io(1, Harness::read_cmd(0, 8, 0x210800, 0x230100));                // PRP2 offset
  h.submit_io(1, Harness::read_cmd(0, 24, 0x210000, 0x7F0000000ull));         // list unreadable
  h.env.msix_log.clear();
  REQUIRE(h.ctrl.process_sq(1, 8) == 3);
  CHECK(h.env.submitted.size() == 1);
  CHECK(h.env.msix_log.size() == 1);
  auto e0 = h.io_cqe(1, 0);
  auto e1 = h.io_cqe(1, 1);
  auto e2 = h.io_cqe(1, 2);
  // 0x300FFC: entries in page = 0, so no room for even one entry -> PRP Offset Invalid.
  CHECK(scode(e0.status) == 0x13);
  CHECK(scode(e1.status) == 0x13);
  CHECK(scode(e2.status) == 0x04);
  CHECK(sct(e2.status) == 0);
}
