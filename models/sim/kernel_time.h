// The kernel's present. sc_time_stamp() is an out-of-line call into the
// SystemC library, and the hot path asks about ten times per simulated I/O;
// the simulation context's own accessor, which it wraps, is inline.
#pragma once

#include <systemc>
#include "nvmesim/models/sim/kernel_time.h"

namespace nvmesim::models {

inline const sc_core::sc_time& kernel_now() { return sc_core::sc_get_curr_simcontext()->time_stamp(); }

}  // namespace nvmesim::models
