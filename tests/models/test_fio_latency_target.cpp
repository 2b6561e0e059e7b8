// fio's latency_target search on its own (models/guest/fio_latency_target.h)
// against io_u.c's rule worked out by hand: lat_target_init starts at depth
// 1; lat_target_success doubles while latency_qd_high is still iodepth, then
// bisects (qd + high) / 2; __lat_target_failed sets high = qd and goes to
// (qd + low) / 2; a success that leaves the depth unchanged runs one final
// window, and the next ends the job (latency_run: it never ends).
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "nvmesim/models/guest/fio_latency_target.h"

using namespace nvmesim::models;
using A = FioLatencyTarget::Action;

namespace {
// A device that serves one I/O at a time in 100 us: at depth qd each I/O's
// total latency is qd x 100 us. With target 450 us the largest good depth is 4.
uint64_t latency_at(uint32_t qd) { return uint64_t(qd) * 100000; }

// One window at the search's depth: `ios` completions, then the check at the
// window's end (1 ms windows). Returns what the check asked.
A window(FioLatencyTarget& t, uint64_t& now_us, unsigned ios = 10) {
  for (unsigned i = 0; i < ios; ++i) t.completed(latency_at(t.depth()));
  now_us += 1000;
  const A a = t.check(now_us);
  if (a == A::Quiesce || a == A::FinalRun) t.new_cycle(now_us);  // the job's quiesce takes no time here
  return a;
}
}  // namespace

TEST_CASE("fio latency_target: doubling, then bisection, to the largest depth within the target", "[fio_job]") {
  FioLatencyTarget t;
  t.setup(450000, 1000, 99.0, false, 32, 0);
  REQUIRE(t.enabled());
  CHECK(t.depth() == 1);  // lat_target_init
  uint64_t now = 0;
  // By hand (low, qd, high after each window):
  //  qd 1 ok   -> low 1, qd 2 (high 32 = iodepth: double)
  //  qd 2 ok   -> low 2, qd 4
  //  qd 4 ok   -> low 4, qd 8
  //  qd 8 bad  -> high 8, qd (8+4)/2 = 6
  //  qd 6 bad  -> high 6, qd 5
  //  qd 5 bad  -> high 5, qd 4
  //  qd 4 ok   -> low 4, qd+1 = high: stable 1; qd (4+5)/2 = 4: unchanged, final run
  //  qd 4 ok   -> unchanged again: done
  std::vector<uint32_t> depths;
  std::vector<A> actions;
  while (!t.done() && depths.size() < 20) {
    actions.push_back(window(t, now));
    depths.push_back(t.depth());
  }
  CHECK(depths == std::vector<uint32_t>{2, 4, 8, 6, 5, 4, 4, 4});
  CHECK(actions == std::vector<A>{A::None, A::None, A::None, A::Quiesce, A::Quiesce, A::Quiesce, A::FinalRun,
                                  A::Done});
  CHECK(t.depth() == 4);
  CHECK(t.depth_low() == 4);
  CHECK(t.depth_high() == 5);
  CHECK(t.windows() == 8);
  CHECK_FALSE(t.fatal());
  // Nothing more once done.
  CHECK(t.check(now + 5000) == A::None);
  CHECK(t.windows() == 8);
}

TEST_CASE("fio latency_target: latency_run keeps searching, trying one deeper after 3 stable successes",
          "[fio_job]") {
  FioLatencyTarget t;
  t.setup(450000, 1000, 99.0, true, 32, 0);
  uint64_t now = 0;
  std::vector<uint32_t> depths;
  for (int i = 0; i < 14; ++i) {
    CHECK(window(t, now) != A::Done);
    depths.push_back(t.depth());
  }
  // As above to depth 4 (high 5); then successes at 4 count stable 1, 2, 3:
  // the third raises high to 6 and qd to (4+6)/2 = 5, which fails (high 5,
  // qd back to 4), and the count starts again.
  CHECK(depths == std::vector<uint32_t>{2, 4, 8, 6, 5, 4, 4, 4, 5, 4, 4, 4, 5, 4});
  CHECK_FALSE(t.done());
}

TEST_CASE("fio latency_target: window bookkeeping", "[fio_job]") {
  FioLatencyTarget t;
  t.setup(100000, 5000, 99.0, false, 8, 0);
  // Not judged before latency_window has passed since the window's start.
  for (int i = 0; i < 100; ++i) t.completed(50000);
  CHECK(t.check(4999) == A::None);
  CHECK(t.windows() == 0);
  CHECK(t.depth() == 1);
  // 1000 I/Os of which 10 over the target: 99.0% within, success at 99.
  for (int i = 0; i < 890; ++i) t.completed(100000);  // at the target: within (fio: tnsec > target fails)
  for (int i = 0; i < 10; ++i) t.completed(100001);
  CHECK(t.check(5000) == A::None);
  CHECK(t.windows() == 1);
  CHECK(t.depth() == 2);
  // The window restarted at 5000: the same share fails at 99.1.
  FioLatencyTarget u;
  u.setup(100000, 5000, 99.1, false, 8, 0);
  for (int i = 0; i < 990; ++i) u.completed(1000);
  for (int i = 0; i < 10; ++i) u.completed(200000);
  CHECK(u.check(5000) == A::None);  // a failure at depth 1: nothing lower, no new window (fio's)
  CHECK(u.depth() == 1);
  CHECK(u.check(5001) == A::None);  // the same window judged again
  CHECK(u.windows() == 2);
  // A window without completions is 0/0 in fio, which fails: at depth 2 it
  // goes down.
  FioLatencyTarget w;
  w.setup(100000, 1000, 50.0, false, 8, 0);
  w.completed(1000);
  CHECK(w.check(1000) == A::None);
  CHECK(w.depth() == 2);
  CHECK(w.check(2000) == A::Quiesce);
  CHECK(w.depth() == 1);  // high 2, qd (2 + low 1) / 2 = 1
  CHECK(w.depth_high() == 2);
}

TEST_CASE("fio latency_target: latency_percentile=100 fails at the first I/O over the target", "[fio_job]") {
  FioLatencyTarget t;
  t.setup(100000, 1000, 100.0, false, 16, 0);
  t.completed(10000);
  CHECK(t.check(1000) == A::None);  // depth 2
  t.completed(10000);
  CHECK(t.check(2000) == A::None);  // depth 4
  CHECK(t.depth() == 4);
  // lat_target_failed: at once, not at the window's end: high 4, qd
  // (4 + low 2) / 2 = 3.
  CHECK(t.completed(100001) == A::Quiesce);
  CHECK(t.depth() == 3);
  CHECK(t.depth_high() == 4);
  // At depth 1 one I/O over the target is fatal (fio's lat_fatal).
  FioLatencyTarget u;
  u.setup(100000, 1000, 100.0, false, 16, 0);
  CHECK(u.completed(100001) == A::Done);
  CHECK(u.fatal());
  // Without a target the depth is iodepth and nothing is judged.
  FioLatencyTarget off;
  off.setup(0, 1000, 100.0, false, 16, 0);
  CHECK_FALSE(off.enabled());
  CHECK(off.depth() == 16);
  CHECK(off.completed(1ull << 40) == A::None);
  CHECK(off.check(1ull << 30) == A::None);
}
