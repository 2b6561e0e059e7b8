// KVM's halt-polling window, checked against the rule as Linux's
// Documentation/virt/kvm/halt-polling.rst states it: the window starts at 0,
// grows to halt_poll_ns_grow_start and then by halt_poll_ns_grow after a
// wake-up that came after the window but within halt_poll_ns, never above
// halt_poll_ns; it is reset (shrink 0) after a halt longer than halt_poll_ns;
// a wake-up within the window leaves it as it is.
#include <catch2/catch.hpp>

#include <vector>

#include "nvmesim/firmware/hv/halt_poll.h"

using nvmesim::fw::HaltPollRule;
using nvmesim::fw::next_halt_poll_ns;

TEST_CASE("halt poll: the window follows KVM's grow and shrink rule", "[halt_poll]") {
  const HaltPollRule r;  // x86 defaults: 200 us, grow 2 from 10 us, shrink to 0
  struct Step { uint64_t blocked, window_after; };
  // Halts of 30 us: 0 -> 10 -> 20 -> 40 (30 us now within it) -> 40 ...
  const std::vector<Step> steps = {
      {30000, 10000},  {30000, 20000},  {30000, 40000}, {30000, 40000},
      {150000, 80000}, {150000, 160000}, {150000, 160000},
      {190000, 200000},  // grown past the maximum: capped at 200 us
      {500000, 0},       // longer than halt_poll_ns: reset
      {500000, 0},       // no window, a long halt: stays at 0 (nothing to shrink, nothing to grow)
      {5000, 10000},     // a short halt from 0: grow_start
  };
  uint64_t window = 0;
  for (size_t i = 0; i < steps.size(); ++i) {
    INFO("step " << i << ", blocked " << steps[i].blocked);
    window = next_halt_poll_ns(window, steps[i].blocked, r);
    CHECK(window == steps[i].window_after);
  }
}

TEST_CASE("halt poll: a shrink factor divides, no maximum means no polling", "[halt_poll]") {
  HaltPollRule r;
  r.shrink = 2;
  CHECK(next_halt_poll_ns(160000, 300000, r) == 80000);
  CHECK(next_halt_poll_ns(160000, 100000, r) == 160000);  // within the window: kept
  r.max_ns = 0;
  CHECK(next_halt_poll_ns(0, 1000, r) == 0);
  CHECK(next_halt_poll_ns(50000, 1000, r) == 0);
}
