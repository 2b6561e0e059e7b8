// Guest RAM: a TLM-2.0 loosely-timed target over a host buffer.
//
// Addresses on `socket` are offsets into the memory (guest RAM sits at
// physical address 0, see address_map.h). The buffer is an anonymous
// zero-filled mapping that the OS populates lazily, so a multi-GiB memory
// costs nothing until touched.
#pragma once

#include <cstdint>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>

#include "nvmesim/firmware/sim/statistics.h"
#include "nvmesim/models/sim/param_defaults.h"
#include "nvmesim/models/sim/param_visit.h"

namespace nvmesim::models {

// mem.* (see models/sim/param_visit.h).
struct GuestMemoryParams {
  uint64_t size{};           // bytes of guest RAM
  sc_core::sc_time latency;  // per access

  GuestMemoryParams() { set_param_defaults(*this); }  // the visit lines' defaults

  static constexpr const char* param_prefix = "mem";
  template <class V>
  void visit(V& v) {
    using namespace param_units;
    v.size(size, "size", "256m", 16 * MiB, 3 * GiB, "guest RAM (below the 3.5 GiB MMIO hole)");
    v.time(latency, "latency", "0ns", 0, 1 * US, "per-access latency seen by DMA");
  }
};

class GuestMemory : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<GuestMemory> socket;

  // size_bytes > 0 (throws std::invalid_argument otherwise, std::bad_alloc if
  // the host cannot map it). `latency` is added to the annotated delay of each
  // b_transport and reported as the DMI read and write latency.
  GuestMemory(sc_core::sc_module_name name, uint64_t size_bytes,
              sc_core::sc_time latency);
  ~GuestMemory() override;

  GuestMemory(const GuestMemory&) = delete;
  GuestMemory& operator=(const GuestMemory&) = delete;

  // Direct (untimed) host access for the platform.
  uint8_t* data() { return data_; }
  const uint8_t* data() const { return data_; }
  uint64_t size() const { return size_; }
  // Pointer to [addr, addr+len) or nullptr when any byte is out of range.
  // Inline: the guest driver reaches memory through it several times per I/O.
  uint8_t* ptr(uint64_t addr, uint64_t len) {
    if (addr >= size_ || len > size_ - addr) return nullptr;
    return data_ + addr;
  }
  const uint8_t* ptr(uint64_t addr, uint64_t len) const {
    if (addr >= size_ || len > size_ - addr) return nullptr;
    return data_ + addr;
  }

  const sc_core::sc_time& latency() const { return latency_; }

  // Tells every DMI holder that its pointers are gone (e.g. before a
  // checkpoint/restore); ranges are memory offsets, inclusive.
  void invalidate_dmi(uint64_t start = 0, uint64_t end = ~0ULL);

  struct Counters : stats::Group {
    using Scalar = stats::Scalar;
    static constexpr stats::Unit COUNT = stats::Unit::Count, BYTES = stats::Unit::Bytes;
    Scalar reads{*this, "reads", COUNT, "read transactions served (b_transport)"};
    Scalar writes{*this, "writes", COUNT, "write transactions served (b_transport)"};
    Scalar read_bytes{*this, "read_bytes", BYTES, "bytes read through b_transport"};
    Scalar write_bytes{*this, "write_bytes", BYTES, "bytes written through b_transport"};
    Scalar errors{*this, "errors", COUNT, "transactions answered with an error response"};
    Scalar dmi_grants{*this, "dmi_grants", COUNT, "direct memory interface grants"};
  };
  Counters& counters() { return counters_; }
  const Counters& counters() const { return counters_; }

 private:
  void b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  bool get_direct_mem_ptr(tlm::tlm_generic_payload& trans, tlm::tlm_dmi& dmi);
  unsigned int transport_dbg(tlm::tlm_generic_payload& trans);
  // Validates and performs the access; returns the response status.
  tlm::tlm_response_status access(tlm::tlm_generic_payload& trans);

  uint8_t* data_ = nullptr;
  uint64_t size_ = 0;
  sc_core::sc_time latency_;
  Counters counters_;
};

}  // namespace nvmesim::models
