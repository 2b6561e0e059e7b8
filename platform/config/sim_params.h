// sim.*: the simulation kernel's parameters (see models/sim/param_visit.h).
#pragma once

#include <systemc>

#include "nvmesim/models/sim/param_visit.h"

namespace nvmesim::platform {

struct SimParams {
  sc_core::sc_time quantum;        // the vCPUs' TLM global quantum
  sc_core::sc_time stall_timeout;  // the watchdog's period

  static constexpr const char* param_prefix = "sim";
  template <class V>
  void visit(V& v) {
    using namespace models::param_units;
    v.time(quantum, "quantum", "1us", 1 * NS, 1 * MS, "the vCPUs' time quantum (temporal decoupling)");
    v.time(stall_timeout, "stall_timeout", "10ms", 1 * US, 100 * S,
           "simulated time without progress before the run is declared stalled");
  }
};

}  // namespace nvmesim::platform
