// PcieRootComplex: routes CPU MMIO to the device's windows, device DMA to
// guest memory and MSI writes to the interrupt path, adding link timing.
//
//   vCPU ──► cpu_target ──┬─► bar0_initiator      (BAR0 window, relative addr)
//                         ├─► msix_bar_initiator  (BAR2 window, relative addr)
//                         ├─► config_initiator    (ECAM window, relative addr)
//                         └─► TLM_ADDRESS_ERROR_RESPONSE elsewhere
//                         delay += link.mmio_time(write, len)
//
//   device ─► dma_target ─┬─► MsiSink::deliver_msi (MSI window writes)
//                         ├─► mem_initiator (guest RAM, addr - kGuestRamBase)
//                         │     delay += link.read_time/write_time(len) (emulated mode)
//                         └─► TLM_ADDRESS_ERROR_RESPONSE elsewhere
//
// Link time is added to the annotated delay only for successful accesses.
// Device traffic on a link (pcie.mode=link) is timed by the device's own
// link model (models/pcie/pcie_link_traffic.h), which sees DMI and
// transported accesses alike and queues them; the root complex then adds no
// time to device DMA and MSI writes (it still adds emulated-mode costs).
// DMI on dma_target forwards to memory (the device charges link() time itself;
// such accesses are not counted here). DMI on cpu_target is always denied.
// invalidate_direct_mem_ptr from memory is forwarded to the device.
// transport_dbg is routed like b_transport, untimed and uncounted.
#pragma once

#include <cstdint>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "nvmesim/firmware/sim/statistics.h"
#include "nvmesim/models/mem/address_map.h"
#include "nvmesim/models/pcie/pcie_link.h"

namespace nvmesim::models {

// Receiver of MSI/MSI-X messages (the interrupt controller / hypervisor).
struct MsiSink {
  virtual ~MsiSink() = default;
  // apic_id: MSI address bits 19:12 (= vCPU index); vector: data bits 7:0;
  // delay: the annotated (local-time) delay of the message's arrival.
  virtual void deliver_msi(uint32_t apic_id, uint32_t vector,
                           const sc_core::sc_time& delay) = 0;
};

class PcieRootComplex : public sc_core::sc_module {
 public:
  // Upstream side.
  tlm_utils::simple_target_socket<PcieRootComplex> cpu_target;  // vCPU MMIO
  tlm_utils::simple_target_socket<PcieRootComplex> dma_target;  // bus master

  // Downstream side.
  tlm_utils::simple_initiator_socket<PcieRootComplex> bar0_initiator;
  tlm_utils::simple_initiator_socket<PcieRootComplex> msix_bar_initiator;
  tlm_utils::simple_initiator_socket<PcieRootComplex> config_initiator;
  tlm_utils::simple_initiator_socket<PcieRootComplex> mem_initiator;

  PcieRootComplex(sc_core::sc_module_name name, PcieLink link);

  void bind_msi_sink(MsiSink& sink) { msi_sink_ = &sink; }
  const PcieLink& link() const { return link_; }

  struct Counters : stats::Group {
    using Scalar = stats::Scalar;
    static constexpr stats::Unit COUNT = stats::Unit::Count, BYTES = stats::Unit::Bytes;
    Scalar mmio_reads{*this, "mmio_reads", COUNT, "CPU reads routed to a device window"};
    Scalar mmio_writes{*this, "mmio_writes", COUNT, "CPU writes routed to a device window"};
    Scalar mmio_errors{*this, "mmio_errors", COUNT, "CPU accesses outside every window, or failed by the device"};
    Scalar dma_reads{*this, "dma_reads", COUNT, "device reads of memory"};
    Scalar dma_writes{*this, "dma_writes", COUNT, "device writes to memory"};
    Scalar dma_read_bytes{*this, "dma_read_bytes", BYTES, "bytes devices read from memory"};
    Scalar dma_write_bytes{*this, "dma_write_bytes", BYTES, "bytes devices wrote to memory"};
    Scalar dma_errors{*this, "dma_errors", COUNT, "device accesses outside memory, or failed by it"};
    Scalar msi_messages{*this, "msi_messages", COUNT, "MSI writes delivered to the interrupt path"};
  };
  Counters& counters() { return counters_; }
  const Counters& counters() const { return counters_; }

 private:
  // The downstream socket for a CPU access and its window base; nullptr if
  // [addr, addr+len) is not inside one window.
  tlm_utils::simple_initiator_socket<PcieRootComplex>* cpu_route(
      uint64_t addr, uint64_t len, uint64_t& base);

  void cpu_b_transport(tlm::tlm_generic_payload& trans,
                       sc_core::sc_time& delay);
  unsigned int cpu_transport_dbg(tlm::tlm_generic_payload& trans);
  bool cpu_get_direct_mem_ptr(tlm::tlm_generic_payload& trans,
                              tlm::tlm_dmi& dmi);

  void dma_b_transport(tlm::tlm_generic_payload& trans,
                       sc_core::sc_time& delay);
  unsigned int dma_transport_dbg(tlm::tlm_generic_payload& trans);
  bool dma_get_direct_mem_ptr(tlm::tlm_generic_payload& trans,
                              tlm::tlm_dmi& dmi);
  void mem_invalidate_direct_mem_ptr(sc_dt::uint64 start, sc_dt::uint64 end);

  void deliver_msi(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);

  PcieLink link_;
  MsiSink* msi_sink_ = nullptr;
  Counters counters_;
};

}  // namespace nvmesim::models
