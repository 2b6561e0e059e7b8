#include "models/vm_exit.h"

namespace nvmesim::models {

const char* to_string(ExitKind kind) {
  switch (kind) {
    case ExitKind::MmioDoorbell: return "mmio_doorbell";
    case ExitKind::MmioOther: return "mmio_other";
    case ExitKind::Ioeventfd: return "ioeventfd";
    case ExitKind::PortIo: return "pio";
    case ExitKind::Interrupt: return "interrupt";
    case ExitKind::Eoi: return "eoi";
    case ExitKind::Hlt: return "hlt";
  }
  return "?";
}

}  // namespace nvmesim::models
