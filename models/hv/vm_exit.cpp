#include "nvmesim/models/hv/vm_exit.h"

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
    case ExitKind::Ipi: return "ipi";
  }
  return "?";
}

std::vector<std::string> VcpuExitCounters::kind_names() {
  std::vector<std::string> names;
  for (unsigned k = 0; k < EXIT_KIND_COUNT; ++k) names.push_back(to_string(ExitKind(k)));
  return names;
}

ExitStats VcpuExitCounters::figures() const {
  ExitStats e;
  for (unsigned k = 0; k < EXIT_KIND_COUNT; ++k) {
    e.count[k] = count[k];
    e.time[k] = sc_core::sc_time::from_value(time[k]);
  }
  return e;
}

}  // namespace nvmesim::models
