// The fio job's rules on their own (models/guest/fio_pacing.h,
// models/guest/fio_verify.h), against fio's arithmetic written out by hand:
// rate (init.c __setup_rate, backend.c usec_for_io, io_u.c rate_ddir),
// thinktime (backend.c handle_thinktime) and verify=pattern. Their timing
// on a running vCPU is in test_vcpu.cpp.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <vector>

#include <systemc>

#include "nvmesim/models/guest/fio_pacing.h"
#include "nvmesim/models/guest/fio_verify.h"

using namespace nvmesim::models;
using sc_core::SC_US;
using sc_core::sc_time;

namespace {
JobSpec job_4k() {
  JobSpec j;
  j.rw = RwMode::RandRw;
  j.bs = 4096;
  j.size = 1 << 20;
  j.rwmixread = 50;
  return j;
}
}  // namespace

TEST_CASE("fio rate: rate_iops is I/Os per second times the smallest block, one value for both directions",
          "[fio_job]") {
  FioRate r;
  r.setup("", "1000", job_4k());
  CHECK(r.limited());
  CHECK(r.bytes_per_second(0) == 1000 * 4096);
  CHECK(r.bytes_per_second(1) == 1000 * 4096);
  // rate wins over rate_iops; "1m," limits reads only (fio's k, m: 1024s).
  r.setup("1m,", "1000", job_4k());
  CHECK(r.bytes_per_second(0) == 1048576);
  CHECK(r.bytes_per_second(1) == 1000 * 4096);
  FioRate none;
  none.setup("", "", job_4k());
  CHECK_FALSE(none.limited());
}

TEST_CASE("fio rate: usec_for_io, whole seconds and the remainder apart", "[fio_job]") {
  // rate=3000 bytes/s: after 4096 bytes, 1 s + 1096 * 10^6 / 3000 us
  // (365333.3, truncated); after 8192, 2 s + 2192 * 10^6 / 3000 us.
  FioRate r;
  r.setup("3000", "", job_4k());
  r.issued(0, 4096);
  CHECK(r.next_due_us(0) == 1365333);
  CHECK(r.next_due_us(1) == 0);  // each direction counts its own bytes
  r.issued(0, 4096);
  CHECK(r.next_due_us(0) == 2730666);
  r.issued(1, 512);  // 512 * 10^6 / 3000 = 170666.7
  CHECK(r.next_due_us(1) == 170666);
}

TEST_CASE("fio rate: rate_ddir issues a due direction, switches to the other one if due, else waits for the earlier",
          "[fio_job]") {
  FioRate r;
  r.setup("", "1000", job_4k());  // 1000 us per 4 KiB I/O
  r.issued(0, 4096);
  r.issued(0, 4096);  // reads: next due at 2000 us
  r.issued(1, 4096);  // writes: next due at 1000 us
  // A read next, single direction: waits until 2000 us.
  FioRate::Pace p = r.pace(1200, 0, false);
  CHECK(p.wait);
  CHECK(p.dir == 0);
  CHECK(p.wait_us == 800);
  CHECK_FALSE(r.pace(2000, 0, false).wait);
  // Mixed: the write is due, so it goes instead, without waiting.
  p = r.pace(1200, 0, true);
  CHECK_FALSE(p.wait);
  CHECK(p.dir == 1);
  // Mixed, neither due: waits for the earlier one (the write, 1000 us).
  p = r.pace(500, 0, true);
  CHECK(p.wait);
  CHECK(p.dir == 1);
  CHECK(p.wait_us == 500);
  // A tie keeps the chosen direction.
  r.issued(1, 4096);  // writes: 2000 us
  p = r.pace(500, 0, true);
  CHECK(p.dir == 0);
  CHECK(p.wait_us == 1500);
}

