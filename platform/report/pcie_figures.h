// The PCIe link's figures of a run (pcie.mode=link): TLPs and wire bytes by
// purpose and kind, link utilisation per direction, queueing and read round
// trips, read from the device's "pcie" statistics group
// (models/pcie/pcie_link_traffic.h) when a report is written, and their
// report in text and JSON: the derived figures of the link, defined here
// once (their purposes come and go with the device, so they are not rows of
// derived_figures.h's table).
#pragma once

#include <array>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "nvmesim/firmware/pcie/tlp.h"
#include "nvmesim/firmware/sim/statistics.h"
#include "nvmesim/platform/report/json_out.h"

namespace nvmesim::platform {

struct PcieFigures {
  bool present = false;  // pcie.mode=link
  std::string link;      // PcieLink::describe()
  struct Purpose {
    std::string name;
    std::array<uint64_t, fw::pcie::kTlpKinds> tlps{}, wire_bytes{};  // by TlpKind
    uint64_t total_tlps() const { return tlps[0] + tlps[1] + tlps[2]; }
    uint64_t total_wire_bytes() const { return wire_bytes[0] + wire_bytes[1] + wire_bytes[2]; }
  };
  std::vector<Purpose> purposes;
  double upstream_busy_ns = 0, downstream_busy_ns = 0;
  double upstream_queueing_ns = 0, downstream_queueing_ns = 0;
  uint64_t read_round_trips = 0;
  double read_time_ns = 0;
};

// From the measured phase's statistics: the device's "pcie" group
// ("nvme.pcie", or "virtio_blk.pcie"); not present without one.
PcieFigures pcie_figures(const stats::GroupValues& stats, std::string link);

// The JSON "pcie" object: per I/O figures (`ios` the denominator) and
// utilisation over `span_ns`.
report::Json pcie_json(const PcieFigures& p, uint64_t ios, double span_ns);
// The text report's "PCIe link" section.
void write_pcie_text(const PcieFigures& p, uint64_t ios, double span_ns, std::ostream& out);

}  // namespace nvmesim::platform
