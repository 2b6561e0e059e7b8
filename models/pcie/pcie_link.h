// PcieLink: the timing of the path between the NVMe function and the root
// complex. Plain C++ (no sc_module); times are returned as sc_time.
//
// Two modes:
//
//  * Link: a physical PCIe link.
//      raw rate R      = 2.5, 5, 8, 16, 32 GT/s per lane for generation 1..5
//      encoding eff. E = 8/10 for gen 1-2, 128/130 for gen 3-5
//      bandwidth  BW   = R * lanes * E / 8            [bytes per ns, per direction]
//      O               = tlp_overhead_bytes           (default 24: framing, sequence
//                        number, 4DW header with a 64-bit address, LCRC)
//
//      write_time(n)   = (n + ceil(n / MPS) * O) / BW
//                        Posted memory writes: ceil(n/MPS) TLPs of at most MPS
//                        payload bytes each, serialized back to back.
//      read_time(n)    = RTT + (n + C(n) * O) / BW
//                        The device issues ceil(n/MRRS) read requests back to
//                        back; each request of r bytes is answered by
//                        ceil(r/MPS) completions (completion splitting at MPS,
//                        each ending on the 64-byte read completion boundary:
//                        the same count for a transfer from an aligned address;
//                        firmware/pcie/tlp.h counts any address).
//                        C(n) = sum over requests of ceil(r/MPS). Requests travel
//                        on the other direction of the full-duplex link and are
//                        fully pipelined (no tag / credit limits), so the
//                        time is one round trip (RTT = read_round_trip_ns,
//                        request to first completion) plus the serialization
//                        of every completion TLP.
//      mmio_time(true,  b) = (b + O) / BW    one posted TLP (default b = 4)
//      mmio_time(false, b) = RTT             one non-posted round trip
//      n == 0 costs nothing.
//      These are one transfer's times on an idle link; PcieLinkTraffic
//      (models/pcie/pcie_link_traffic.h) is the link as a shared resource:
//      it counts every TLP and queues each direction's traffic.
//
//  * Emulated: the "device" is software in the host, so a DMA is a memcpy,
//      by the device thread doing it (each thread copies at BW). The data
//      of every read and write is copied whatever the backend (QEMU maps
//      the guest's pages and the block layer fills or drains them; null-co
//      with read-zeroes zero-fills them).
//      BW              = host_copy_gbps                [GB/s == bytes per ns]
//      write_time(n) = read_time(n) = host_access_overhead_ns + n / BW
//      mmio_time(any)  = host_access_overhead_ns
//      (VM-exit costs of a trapped MMIO are the hypervisor model's business,
//      not the link's.) n == 0 costs nothing for DMA.
#pragma once

#include <cstdint>
#include <string>

#include <systemc>

#include "nvmesim/firmware/pcie/tlp.h"
#include "nvmesim/models/sim/param_defaults.h"
#include "nvmesim/models/sim/param_visit.h"

namespace nvmesim::models {

enum class PcieMode { Emulated, Link };
inline constexpr EnumEntry<PcieMode> pcie_modes[] = {{PcieMode::Emulated, "emulated"},
                                                     {PcieMode::Link, "link"}};
inline const char* to_string(PcieMode mode) { return enum_name(pcie_modes, mode); }

// The link's parameters, pcie.* (see models/sim/param_visit.h).
struct PcieLinkParams {
  PcieMode mode{};
  // Link mode.
  unsigned generation{};               // 1..5
  unsigned lanes{};                    // 1, 2, 4, 8, 16
  uint32_t max_payload_size{};         // MPS: 128..4096, power of 2
  uint32_t max_read_request_size{};    // MRRS: 128..4096, power of 2
  uint32_t tlp_overhead_bytes{};       // per TLP, 0..64
  double read_round_trip_ns{};         // >= 0
  // Emulated mode.
  double host_copy_gbps{};             // GB/s, > 0
  double host_access_overhead_ns{};    // >= 0

  PcieLinkParams() { set_param_defaults(*this); }  // the visit lines' defaults