TEST_CASE("fio thinktime: every thinktime_blocks I/Os, spin then sleep the rest", "[fio_job]") {
  FioThinktime t(sc_time(100, SC_US), sc_time(30, SC_US), 4);
  CHECK_FALSE(t.due(3));
  CHECK(t.due(4));
  t.taken(4);
  CHECK_FALSE(t.due(7));
  CHECK(t.due(8));
  CHECK(t.spin() == sc_time(30, SC_US));
  CHECK(t.sleep() == sc_time(70, SC_US));
  // A spin longer than the thinktime is cut to it: no sleep.
  const FioThinktime busy(sc_time(100, SC_US), sc_time(250, SC_US), 1);
  CHECK(busy.spin() == sc_time(100, SC_US));
  CHECK(busy.sleep() == sc_time(0, SC_US));
  // thinktime=0: never.
  const FioThinktime off(sc_time(0, SC_US), sc_time(0, SC_US), 1);
  CHECK_FALSE(off.due(1000));
}

FioVerifyConfig pattern_config(uint32_t bs, uint64_t region, uint32_t tags) {
  FioVerifyConfig c;
  c.mode = VerifyMode::Pattern;
  c.bs = bs;
  c.region_bytes = region;
  c.tags = tags;
  return c;
}

TEST_CASE("fio verify: a read of a written block checks the block's pattern", "[fio_job]") {
  FioVerify v(pattern_config(4096, 4 * 4096, 4));  // 4 blocks, 4 tags
  std::vector<uint8_t> written(4096, 0), read(4096, 0xAA);
  // A write to block 2 carries its pattern.
  v.prepare(0, true, 2 * 4096, written.data(), 4096);
  uint64_t w0;
  std::memcpy(&w0, written.data(), 8);
  CHECK(w0 == FioVerify::pattern_word(2, 0));
  CHECK(FioVerify::pattern_word(2, 0) != FioVerify::pattern_word(3, 0));
  // A read issued before that write completed is not checked...
  v.prepare(1, false, 2 * 4096, read.data(), 4096);
  CHECK(read == std::vector<uint8_t>(4096, 0));  // zeroed: stale data cannot pass
  CHECK_FALSE(v.completed(0, true));
  CHECK_FALSE(v.completed(1, false));
  // ...one issued after it is, against the block's pattern.
  v.prepare(2, false, 2 * 4096, read.data(), 4096);
  CHECK(v.completed(2, false));
  CHECK(v.matches(2, written.data()));
  CHECK_FALSE(v.matches(2, read.data()));
  written[4095] ^= 1;
  CHECK_FALSE(v.matches(2, written.data()));
  // A block no write reached is not checked.
  v.prepare(3, false, 0, read.data(), 4096);
  CHECK_FALSE(v.completed(3, false));
}

TEST_CASE("fio verify: the parts of a split I/O carry and check their share of the block's pattern", "[fio_job]") {
  FioVerify v(pattern_config(8192, 2 * 8192, 4));  // 8 KiB I/Os split into two 4 KiB commands
  std::vector<uint8_t> first(4096), second(4096), read0(4096, 0xAA), read1(4096, 0xAA);
  v.prepare(0, true, 8192, first.data(), 4096, 0);
  v.prepare(1, true, 8192, second.data(), 4096, 4096);
  uint64_t w;
  std::memcpy(&w, second.data(), 8);
  CHECK(w == FioVerify::pattern_word(1, 512));  // word 512 of block 1: 4096 bytes in
  std::memcpy(&w, second.data() + 4088, 8);
  CHECK(w == FioVerify::pattern_word(1, 1023));
  CHECK(v.part_bytes(1) == 4096);
  CHECK_FALSE(v.completed(1, true));  // the write's block is written (the job calls it once, at its last part)
  v.prepare(2, false, 8192, read0.data(), 4096, 0);
  v.prepare(3, false, 8192, read1.data(), 4096, 4096);
  CHECK(read0 == std::vector<uint8_t>(4096, 0));
  CHECK(v.completed(2, false));
  CHECK(v.completed(3, false));
  CHECK(v.matches(2, first.data()));
  CHECK(v.matches(3, second.data()));
  CHECK_FALSE(v.matches(3, first.data()));  // each part checks its own half
  CHECK_FALSE(v.matches(2, second.data()));
}
