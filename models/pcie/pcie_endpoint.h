// A PCIe endpoint function: its configuration space, its MSI-X table and
// Pending Bit Array (BAR2), and the bus-master initiator its DMA and MSI-X
// messages go out through. Devices (the NVMe controller model, a virtio-blk
// function) derive from it and add their own BAR0 and logic.
//
// The configuration space (firmware/pcie/config_space.h, reached through
// config_target: the root complex's ECAM window) is one an operating system
// can enumerate: a type 0 header (PCI Local Bus 3.0 section 6.2) with the
// Identity's ids and class code, a 64-bit memory BAR0 of bar0_size bytes
// and, while the MSI-X table and PBA are there, a 32-bit memory BAR2 of
// kBar2Size bytes, both sized by writing all ones and reading back; the
// capabilities Power Management, MSI-X (Table Size = vectors - 1, the
// table and PBA where they are: BAR2 at 0 and kPbaOffset, or BAR0 after
// msix_in_bar0) and PCI Express (an endpoint's, version 2, with the link's
// MPS, MRRS, generation and lanes from Identity::link); a device appends its
// own capabilities (device_config_space().add_capability). Accesses are
// 1, 2 or 4 bytes, naturally aligned (PCI Express Base 4.0 section 7.2.2,
// ECAM); others fail with TLM_BURST_ERROR_RESPONSE, beyond the 4 KiB with
// TLM_ADDRESS_ERROR_RESPONSE.
//
// What software programs there is stored and reported (config_space()),
// not enforced: a device DMAs whether or not Bus Master Enable is set, and
// its MSI-X messages go whatever MSI-X Enable and Function Mask say (only
// the per-vector Mask bits of the table hold them). The platform's guest
// never writes configuration space (it programs the MSI-X table through
// BAR2 or BAR0, Guest::program_msix, and never sets Bus Master Enable or
// MSI-X Enable), so enforcing the bits would change every run. BAR writes are stored too (the sizing
// writes, an address restored) but do not move the BARs: the root complex
// routes the fixed windows of models/mem/address_map.h. Device Control's
// MPS and MRRS written by software do not change the link's timing
// (PcieLink keeps pcie.mps and pcie.mrrs).
#pragma once

#include <cstdint>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <vector>

#include "nvmesim/firmware/pcie/config_space.h"
#include "nvmesim/models/mem/address_map.h"
#include "nvmesim/models/pcie/pcie_link.h"

namespace nvmesim::models {

class PcieLinkTraffic;

class PcieEndpoint : public sc_core::sc_module {
 public:
  struct Identity {
    uint16_t vendor_id = 0;
    uint16_t device_id = 0;
    uint8_t revision_id = 0;
    uint8_t base_class = 0, sub_class = 0, prog_if = 0;  // class code
    uint16_t subsystem_vendor_id = 0, subsystem_id = 0;
    uint8_t interrupt_pin = 1;  // INTA#
    // BAR0 register: base address and its type bits (bit 2 set: a 64-bit
    // BAR, its upper half BAR1 0), and the size of the device's BAR0 window.
    uint32_t bar0 = 0;
    uint64_t bar0_size = kBar0Size;
    // The link the function is on (pcie.*): its MPS, MRRS, generation and
    // lanes are what the PCI Express capability shows.
    PcieLinkParams link{};
  };
  // The MSI-X space (PCI Local Bus 3.0 section 6.8.2): the table from
  // offset 0, 16 bytes an entry; the PBA, a bit a vector, from kPbaOffset.
  // It is BAR2, unless the device moves it into its BAR0 (msix_in_bar0).
  static constexpr uint32_t kMsixEntryBytes = 16;
  static constexpr uint32_t kPbaOffset = 0x2000;
  // Vector Control bit 0: the vector is masked (every vector is at reset).
  static constexpr uint32_t kVectorMasked = 1;

  // BAR2 and the configuration space may stay unbound (SystemC's
  // SC_ZERO_OR_MORE_BOUND sockets): a platform that programs MSI-X with
  // program_msix_vector, or keeps the table in BAR0, needs neither.
  tlm_utils::simple_target_socket_optional<PcieEndpoint> msix_target;    // BAR2
  tlm_utils::simple_target_socket_optional<PcieEndpoint> config_target;  // configuration space
  tlm_utils::simple_initiator_socket<PcieEndpoint> dma_initiator;  // DMA and MSI writes: must be bound

  PcieEndpoint(sc_core::sc_module_name name, const Identity& identity, uint16_t msix_vectors);

  // Fills a table entry and unmasks it, as a guest's PCI core does through
  // BAR2 (for harnesses without a guest).
  void program_msix_vector(uint16_t vector, uint64_t address, uint32_t data);

