#include "firmware/eventidx.h"

namespace nvmesim::fw {

const char* to_string(NeedEventForm form) {
  switch (form) {
    case NeedEventForm::Linux: return "linux";
    case NeedEventForm::Inclusive: return "inclusive";
  }
  return "?";
}

}  // namespace nvmesim::fw
