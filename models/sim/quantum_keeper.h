// Temporal decoupling for a vCPU: time spent is added to a local offset and
// handed to the kernel only when the offset reaches the global quantum (TLM's
// tlm_global_quantum) or at a synchronisation point. Lighter than
// tlm_utils::tlm_quantumkeeper, whose sync() waits even for a zero offset and
// recomputes the quantum boundary on every call: on the per-I/O path.
#pragma once

#include <systemc>
#include <tlm>

#include "nvmesim/models/sim/activations.h"
#include "nvmesim/models/sim/kernel_time.h"

namespace nvmesim::models {

class QuantumKeeper {
 public:
  QuantumKeeper() : quantum_(tlm::tlm_global_quantum::instance().get()) {}

  void inc(const sc_core::sc_time& t) { local_ += t; }
  void set(const sc_core::sc_time& t) { local_ = t; }
  const sc_core::sc_time& local_time() const { return local_; }
  sc_core::sc_time current_time() const { return kernel_now() + local_; }
  bool need_sync() const { return local_ >= quantum_; }
  const sc_core::sc_time& quantum() const { return quantum_; }
  // Lets the local offset pass; returns true when the process waited (other
  // processes may have run meanwhile).
  bool sync() {
    if (local_ == sc_core::SC_ZERO_TIME) return false;
    activations::wait(local_);
    local_ = sc_core::SC_ZERO_TIME;
    return true;
  }
  void refresh_quantum() { quantum_ = tlm::tlm_global_quantum::instance().get(); }

 private:
  sc_core::sc_time local_;
  sc_core::sc_time quantum_;
};

}  // namespace nvmesim::models
