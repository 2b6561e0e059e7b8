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

const char* to_string(MmioDoorbellValue value) {
  switch (value) {
    case MmioDoorbellValue::Use: return "use";
    case MmioDoorbellValue::Ignore: return "ignore";
  }
  return "?";
}

}  // namespace nvmesim::fw
