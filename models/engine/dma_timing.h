// The time a device's DMA takes, for both devices and their engines: on a
// link (pcie.mode=link) its TLPs' time queued behind the traffic on the
// direction it needs (counted in the link's tally), emulated the link
// model's time for the transfer (small ones, doorbell entries, SQEs and
// CQEs, looked up).
#pragma once

#include <array>
#include <cstdint>
#include <systemc>

#include "nvmesim/models/pcie/pcie_link.h"
#include "nvmesim/models/pcie/pcie_link_traffic.h"
#include "nvmesim/models/sim/kernel_time.h"

namespace nvmesim::models {

class DmaTiming {
 public:
  explicit DmaTiming(const PcieLink& link) : link_(link) {
    for (unsigned n = 0; n < small_read_.size(); ++n) {
      small_read_[n] = link_.read_time(n);
      small_write_[n] = link_.write_time(n);
    }
  }
  // pcie.mode=link: the link's traffic, one resource for every device thread.
  void set_traffic(PcieLinkTraffic* traffic) { traffic_ = traffic; }

  // A DMA of [addr, addr + len) for `purpose` (the device's link purpose),
  // made `offset` after now.
  sc_core::sc_time time(bool device_reads, unsigned purpose, uint64_t addr, uint32_t len,
                        const sc_core::sc_time& offset) {
    if (traffic_) {
      const sc_core::sc_time at = kernel_now() + offset;
      return device_reads ? traffic_->device_read(purpose, addr, len, at)
                          : traffic_->device_write(purpose, addr, len, at);
    }
    return device_reads ? (len < small_read_.size() ? small_read_[len] : link_.read_time(len))
                        : (len < small_write_.size() ? small_write_[len] : link_.write_time(len));
  }

 private:
  const PcieLink& link_;
  PcieLinkTraffic* traffic_ = nullptr;
  std::array<sc_core::sc_time, 65> small_read_, small_write_;
};

}  // namespace nvmesim::models
