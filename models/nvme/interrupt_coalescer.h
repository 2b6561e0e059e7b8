// Interrupt Coalescing (Set Features 0x08, NVMe 1.4 section 5.21.1.8):
// holds back a vector's interrupt until THR+1 completions are aggregated
// or TIME x 100 us has passed since the first held one, whichever comes
// first. TIME 0 "corresponds to no delay": nothing is held, whatever THR
// says (a held completion with no deadline would never be signalled). The
// admin queue's vector (0) is never coalesced.
#pragma once

#include <cstdint>
#include <systemc>
#include <vector>

namespace nvmesim::models {

class InterruptCoalescer {
 public:
  explicit InterruptCoalescer(uint16_t vectors);

  struct Decision {
    bool hold = false;             // false: send the interrupt now
    sc_core::sc_time deadline;     // set when this completion armed the vector's deadline
  };
  // `completions` CQEs were posted for `vector` at time `at` (0 counts as
  // one: an interrupt with nothing newly posted); `thr` (0's based) and
  // `time_100us` are the feature's current value.
  Decision on_completions(uint16_t vector, uint64_t completions, uint16_t thr,
                          uint8_t time_100us, const sc_core::sc_time& at);
  // The vector's interrupt went (or was left pending by a mask): start over.
  void on_sent(uint16_t vector);

  // Calls send(vector) for each vector whose deadline is at or before `now`
  // and that holds completions; returns the earliest deadline still ahead
  // (SC_ZERO_TIME: none).
  template <class Send>
  sc_core::sc_time expire(const sc_core::sc_time& now, Send&& send);

  bool holding() const;  // some vector's deadline is armed
  uint32_t held(uint16_t vector) const { return held_.at(vector); }
  sc_core::sc_time deadline(uint16_t vector) const { return deadline_.at(vector); }

 private:
  std::vector<uint32_t> held_;            // completions aggregated, per vector
  std::vector<sc_core::sc_time> deadline_;  // zero: not armed
};

template <class Send>
sc_core::sc_time InterruptCoalescer::expire(const sc_core::sc_time& now, Send&& send) {
  sc_core::sc_time next = sc_core::SC_ZERO_TIME;
  for (uint16_t v = 0; v < deadline_.size(); ++v) {
    const sc_core::sc_time d = deadline_[v];
    if (d == sc_core::SC_ZERO_TIME) continue;
    if (d <= now) {
      if (held_[v]) send(v);
    } else if (next == sc_core::SC_ZERO_TIME || d < next) {
      next = d;
    }
  }
  return next;
}

}  // namespace nvmesim::models
