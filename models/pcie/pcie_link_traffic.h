// PcieLinkTraffic: the PCIe link between a function and its root complex as
// a resource that every memory transaction passes through, in each
// direction (pcie.mode=link). It counts each transaction's TLPs by kind and
// purpose (firmware/pcie/tlp.h) and gives it its time on the wire, queued
// behind the traffic already on that direction:
//
//   upstream   (device -> root complex): the device's read requests (MRd)
//              and posted writes (MWr: data to the host, CQEs, EventIdx
//              writes, MSI-X messages), the completions of the host's MMIO reads
//   downstream (root complex -> device): completions with data (CplD) of
//              the device's reads, the host's MMIO writes (doorbells) and
//              read requests
//
//   device write:  starts when upstream is free (at or after `at`), holds it
//                  for wire_bytes / BW; done when its last TLP has left
//   device read:   the first completion can come a round trip
//                  (pcie.read_rtt: request to first completion) after `at`,
//                  and when downstream is free; the completions hold
//                  downstream for their wire bytes / BW; done when the last
//                  has arrived. The requests (MRd, 24 bytes each) add to
//                  upstream's busy time but do not wait behind the posted
//                  writes queued there, though PCIe's ordering rules
//                  (Base Specification 4.0 section 2.4.1) forbid a read
//                  request to pass a posted write: the models keep one read
//                  of a thread in flight at a time (QEMU's engine fetches one
//                  SQE a round trip; the hardware engine bursts SQEs but
//                  waits for each burst), where a real controller keeps
//                  several reads in flight, and queueing each read behind
//                  the data writes would charge that simplification twice
//                  (a gap, stated)
//
// Busy time is credited when a transfer is scheduled, whole: one in flight
// at the measured phase's start is not counted in it, one queued past its
// end is, and host MMIO adds busy time without a place in the queue, so a
// saturated direction can read slightly above 1.
//   host MMIO:     counted and added to its direction's busy time; the
//                  CPU's time for it is the root complex's (a posted write
//                  does not wait for the link; a read's round trip is
//                  PcieLink::mmio_time). It neither queues behind device
//                  traffic nor delays it: the vCPU runs at its own local
//                  time, ahead of the device's (a simplification; an MMIO
//                  TLP is 28 bytes, a few ns on the wire)
//
// The device calls it for every DMA, whether guest memory was reached
// through DMI or through the interconnect: DMI never hides traffic from the
// count or from the timing. Transfers are timed in the order they are made;
// one from another thread whose local time is earlier than traffic already
// on the wire queues behind it (the quantum's approximation).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <systemc>

#include "nvmesim/firmware/pcie/tlp.h"
#include "nvmesim/firmware/sim/statistics.h"
#include "nvmesim/models/pcie/pcie_link.h"
#include "nvmesim/models/sim/stat_time.h"

namespace nvmesim::models {

class PcieLinkTraffic : public stats::Group {
 public:
  // `purposes`: the names of what TLPs are for, indexed as the caller's
  // purpose numbers (e.g. an NVMe controller's DMA purposes).
  PcieLinkTraffic(const PcieLink& link, const std::vector<std::string>& purposes);

  const PcieLink& link() const { return link_; }
  const fw::pcie::TlpTally& tally() const { return tally_; }

  // The device's write of [addr, addr + len) at absolute time `at`: returns
  // when its last TLP has left, as an offset from `at`.
  sc_core::sc_time device_write(unsigned purpose, uint64_t addr, uint64_t len, const sc_core::sc_time& at);
  // The device's read: returns when its last completion has arrived, from `at`.
  sc_core::sc_time device_read(unsigned purpose, uint64_t addr, uint64_t len, const sc_core::sc_time& at);
  // The host's MMIO access to the device (BAR offset `addr`).
  void host_write(unsigned purpose, uint64_t addr, uint64_t len, const sc_core::sc_time& at);
  void host_read(unsigned purpose, uint64_t addr, uint64_t len, const sc_core::sc_time& at);

  // Busy time of a direction since `from` (the measured phase's start) is
  // its TimeStat; utilisation = busy / interval.
  TimeStat upstream_busy{*this, "upstream_busy", "time the upstream direction (device to host) carried TLPs"};
  TimeStat downstream_busy{*this, "downstream_busy", "time the downstream direction (host to device) carried TLPs"};
  TimeStat upstream_queueing{*this, "upstream_queueing",
                             "time the device's posted writes waited for the upstream direction, summed over transfers"};
  TimeStat downstream_queueing{*this, "downstream_queueing",
                               "time completions waited for the downstream direction beyond the read round trip, summed"};
  stats::Scalar read_round_trips{*this, "read_round_trips", stats::Unit::Count,
                                 "device reads (each waits one pcie.read_rtt for its first completion)"};
  TimeStat read_time{*this, "read_time", "device reads, request to last completion, summed"};

 private:
  // The wire time of `bytes` in SystemC ticks.
  sc_core::sc_time wire_time(uint64_t bytes) const;
  // Puts `bytes` on a direction free at `free`, no earlier than `at`;
  // returns the start and advances `free`.
  sc_core::sc_time occupy(sc_core::sc_time& free, TimeStat& busy, const sc_core::sc_time& at, uint64_t bytes);

  const PcieLink& link_;
  fw::pcie::TlpTally tally_;
  double ticks_per_byte_ = 0;
  sc_core::sc_time rtt_;
  sc_core::sc_time upstream_free_, downstream_free_;  // when each direction is next free
};

}  // namespace nvmesim::models
