#include "nvmesim/models/nvme/interrupt_coalescer.h"

using namespace sc_core;

namespace nvmesim::models {

InterruptCoalescer::InterruptCoalescer(uint16_t vectors)
    : held_(vectors, 0), deadline_(vectors, SC_ZERO_TIME) {}

InterruptCoalescer::Decision InterruptCoalescer::on_completions(uint16_t vector,
                                                                uint64_t completions,
                                                                uint16_t thr, uint8_t time_100us,
                                                                const sc_time& at) {
  Decision d;
  if (vector == 0 || time_100us == 0) return d;
  held_.at(vector) += uint32_t(completions ? completions : 1);
  if (held_[vector] >= uint32_t(thr) + 1u) return d;  // the threshold is reached: send
  d.hold = true;
  if (deadline_[vector] == SC_ZERO_TIME) {
    deadline_[vector] = at + sc_time(100.0 * time_100us, SC_US);
    d.deadline = deadline_[vector];
  }
  return d;
}

void InterruptCoalescer::on_sent(uint16_t vector) {
  held_.at(vector) = 0;
  deadline_[vector] = SC_ZERO_TIME;
}

bool InterruptCoalescer::holding() const {
  for (const sc_time& d : deadline_)
    if (d != SC_ZERO_TIME) return true;
  return false;
}

}  // namespace nvmesim::models