  enum class MsixOutcome : uint8_t { Sent, Masked };
  // Signals `vector`: a DWORD write of the entry's data to its address,
  // `delay` after now (advanced by the write); a masked vector only sets its
  // pending bit, and its message goes when it is unmasked.
  MsixOutcome send_msix(uint16_t vector, sc_core::sc_time& delay);
  uint16_t msix_vectors() const { return uint16_t(msix_table_.size()); }
  // A message sent is still on its way to the vCPU (up to and including the
  // time it arrives): work under way for the stall watchdog, as a held
  // completion is (a coalescing timer's interrupt sent just before a
  // watchdog tick was taken for a stall).
  bool msix_in_flight() const;
  bool msix_masked(uint16_t vector) const { return msix_table_.at(vector).control & kVectorMasked; }
  bool msix_pending(uint16_t vector) const { return msix_pending_.at(vector) != 0; }
  // PBA bytes: a bit a vector, in DWORDs.
  uint32_t pba_bytes() const { return (uint32_t(msix_table_.size()) + 31) / 32 * 4; }
  // The configuration space as software left it (Command, MSI-X Enable,
  // Device Control...): stored and reported, not enforced (see above).
  const fw::pci::EndpointConfigSpace& config_space() const { return config_space_; }

 protected:
  // A vector was unmasked with its pending bit set (now cleared): its
  // message goes now. A device that keeps per-message state overrides this.
  virtual void send_pending_msix(uint16_t vector, const sc_core::sc_time& delay);
  // The device maps the MSI-X table at `table_offset` and the PBA at
  // `pba_offset` of its own BAR0; BAR2 is then empty (and its BAR unused).
  void msix_in_bar0(uint32_t table_offset, uint32_t pba_offset);
  // A BAR0 access to the MSI-X space at `msix_offset` (table: 0.., PBA:
  // kPbaOffset..), timed or untimed (returns the bytes done).
  void msix_space_transport(tlm::tlm_generic_payload& p, sc_core::sc_time& delay, uint64_t msix_offset);
  unsigned msix_space_dbg(tlm::tlm_generic_payload& p, uint64_t msix_offset);
  // pcie.mode=link: the device's link, which counts and times its MSI-X
  // messages (as `msix_purpose`) and BAR2 accesses (`register_purpose`).
  void attach_link_traffic(PcieLinkTraffic& traffic, unsigned msix_purpose, unsigned register_purpose);
  PcieLinkTraffic* link_traffic_ = nullptr;
  // Counts the host's MMIO access `p` to one of the device's BARs on the
  // link (nothing without one).
  void count_mmio(unsigned purpose, const tlm::tlm_generic_payload& p, const sc_core::sc_time& delay);
  // The configuration space, for a device to add its capabilities.
  fw::pci::EndpointConfigSpace& device_config_space() { return config_space_; }

  // Guest memory through DMI, asked for once at the end of elaboration
  // (dmi_base_ stays null when the target grants none: DMA then goes
  // through dma_initiator).
  void end_of_elaboration() override;
  uint8_t* dmi_base_ = nullptr;
  sc_core::sc_time dmi_read_latency_, dmi_write_latency_;  // guest memory's access latency
  uint64_t dmi_start_ = 0, dmi_end_ = 0;                   // inclusive end

 private:
  sc_core::sc_time msix_arrival_;  // the latest arrival of a message sent
  unsigned msix_purpose_ = 0, register_purpose_ = 0;
  void msix_b_transport(tlm::tlm_generic_payload& p, sc_core::sc_time& delay);  // BAR2
  void msix_space_b_transport(tlm::tlm_generic_payload& p, sc_core::sc_time& delay);
  // Untimed table and PBA accesses (a guest's set-up, a debugger): never
  // sends a message.
  unsigned msix_transport_dbg(tlm::tlm_generic_payload& p);
  // The table or PBA access of `p`; *unmasked_pending: a Vector Control
  // write unmasked a vector with a message pending (its vector returned).
  bool msix_access(tlm::tlm_generic_payload& p, int* unmasked_pending);
  void config_b_transport(tlm::tlm_generic_payload& p, sc_core::sc_time& delay);
  unsigned config_transport_dbg(tlm::tlm_generic_payload& p);
  // The configuration access of `p`: its response status.
  tlm::tlm_response_status config_access(tlm::tlm_generic_payload& p);

  struct MsixEntry { uint64_t address = 0; uint32_t data = 0; uint32_t control = kVectorMasked; };
  std::vector<MsixEntry> msix_table_;
  std::vector<uint8_t> msix_pending_;
  fw::pci::EndpointConfigSpace config_space_;
  bool msix_in_bar2_ = true;
  tlm::tlm_generic_payload msi_payload_;  // reused: no allocation per message
};

}  // namespace nvmesim::models
