// KVM's halt-polling window (Linux virt/kvm/kvm_main.c kvm_vcpu_halt,
// grow_halt_poll_ns, shrink_halt_poll_ns, as of Linux 5.15 with the x86
// module defaults): after each halt of a vCPU, how long its next halt polls
// before the vCPU thread schedules out. Plain arithmetic on nanoseconds,
// with no SystemC, so a hypervisor designer can check the rule on its own.
#pragma once

#include <algorithm>
#include <cstdint>

namespace nvmesim::fw {

struct HaltPollRule {
  uint64_t max_ns = 200000;       // halt_poll_ns (KVM_HALT_POLL_NS_DEFAULT on x86)
  uint64_t grow = 2;              // halt_poll_ns_grow
  uint64_t grow_start_ns = 10000; // halt_poll_ns_grow_start
  uint64_t shrink = 0;            // halt_poll_ns_shrink: 0 drops the window to 0
};

// The window after a halt that blocked for `blocked_ns` with window `window_ns`:
// kept when the wake-up came within it; shrunk after a halt longer than the
// maximum; grown after a short halt the window missed.
inline uint64_t next_halt_poll_ns(uint64_t window_ns, uint64_t blocked_ns, const HaltPollRule& r) {
  if (r.max_ns == 0) return 0;
  if (blocked_ns <= window_ns) return window_ns;
  if (window_ns && blocked_ns > r.max_ns) return r.shrink ? window_ns / r.shrink : 0;
  if (window_ns < r.max_ns && blocked_ns < r.max_ns) {
    uint64_t grown = window_ns * r.grow;
    if (grown < r.grow_start_ns) grown = r.grow_start_ns;
    return std::min(grown, r.max_ns);
  }
  return window_ns;
}

}  // namespace nvmesim::fw
