#include "firmware/dbbuf_policy.h"

namespace nvmesim::fw {

const char* to_string(DbbufMode mode) {
  switch (mode) {
    case DbbufMode::Off: return "off";
    case DbbufMode::Spec: return "spec";
    case DbbufMode::Vendor: return "vendor";
  }
  return "?";
}

const char* to_string(EventIdxPolicy policy) {
  switch (policy) {
    case EventIdxPolicy::Echo: return "echo";
    case EventIdxPolicy::Lag: return "lag";
    case EventIdxPolicy::Park: return "park";
    case EventIdxPolicy::Never: return "never";
  }
  return "?";
}

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

const char* to_string(MmioDoorbellValue value) {
  switch (value) {
    case MmioDoorbellValue::Use: return "use";
    case MmioDoorbellValue::Ignore: return "ignore";
  }
  return "?";
}

}  // namespace nvmesim::fw