  static constexpr const char* param_prefix = "pcie";
  static constexpr unsigned lane_widths[] = {1, 2, 4, 8, 16};
  static constexpr unsigned tlp_sizes[] = {128, 256, 512, 1024, 2048, 4096};
  template <class V>
  void visit(V& v) {
    using namespace param_units;
    v.choice(mode, "mode", "emulated", pcie_modes, "",
             "emulated device (host memory copies) or a PCIe link model");
    v.integer(generation, "gen", "3", "", 1, 5, "link generation (pcie.mode=link)");
    v.choice(lanes, "lanes", "4", lane_widths, "lanes", "link width");
    v.choice(max_payload_size, "mps", "256", tlp_sizes, "bytes", "max payload size");
    v.choice(max_read_request_size, "mrrs", "512", tlp_sizes, "bytes", "max read request size");
    v.integer(tlp_overhead_bytes, "tlp_overhead", "24", "bytes", 0, 64,
              "header and framing bytes per TLP");
    v.time(read_round_trip_ns, "read_rtt", "700ns", 0, 100 * US, "round trip of a DMA read request");
    v.real(host_copy_gbps, "host_copy_gbps", "10", "GB/s", 0.1, 1000,
           "host memcpy bandwidth of a device thread: every DMA incl. data, any backend (pcie.mode=emulated)");
    v.time(host_access_overhead_ns, "emulated_access", "20ns", 0, 10 * US,
           "fixed cost of one emulated DMA access (pcie.mode=emulated)");
  }
};

class PcieLink {
 public:
  // Validates (std::invalid_argument on a bad field).
  explicit PcieLink(const PcieLinkParams& params);

  // Throws std::invalid_argument with a one-line message naming the field and
  // its allowed values, e.g.
  //   "pcie.lanes: 3 is not allowed (allowed: 1, 2, 4, 8, 16)".
  // Fields are named by their configuration keys (PcieLinkParams::visit):
  //   generation -> pcie.gen, lanes -> pcie.lanes, max_payload_size ->
  //   pcie.mps, max_read_request_size -> pcie.mrrs, tlp_overhead_bytes ->
  //   pcie.tlp_overhead, read_round_trip_ns -> pcie.read_rtt, host_copy_gbps
  //   -> pcie.host_copy_gbps, host_access_overhead_ns -> pcie.emulated_access.
  // Fields of the mode not selected are checked too.
  static void validate(const PcieLinkParams& params);

  const PcieLinkParams& params() const { return params_; }
  PcieMode mode() const { return params_.mode; }

  // Raw rate per lane in GT/s for a generation (1..5); 0 for others.
  static double gigatransfers_per_lane(unsigned generation);
  // 0.8 for gen 1-2, 128/130 for gen 3-5.
  static double encoding_efficiency(unsigned generation);

  // Link: R * lanes * E / 8. Emulated: host_copy_gbps. Per direction.
  double bandwidth_bytes_per_ns() const { return bw_; }

  // The TLP rules of this link (firmware/pcie/tlp.h): MPS, MRRS, a 64-byte
  // read completion boundary, pcie.tlp_overhead.
  fw::pcie::TlpRules tlp_rules() const;
  // Number of TLPs of a transfer from a 4 KiB-aligned address (Link mode
  // definitions; usable in any mode), by those rules.
  uint64_t write_tlps(uint64_t bytes) const;       // ceil(bytes / MPS)
  uint64_t read_requests(uint64_t bytes) const;    // ceil(bytes / MRRS)
  uint64_t read_completions(uint64_t bytes) const; // C(bytes), see above

  sc_core::sc_time write_time(uint64_t bytes) const;
  sc_core::sc_time read_time(uint64_t bytes) const;
  sc_core::sc_time mmio_time(bool write, uint32_t bytes = 4) const;

  // Same as the sc_time functions, in (unrounded) nanoseconds.
  double write_ns(uint64_t bytes) const;
  double read_ns(uint64_t bytes) const;
  double mmio_ns(bool write, uint32_t bytes = 4) const;

  // One-line human description, e.g. "PCIe gen3 x4 MPS 256 MRRS 512".
  std::string describe() const;

 private:
  PcieLinkParams params_;
  double bw_ = 0.0;
  // The last size asked for and its time, per direction: a run moves the same
  // block size over and over, and an sc_time from nanoseconds is costly.
  struct LastTime {
    uint64_t bytes = ~uint64_t(0);
    sc_core::sc_time time;
  };
  mutable LastTime last_write_, last_read_;
};

}  // namespace nvmesim::models
