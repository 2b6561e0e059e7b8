// InterruptCoalescer against NVMe 1.4 section 5.21.1.8: an interrupt once
// THR+1 completions are aggregated or TIME x 100 us after the first held
// one; TIME 0 holds nothing; the admin vector is never coalesced.
#include <catch2/catch.hpp>

#include <vector>

#include "nvmesim/models/nvme/interrupt_coalescer.h"

using namespace sc_core;
using nvmesim::models::InterruptCoalescer;

namespace {
sc_time us(double v) { return sc_time(v, SC_US); }
}  // namespace

TEST_CASE("coalescer: THR 7 sends the 8th completion's interrupt, holds the 7 before",
          "[coalescer]") {
  InterruptCoalescer c(4);
  unsigned sent = 0, held = 0;
  for (unsigned i = 1; i <= 24; ++i) {  // one completion at a time, 1 us apart
    const auto d = c.on_completions(1, 1, /*thr=*/7, /*time_100us=*/2, us(i));
    if (d.hold) {
      ++held;
    } else {
      ++sent;
      CHECK(i % 8 == 0);
      c.on_sent(1);
    }
  }
  CHECK(sent == 3);   // 24 / (7 + 1)
  CHECK(held == 21);  // 7 of each 8
  CHECK_FALSE(c.holding());
}

TEST_CASE("coalescer: the first held completion arms TIME x 100 us and later ones keep it",
          "[coalescer]") {
  InterruptCoalescer c(4);
  const auto first = c.on_completions(2, 1, 7, 3, us(10));
  REQUIRE(first.hold);
  CHECK(first.deadline == us(310));  // 10 us + 3 x 100 us
  const auto second = c.on_completions(2, 2, 7, 3, us(50));
  CHECK(second.hold);
  CHECK(second.deadline == SC_ZERO_TIME);  // not re-armed
  CHECK(c.deadline(2) == us(310));
  CHECK(c.held(2) == 3);
  CHECK(c.holding());

  std::vector<uint16_t> fired;
  // Before the deadline nothing fires; the next deadline is reported.
  CHECK(c.expire(us(309), [&](uint16_t v) { fired.push_back(v); }) == us(310));
  CHECK(fired.empty());
  CHECK(c.expire(us(310), [&](uint16_t v) {
          fired.push_back(v);
          c.on_sent(v);
        }) == SC_ZERO_TIME);
  CHECK(fired == std::vector<uint16_t>{2});
  CHECK(c.held(2) == 0);
  CHECK_FALSE(c.holding());
}

TEST_CASE("coalescer: several posted at once count as many and zero posted counts as one",
          "[coalescer]") {
  InterruptCoalescer c(2);
  CHECK(c.on_completions(1, 5, 7, 1, us(0)).hold);   // 5 of 8
  CHECK(c.on_completions(1, 0, 7, 1, us(1)).hold);   // 6
  CHECK(c.held(1) == 6);
  CHECK_FALSE(c.on_completions(1, 2, 7, 1, us(2)).hold);  // 8: send
}

TEST_CASE("coalescer: TIME 0 and the admin vector hold nothing, whatever THR says",
          "[coalescer]") {
  InterruptCoalescer c(3);
  CHECK_FALSE(c.on_completions(1, 1, 255, 0, us(0)).hold);  // TIME 0: no delay
  CHECK_FALSE(c.on_completions(0, 1, 255, 10, us(0)).hold);  // vector 0: admin
  CHECK(c.held(0) == 0);
  CHECK(c.held(1) == 0);
  CHECK_FALSE(c.holding());
}

TEST_CASE("coalescer: each vector aggregates and expires on its own", "[coalescer]") {
  InterruptCoalescer c(3);
  CHECK(c.on_completions(1, 1, 3, 1, us(0)).deadline == us(100));
  CHECK(c.on_completions(2, 1, 3, 2, us(20)).deadline == us(220));
  std::vector<uint16_t> fired;
  auto send = [&](uint16_t v) {
    fired.push_back(v);
    c.on_sent(v);
  };
  CHECK(c.expire(us(150), send) == us(220));
  CHECK(fired == std::vector<uint16_t>{1});
  CHECK(c.held(2) == 1);
  CHECK(c.expire(us(220), send) == SC_ZERO_TIME);
  CHECK(fired == std::vector<uint16_t>{1, 2});
}
