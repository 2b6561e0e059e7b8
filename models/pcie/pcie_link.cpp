#include "nvmesim/models/pcie/pcie_link.h"

#include <cmath>
#include <sstream>
#include <stdexcept>

namespace nvmesim::models {

namespace {

bool is_pow2_in(uint64_t v, uint64_t lo, uint64_t hi) {
  return v >= lo && v <= hi && (v & (v - 1)) == 0;
}

template <typename T>
[[noreturn]] void bad(const char* field, T value, const char* allowed) {
  std::ostringstream os;
  os << "pcie." << field << ": " << value << " is not allowed (allowed: "
     << allowed << ")";
  throw std::invalid_argument(os.str());
}

sc_core::sc_time ns(double v) { return sc_core::sc_time(v, sc_core::SC_NS); }

}  // namespace

double PcieLink::gigatransfers_per_lane(unsigned generation) {
  switch (generation) {
    case 1: return 2.5;
    case 2: return 5.0;
    case 3: return 8.0;
    case 4: return 16.0;
    case 5: return 32.0;
    default: return 0.0;
  }
}

double PcieLink::encoding_efficiency(unsigned generation) {
  return generation <= 2 ? 8.0 / 10.0 : 128.0 / 130.0;
}

void PcieLink::validate(const PcieLinkParams& p) {
  if (p.mode != PcieMode::Emulated && p.mode != PcieMode::Link) {
    bad("mode", static_cast<int>(p.mode), "emulated, link");
  }
  if (p.generation < 1 || p.generation > 5) {
    bad("gen", p.generation, "1, 2, 3, 4, 5");
  }
  if (!is_pow2_in(p.lanes, 1, 16)) {
    bad("lanes", p.lanes, "1, 2, 4, 8, 16");
  }
  if (!is_pow2_in(p.max_payload_size, 128, 4096)) {
    bad("mps", p.max_payload_size,
        "128, 256, 512, 1024, 2048, 4096");
  }
  if (!is_pow2_in(p.max_read_request_size, 128, 4096)) {
    bad("mrrs", p.max_read_request_size,
        "128, 256, 512, 1024, 2048, 4096");
  }
  if (p.tlp_overhead_bytes > 64) {
    bad("tlp_overhead", p.tlp_overhead_bytes, "0..64");
  }
  if (!std::isfinite(p.read_round_trip_ns) || p.read_round_trip_ns < 0) {
    bad("read_rtt", p.read_round_trip_ns, "finite, >= 0 ns");
  }
  if (!std::isfinite(p.host_copy_gbps) || p.host_copy_gbps <= 0) {
    bad("host_copy_gbps", p.host_copy_gbps, "finite, > 0 GB/s");
  }
  if (!std::isfinite(p.host_access_overhead_ns) ||
      p.host_access_overhead_ns < 0) {
    bad("emulated_access", p.host_access_overhead_ns, "finite, >= 0 ns");
  }
}

PcieLink::PcieLink(const PcieLinkParams& params) : params_(params) {
  validate(params_);
  if (params_.mode == PcieMode::Link) {
    bw_ = gigatransfers_per_lane(params_.generation) * params_.lanes *
          encoding_efficiency(params_.generation) / 8.0;
  } else {
    bw_ = params_.host_copy_gbps;
  }
}

fw::pcie::TlpRules PcieLink::tlp_rules() const {
  fw::pcie::TlpRules r;
  r.max_payload = params_.max_payload_size;
  r.max_read_request = params_.max_read_request_size;
  r.overhead = params_.tlp_overhead_bytes;
  return r;
}

uint64_t PcieLink::write_tlps(uint64_t bytes) const {
  return fw::pcie::posted_write_split(tlp_rules(), 0, bytes).tlps;
}

uint64_t PcieLink::read_requests(uint64_t bytes) const {
  return fw::pcie::read_request_split(tlp_rules(), 0, bytes).tlps;
}

uint64_t PcieLink::read_completions(uint64_t bytes) const {
  return fw::pcie::read_completion_split(tlp_rules(), 0, bytes).tlps;
}

double PcieLink::write_ns(uint64_t bytes) const {
  if (bytes == 0) return 0.0;
  if (params_.mode == PcieMode::Emulated) {
    return params_.host_access_overhead_ns + static_cast<double>(bytes) / bw_;
  }
  const double wire = static_cast<double>(bytes) +
                      static_cast<double>(write_tlps(bytes)) *
                          params_.tlp_overhead_bytes;
  return wire / bw_;
}

double PcieLink::read_ns(uint64_t bytes) const {
  if (bytes == 0) return 0.0;
  if (params_.mode == PcieMode::Emulated) {
    return params_.host_access_overhead_ns + static_cast<double>(bytes) / bw_;
  }
  const double wire = static_cast<double>(bytes) +
                      static_cast<double>(read_completions(bytes)) *
                          params_.tlp_overhead_bytes;
  return params_.read_round_trip_ns + wire / bw_;
}

double PcieLink::mmio_ns(bool write, uint32_t bytes) const {
  if (params_.mode == PcieMode::Emulated) return params_.host_access_overhead_ns;
  if (write) {
    return (static_cast<double>(bytes) + params_.tlp_overhead_bytes) / bw_;
  }
  return params_.read_round_trip_ns;
}

sc_core::sc_time PcieLink::write_time(uint64_t bytes) const {
  if (bytes != last_write_.bytes) last_write_ = {bytes, ns(write_ns(bytes))};
  return last_write_.time;
}

sc_core::sc_time PcieLink::read_time(uint64_t bytes) const {
  if (bytes != last_read_.bytes) last_read_ = {bytes, ns(read_ns(bytes))};
  return last_read_.time;
}

sc_core::sc_time PcieLink::mmio_time(bool write, uint32_t bytes) const {
  return ns(mmio_ns(write, bytes));
}

std::string PcieLink::describe() const {
  std::ostringstream os;
  if (params_.mode == PcieMode::Emulated) {
    os << "emulated PCIe (host copy " << params_.host_copy_gbps << " GB/s, "
       << params_.host_access_overhead_ns << " ns per access)";
  } else {
    os << "PCIe gen" << params_.generation << " x" << params_.lanes << " MPS "
       << params_.max_payload_size << " MRRS "
       << params_.max_read_request_size << " (" << bw_ << " B/ns, RTT "
       << params_.read_round_trip_ns << " ns)";
  }
  return os.str();
}

}  // namespace nvmesim::models
