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
  // A new offset from kernel_now() (the part counted as synchronised stays,
  // up to the new offset).
  void set(const sc_core::sc_time& t) {
    local_ = t;
    if (synced_ > t) synced_ = t;
  }
  const sc_core::sc_time& local_time() const { return local_; }
  sc_core::sc_time current_time() const { return kernel_now() + local_; }
  // The quantum counts from the last synchronisation, real or skipped.
  bool need_sync() const { return local_ - synced_ >= quantum_; }
  // `t` more still fits in the quantum.
  bool within_quantum(const sc_core::sc_time& t) const { return local_ - synced_ + t < quantum_; }
  const sc_core::sc_time& quantum() const { return quantum_; }
  // Lets the local offset pass; returns true when the process waited (other
  // processes may have run meanwhile).
  bool sync() {
    synced_ = sc_core::SC_ZERO_TIME;
    if (local_ == sc_core::SC_ZERO_TIME) return false;
    activations::wait(local_);
    local_ = sc_core::SC_ZERO_TIME;
    return true;
  }
  // A sync that nothing could observe (no other process can run within the
  // offset: models/sim/lookahead.h) is skipped, but the process goes on as
  // if it had synchronised: its quantum starts again at its present, so it
  // decides as it would have after the wait.
  void skip_sync() { synced_ = local_; }
  void refresh_quantum() { quantum_ = tlm::tlm_global_quantum::instance().get(); }

 private:
  sc_core::sc_time local_;
  sc_core::sc_time synced_;  // the part of local_ counted as synchronised (skip_sync)
  sc_core::sc_time quantum_;
};

}  // namespace nvmesim::models
