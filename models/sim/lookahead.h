// Conservative lookahead for a process ahead of the kernel's present by a
// local offset: if no other activity is due up to that offset, no other
// process can run before it has passed, so letting the time pass (a kernel
// round trip, a context switch for a thread) changes nothing anyone could
// observe, and the process may act at once at its own present.
#pragma once

#include <cstdint>
#include <systemc>

#include "nvmesim/models/sim/activations.h"
#include "nvmesim/models/sim/kernel_time.h"

namespace nvmesim::models {

// True when another process may run before `offset` from kernel_now()
// has passed. Activity due at exactly that time counts: the kernel orders
// same-time activity, so the caller must let it do so.
//
// Asking the kernel (sc_time_to_pending_activity) scans its queues; a run
// asks about ten times per I/O, mostly within one activation with nothing
// notified in between. The answer is kept while the activation epoch
// (models/sim/activations.h: bumped at every process activation and every
// event the model notifies or cancels) and the delta cycle stand still:
// within them the present and the kernel's pending activity cannot change.
// (At namespace scope, not a function's static: no guard to test per call.)
struct KeptLookahead {
  uint64_t epoch = ~uint64_t(0);
  sc_dt::uint64 delta = 0;
  sc_core::sc_time to_next;
};
inline KeptLookahead kept_lookahead;

inline bool activity_due_within(const sc_core::sc_time& offset) {
  KeptLookahead& kept = kept_lookahead;
  const sc_dt::uint64 delta = sc_core::sc_delta_count();
  if (kept.epoch != activations::epoch || kept.delta != delta) {
    kept.to_next = sc_core::sc_time_to_pending_activity(sc_core::sc_get_curr_simcontext());
    kept.epoch = activations::epoch;
    kept.delta = delta;
  }
  return kept.to_next <= offset;
}

}  // namespace nvmesim::models
