#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "nvmesim/traces/reorder_buffer.h"

using nvmesim::traces::ReorderBuffer;

namespace {

struct Ev {
  uint64_t t = 0, seq = 0;
  int id = 0;
};

std::vector<int> drain(ReorderBuffer<Ev>& b, uint64_t horizon) {
  std::vector<int> out;
  b.flush(horizon, [&](const Ev& e) { out.push_back(e.id); });
  return out;
}

// The rule, stated independently: a stable sort by time of what arrived.
std::vector<int> stable_by_time(std::vector<Ev> v) {
  std::stable_sort(v.begin(), v.end(), [](const Ev& a, const Ev& b) { return a.t < b.t; });
  std::vector<int> ids;
  for (const Ev& e : v) ids.push_back(e.id);
  return ids;
}

}  // namespace

TEST_CASE("reorder buffer: hands out by time, same times in arrival order, only before the horizon",
          "[traces]") {
  ReorderBuffer<Ev> b;
  b.push({30, 0, 1});
  b.push({10, 0, 2});
  b.push({30, 0, 3});
  b.push({10, 0, 4});
  b.push({20, 0, 5});
  CHECK(drain(b, 10).empty());  // nothing dated before 10
  CHECK(drain(b, 30) == std::vector<int>{2, 4, 5});
  CHECK(b.size() == 2);
  CHECK(b.emitted() == 20);
  CHECK(drain(b, 31) == std::vector<int>{1, 3});
  CHECK(b.size() == 0);
}

TEST_CASE("reorder buffer: an event dated before one handed out moves to that time and counts late",
          "[traces]") {
  ReorderBuffer<Ev> b;
  b.push({50, 0, 1});
  b.push({60, 0, 2});
  CHECK(drain(b, 55) == std::vector<int>{1});
  b.push({40, 0, 3});  // before 50, already handed out: becomes 50, ahead of 60
  b.push({50, 0, 4});  // exactly 50: not late
  CHECK(b.late() == 1);
  CHECK(drain(b, 100) == std::vector<int>{3, 4, 2});
}

TEST_CASE("reorder buffer: events pushed while flushing are handed out in the same flush when early enough",
          "[traces]") {
  ReorderBuffer<Ev> b;
  b.push({10, 0, 1});
  b.push({40, 0, 2});
  std::vector<int> out;
  b.flush(35, [&](const Ev& e) {
    out.push_back(e.id);
    if (e.id == 1) {
      b.push({20, 0, 10});  // a pulse's end, say: within the horizon
      b.push({35, 0, 11});  // at the horizon: kept
    }
  });
  CHECK(out == std::vector<int>{1, 10});
  CHECK(drain(b, 100) == std::vector<int>{11, 2});
}

TEST_CASE("reorder buffer: a long nearly ordered stream comes out as a stable sort by time", "[traces]") {
  // Two sources, as a vCPU ahead by up to a quantum and the kernel's
  // present: interleaved, each in order, with many equal times; flushed
  // in steps with a horizon one quantum behind the newest.
  ReorderBuffer<Ev> b;
  std::vector<Ev> all;
  std::vector<int> out;
  uint64_t lcg = 12345;
  uint64_t vcpu_t = 0, kernel_t = 0;
  for (int i = 0; i < 20000; ++i) {
    lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
    Ev e;
    e.id = i;
    if ((lcg >> 33) % 3 == 0) {
      kernel_t += (lcg >> 40) % 4;
      e.t = kernel_t;
    } else {
      vcpu_t = std::max(vcpu_t + (lcg >> 45) % 3, kernel_t);
      e.t = std::min(vcpu_t, kernel_t + 50);
    }
    all.push_back(e);
    b.push(e);
    if (i % 7 == 0) b.flush(kernel_t, [&](const Ev& x) { out.push_back(x.id); });
  }
  b.flush(UINT64_MAX, [&](const Ev& x) { out.push_back(x.id); });
  REQUIRE(b.late() == 0);  // the horizon held everything back that could come earlier
  CHECK(out == stable_by_time(all));
  CHECK(b.size() == 0);
}
