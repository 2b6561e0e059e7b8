// Conservative lookahead for a process ahead of the kernel's present by a
// local offset: if no other activity is due up to that offset, no other
// process can run before it has passed, so letting the time pass (a kernel
// round trip, a context switch for a thread) changes nothing anyone could
// observe, and the process may act at once at its own present.
#pragma once

#include <systemc>

namespace nvmesim::models {

// True when another process may run before `offset` from sc_time_stamp()
// has passed. Activity due at exactly that time counts: the kernel orders
// same-time activity, so the caller must let it do so.
inline bool activity_due_within(const sc_core::sc_time& offset) {
  return sc_core::sc_time_to_pending_activity(sc_core::sc_get_curr_simcontext()) <= offset;
}

}  // namespace nvmesim::models
