#include "nvmesim/models/pcie/pcie_link_traffic.h"

#include <algorithm>
#include <cmath>

using namespace sc_core;

namespace nvmesim::models {

PcieLinkTraffic::PcieLinkTraffic(const PcieLink& link, const std::vector<std::string>& purposes)
    : link_(link),
      tally_(link.tlp_rules(), purposes),
      rtt_(link.params().read_round_trip_ns, SC_NS) {
  add_group("tlp", tally_);
  // BW is bytes per ns; a tick is the kernel's time resolution.
  const double ns_per_tick = sc_get_time_resolution().to_seconds() * 1e9;
  ticks_per_byte_ = 1.0 / (link.bandwidth_bytes_per_ns() * ns_per_tick);
}

sc_time PcieLinkTraffic::wire_time(uint64_t bytes) const {
  return sc_time::from_value(uint64_t(std::llround(double(bytes) * ticks_per_byte_)));
}

sc_time PcieLinkTraffic::occupy(sc_time& free, TimeStat& busy, const sc_time& at, uint64_t bytes) {
  const sc_time start = std::max(at, free);
  const sc_time t = wire_time(bytes);
  free = start + t;
  busy += t;
  return start;
}

sc_time PcieLinkTraffic::device_write(unsigned purpose, uint64_t addr, uint64_t len, const sc_time& at) {
  if (len == 0) return SC_ZERO_TIME;
  const auto s = tally_.posted_write(purpose, addr, len);
  const sc_time start = occupy(upstream_free_, upstream_busy, at, s.wire_bytes(tally_.rules()));
  upstream_queueing += start - at;
  return upstream_free_ - at;
}

sc_time PcieLinkTraffic::device_read(unsigned purpose, uint64_t addr, uint64_t len, const sc_time& at) {
  if (len == 0) return SC_ZERO_TIME;
  const auto r = tally_.read(purpose, addr, len);
  // The requests count towards upstream's busy time but do not queue there
  // (see the header): the round trip starts at `at`.
  upstream_busy += wire_time(r.requests.wire_bytes(tally_.rules()));
  const sc_time first = at + rtt_;
  const sc_time start = occupy(downstream_free_, downstream_busy, first, r.completions.wire_bytes(tally_.rules()));
  downstream_queueing += start - first;
  ++read_round_trips;
  read_time += downstream_free_ - at;
  return downstream_free_ - at;
}

// The CPU's accesses run at the vCPU's local time, which may be ahead of
// the device's: they count towards a direction's busy time but do not move
// its queue (a device transfer would otherwise wait for a future write).
void PcieLinkTraffic::host_write(unsigned purpose, uint64_t addr, uint64_t len, const sc_time&) {
  if (len == 0) return;
  downstream_busy += wire_time(tally_.posted_write(purpose, addr, len).wire_bytes(tally_.rules()));
}

void PcieLinkTraffic::host_read(unsigned purpose, uint64_t addr, uint64_t len, const sc_time&) {
  if (len == 0) return;
  const auto r = tally_.read(purpose, addr, len);
  downstream_busy += wire_time(r.requests.wire_bytes(tally_.rules()));
  upstream_busy += wire_time(r.completions.wire_bytes(tally_.rules()));
}

}  // namespace nvmesim::models
