#include "nvmesim/firmware/nvme/dbbuf_policy.h"

namespace nvmesim::fw {

EventIdxWrite eventidx_update(EventIdxPolicy policy, uint32_t index, uint32_t size, bool& parked) {
  switch (policy) {
    case EventIdxPolicy::Echo: return {true, index};  // QEMU: sq->tail, cq->head
    case EventIdxPolicy::Lag: return {true, (index + size - 1) % size};
    case EventIdxPolicy::Park:
      if (parked) return {};
      parked = true;
      return {true, EVENTIDX_PARK_INDEX};
    case EventIdxPolicy::Never: return {};
  }
  return {};
}

}  // namespace nvmesim::fw
