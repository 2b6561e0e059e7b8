// VM-exit kinds and their per-vCPU accounting.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <systemc>
#include <vector>

#include "nvmesim/firmware/sim/statistics.h"
#include "nvmesim/models/sim/stat_time.h"

namespace nvmesim::models {

enum class ExitKind : uint8_t {
  MmioDoorbell,  // trapped MMIO write to an NVMe doorbell
  MmioOther,     // any other trapped MMIO access (registers, MSI-X table)
  Ioeventfd,     // doorbell write caught by an ioeventfd: cheaper, carries no value
  PortIo,        // port I/O
  Interrupt,     // interrupt injection into the vCPU
  Eoi,           // end-of-interrupt write to the local APIC
  Hlt,           // the vCPU halted, waiting for an interrupt (time = idle time)
  Ipi,           // x2APIC ICR write sending an IPI (an MSR-write exit; none with IPI virtualization)
};
constexpr unsigned EXIT_KIND_COUNT = 8;
const char* to_string(ExitKind kind);

struct ExitStats {
  std::array<uint64_t, EXIT_KIND_COUNT> count{};
  std::array<sc_core::sc_time, EXIT_KIND_COUNT> time{};

  void add(ExitKind kind, const sc_core::sc_time& t) {
    ++count[unsigned(kind)];
    time[unsigned(kind)] += t;
  }
  ExitStats minus(const ExitStats& earlier) const {
    ExitStats d;
    for (unsigned i = 0; i < EXIT_KIND_COUNT; ++i) {
      d.count[i] = count[i] - earlier.count[i];
      d.time[i] = time[i] - earlier.time[i];
    }
    return d;
  }
  void merge(const ExitStats& o) {
    for (unsigned i = 0; i < EXIT_KIND_COUNT; ++i) {
      count[i] += o.count[i];
      time[i] += o.time[i];
    }
  }
  // Exits that stop the vCPU while it had guest work (all but HLT).
  uint64_t total_count_excluding_hlt() const {
    uint64_t n = 0;
    for (unsigned i = 0; i < EXIT_KIND_COUNT; ++i)
      if (i != unsigned(ExitKind::Hlt)) n += count[i];
    return n;
  }
};

// One vCPU's exits as statistics (merged into its "vcpuN" group).
struct VcpuExitCounters : stats::Group {
  static std::vector<std::string> kind_names();
  stats::Vector count{*this, "exits", stats::Unit::Count, "VM exits by kind", kind_names()};
  stats::Vector time{*this, "exit_time", stats::Unit::Time,
                     "time in VM exits by kind (hlt: time halted, waiting for an interrupt)", kind_names()};
  TimeStat bql_wait{*this, "bql_wait",
                    "time this vCPU's MMIO handlers (and, with hv.bql_interrupts, its interrupts) waited for QEMU's global lock (hv.bql)"};
  void add(ExitKind kind, const sc_core::sc_time& t) {
    ++count[unsigned(kind)];
    time[unsigned(kind)] += t.value();
  }
  ExitStats figures() const;  // as a plain value
};

}  // namespace nvmesim::models
