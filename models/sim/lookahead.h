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
// notified in between. The answer is kept (activations::kept_lookahead)
// while the activation epoch (models/sim/activations.h: bumped at every
// process activation and every event the model cancels) and the delta cycle
// stand still: within them the present cannot change, and the kernel's
// pending activity only by the model's own notifications, which update the
// kept answer (activations::notify).
inline bool activity_due_within(const sc_core::sc_time& offset) {
  activations::KeptLookahead& kept = activations::kept_lookahead;
  const sc_dt::uint64 delta = sc_core::sc_delta_count();
  if (kept.epoch != activations::epoch || kept.delta != delta) {
    kept.to_next = sc_core::sc_time_to_pending_activity(sc_core::sc_get_curr_simcontext());
    kept.epoch = activations::epoch;
    kept.delta = delta;
  }
  return kept.to_next <= offset;
}

}  // namespace nvmesim::models
