// A PCI Express function's configuration space as an operating system sees
// it: 4 KiB of registers with, per bit, whether software may write it, or
// clear it by writing 1 (RW1C), and the capability list. Plain C++: no
// SystemC (the endpoint model, models/pcie/pcie_endpoint, gives it a socket).
//
// ConfigSpace is the register file: initial values and masks set by the
// device, and the checked 1, 2 and 4-byte accesses of configuration reads
// and writes (naturally aligned: PCI Express Base 4.0 section 7.2.2, the
// ECAM's accesses; anything else is refused). EndpointConfigSpace fills it
// for an endpoint:
//
//  * the type 0 header (PCI Local Bus 3.0 section 6.2): ids, class code,
//    Revision, Header Type 0, Subsystem ids, Interrupt Pin; Command with
//    Memory Space Enable, Bus Master Enable, Parity Error Response, SERR#
//    Enable and Interrupt Disable writable (the rest hardwired 0: no I/O
//    space); Status with Capabilities List set and its error bits RW1C;
//    Cache Line Size and Interrupt Line writable (no effect);
//  * BARs (section 6.2.5.1): BAR0 a 64-bit memory BAR (BAR0 and BAR1) of the
//    device's BAR0 size, BAR2 a 32-bit memory BAR holding the MSI-X table
//    and PBA when the device keeps them there. An address BAR's bits below
//    its size are hardwired 0, so writing all ones and reading back gives
//    ~(size - 1) with the type bits, the sizing Linux's __pci_read_base
//    does; BAR1 (the upper half) is writable whole. Other BARs and the
//    Expansion ROM BAR read 0 and are not writable;
//  * the capability list from 0x40 (Capabilities Pointer at 0x34), in this
//    order: Power Management (01h, PCI Bus Power Management Interface 1.2:
//    PMC version 011b, No_Soft_Reset; PMCSR's PowerState takes D0 and D3hot
//    and drops a write of the unsupported D1 or D2, as its section 3.2.4
//    asks),
//    MSI-X (11h, PCI Local Bus 3.0 section 6.8.2: Table Size = vectors - 1,
//    MSI-X Enable and Function Mask writable, Table and PBA Offset/BIR),
//    PCI Express (10h, PCI Express Base 4.0 section 7.5.3: version 2,
//    device/port type PCI Express Endpoint; Device Capabilities'
//    Max_Payload_Size Supported and Device Control's Max_Payload_Size and
//    Max_Read_Request_Size from the link's MPS and MRRS; Link Capabilities'
//    Max Link Speed and Width, Link Status' current ones and Link
//    Capabilities 2's Supported Link Speeds Vector from the link's
//    generation and lanes). A device appends its own with add_capability.
//
// The registers are stored and reported; what a write of an enable bit
// means for the device (Bus Master Enable and DMA, MSI-X Enable and its
// messages) is the model's to decide (the endpoint model does not enforce
// them: see models/pcie/pcie_endpoint.h).
#pragma once

#include <array>
#include <cstdint>

namespace nvmesim::fw::pci {

// Header offsets (PCI Local Bus 3.0 section 6.1, type 0).
namespace cfg {
inline constexpr unsigned VENDOR_ID = 0x00, DEVICE_ID = 0x02, COMMAND = 0x04, STATUS = 0x06;
inline constexpr unsigned REVISION_ID = 0x08, CLASS_PROG_IF = 0x09, CLASS_SUB = 0x0A, CLASS_BASE = 0x0B;
inline constexpr unsigned CACHE_LINE_SIZE = 0x0C, LATENCY_TIMER = 0x0D, HEADER_TYPE = 0x0E, BIST = 0x0F;
inline constexpr unsigned BAR0 = 0x10;  // BAR n at BAR0 + 4 n, n = 0..5
inline constexpr unsigned SUBSYSTEM_VENDOR_ID = 0x2C, SUBSYSTEM_ID = 0x2E, EXPANSION_ROM = 0x30;
inline constexpr unsigned CAPABILITIES_POINTER = 0x34, INTERRUPT_LINE = 0x3C, INTERRUPT_PIN = 0x3D;
inline constexpr unsigned CAPABILITIES_START = 0x40;  // the first byte after the header

// Command register bits.
inline constexpr uint16_t CMD_IO_SPACE = 1u << 0, CMD_MEMORY_SPACE = 1u << 1, CMD_BUS_MASTER = 1u << 2;
inline constexpr uint16_t CMD_PARITY_ERROR_RESPONSE = 1u << 6, CMD_SERR_ENABLE = 1u << 8;
inline constexpr uint16_t CMD_INTX_DISABLE = 1u << 10;
// Status register bits.
inline constexpr uint16_t STS_INTERRUPT = 1u << 3, STS_CAPABILITIES_LIST = 1u << 4;
inline constexpr uint16_t STS_RW1C = 0xF900;  // Master Data Parity Error (8), Signaled/Received Target Abort (11, 12),
                                              // Received Master Abort (13), Signaled System Error (14), Detected Parity Error (15)
// Memory BAR type bits (section 6.2.5.1).
inline constexpr uint32_t BAR_MEM_64 = 0x4, BAR_MEM_PREFETCHABLE = 0x8;

// Capability IDs.
inline constexpr uint8_t CAP_PM = 0x01, CAP_VENDOR = 0x09, CAP_EXPRESS = 0x10, CAP_MSIX = 0x11;

// Power Management capability (PCI Bus Power Management Interface 1.2 section 3.2).
inline constexpr unsigned PM_PMC = 0x02, PM_PMCSR = 0x04, PM_BYTES = 8;
inline constexpr uint16_t PMC_VERSION_1_2 = 0x3;
inline constexpr uint16_t PMCSR_POWER_STATE = 0x3, PMCSR_NO_SOFT_RESET = 1u << 3;
inline constexpr uint16_t PMCSR_PME_STATUS = 1u << 15;
inline constexpr uint8_t POWER_D0 = 0, POWER_D3HOT = 3;

// MSI-X capability (PCI Local Bus 3.0 section 6.8.2).
inline constexpr unsigned MSIX_CONTROL = 0x02, MSIX_TABLE = 0x04, MSIX_PBA = 0x08, MSIX_BYTES = 12;
inline constexpr uint16_t MSIX_TABLE_SIZE = 0x07FF, MSIX_FUNCTION_MASK = 1u << 14, MSIX_ENABLE = 1u << 15;
inline constexpr uint32_t MSIX_BIR = 0x7;  // Table/PBA BIR; the offset is the rest (QWORD aligned)

// PCI Express capability (PCI Express Base 4.0 section 7.5.3), a version 2
// endpoint's: up to and including Slot Status 2.
inline constexpr unsigned EXP_CAPS = 0x02, EXP_DEVCAP = 0x04, EXP_DEVCTL = 0x08, EXP_DEVSTA = 0x0A;
inline constexpr unsigned EXP_LNKCAP = 0x0C, EXP_LNKCTL = 0x10, EXP_LNKSTA = 0x12;
inline constexpr unsigned EXP_DEVCAP2 = 0x24, EXP_DEVCTL2 = 0x28, EXP_LNKCAP2 = 0x2C, EXP_LNKCTL2 = 0x30;
inline constexpr unsigned EXP_BYTES = 0x3C;
inline constexpr uint16_t EXP_VERSION_2 = 0x2, EXP_TYPE_ENDPOINT = 0x0 << 4;
inline constexpr uint32_t DEVCAP_MPSS = 0x7, DEVCAP_ROLE_BASED_ERROR = 1u << 15;
inline constexpr uint16_t DEVCTL_MPS_SHIFT = 5, DEVCTL_MRRS_SHIFT = 12;
inline constexpr uint16_t DEVCTL_MPS = 0x7 << DEVCTL_MPS_SHIFT, DEVCTL_MRRS = 0x7 << DEVCTL_MRRS_SHIFT;
inline constexpr uint16_t DEVCTL_RELAXED_ORDERING = 1u << 4, DEVCTL_NO_SNOOP = 1u << 11;
inline constexpr uint32_t LNKCAP_SPEED = 0xF, LNKCAP_WIDTH_SHIFT = 4, LNKCAP_WIDTH = 0x3F << 4;
inline constexpr uint16_t LNKSTA_SPEED = 0xF, LNKSTA_WIDTH_SHIFT = 4, LNKSTA_WIDTH = 0x3F << 4;
}  // namespace cfg

// The Max_Payload_Size / Max_Read_Request_Size encoding of Device Control
// (and Max_Payload_Size Supported of Device Capabilities): 128 bytes 000b,
// 256 001b, ... 4096 101b. Bytes not a power of two in 128..4096: the
// nearest encoding below (at least 000b).
constexpr uint16_t payload_size_code(uint32_t bytes) {
  uint16_t code = 0;
  while (code < 5 && (128u << (code + 1)) <= bytes) ++code;
  return code;
}
constexpr uint32_t payload_size_bytes(uint16_t code) { return 128u << (code & 0x7); }
static_assert(payload_size_code(128) == 0 && payload_size_code(256) == 1 && payload_size_code(512) == 2);
static_assert(payload_size_code(4096) == 5 && payload_size_code(8192) == 5 && payload_size_code(64) == 0);

class ConfigSpace {
 public:
  static constexpr unsigned kBytes = 4096;
  virtual ~ConfigSpace() = default;

  // The device's side: values and masks, unaffected by the masks.
  void set8(unsigned offset, uint8_t v) { bytes_.at(offset) = v; }
  void set16(unsigned offset, uint16_t v) { set_le(offset, v, 2); }
  void set32(unsigned offset, uint32_t v) { set_le(offset, v, 4); }
  uint8_t get8(unsigned offset) const { return bytes_.at(offset); }
  uint16_t get16(unsigned offset) const { return uint16_t(get_le(offset, 2)); }
  uint32_t get32(unsigned offset) const { return get_le(offset, 4); }
  // Bits software may write (`mask` over `len` bytes from `offset`).
  void set_writable(unsigned offset, unsigned len, uint32_t mask);
  // Bits a write of 1 clears (RW1C); a write of 0 leaves them.
  void set_write_one_to_clear(unsigned offset, unsigned len, uint32_t mask);
  uint32_t writable(unsigned offset, unsigned len) const;

  // A configuration read or write of `len` (1, 2 or 4) bytes at `offset`,
  // naturally aligned and inside the space; false (and nothing done, *value
  // untouched) otherwise. Values are little-endian, the low byte at `offset`.
  static bool access_ok(uint64_t offset, unsigned len) {
    return (len == 1 || len == 2 || len == 4) && offset % len == 0 && offset + len <= kBytes;
  }
  bool read(uint64_t offset, unsigned len, uint32_t* value) const;
  bool write(uint64_t offset, unsigned len, uint32_t value);

  // Appends a capability of `bytes` (ID and next pointer included) to the
  // list, DWORD aligned after the last one (the first at 0x40; PCI Local Bus
  // 3.0 section 6.7 keeps the list in 0x40..0xFF): sets the Capabilities
  // Pointer when the list was empty and Status' Capabilities List bit.
  // Returns its offset; throws std::length_error when it does not fit.
  unsigned add_capability(uint8_t id, unsigned bytes);
  // The first capability with `id` walking the list from 0x34; 0 if none.
  unsigned find_capability(uint8_t id) const;

 protected:
  // Called after a write changed the bytes [offset, offset + len), with the
  // bytes as they were (a register with a rule beyond its masks).
  virtual void written(unsigned /*offset*/, unsigned /*len*/, const uint8_t* /*before*/) {}

 private:
  void set_le(unsigned offset, uint32_t v, unsigned len);
  uint32_t get_le(unsigned offset, unsigned len) const;
  std::array<uint8_t, kBytes> bytes_{};
  std::array<uint8_t, kBytes> writable_{};
  std::array<uint8_t, kBytes> rw1c_{};
  unsigned last_capability_ = 0;  // 0: none yet
  unsigned capabilities_end_ = cfg::CAPABILITIES_START;
};

// What an endpoint function's configuration space shows.
struct EndpointConfig {
  uint16_t vendor_id = 0, device_id = 0;
  uint8_t revision_id = 0;
  uint8_t base_class = 0, sub_class = 0, prog_if = 0;
  uint16_t subsystem_vendor_id = 0, subsystem_id = 0;
  uint8_t interrupt_pin = 1;  // INTA#; 0: none
  // BAR0: a memory BAR at bar0_base of bar0_size bytes (a power of two, at
  // least 16), 64-bit (BAR0 and BAR1) unless bar0_64bit is false.
  uint64_t bar0_base = 0, bar0_size = 0;
  bool bar0_64bit = true;
  // BAR2: a 32-bit memory BAR; 0 bytes: unused.
  uint64_t bar2_base = 0, bar2_size = 0;
  // MSI-X: 0 vectors, no capability. The table and the PBA: in BAR `*_bir`
  // at `*_offset`.
  uint16_t msix_vectors = 0;
  uint8_t msix_table_bir = 2, msix_pba_bir = 2;
  uint32_t msix_table_offset = 0, msix_pba_offset = 0;
  // The link: MPS and MRRS in bytes, generation 1..5 (2.5 .. 32 GT/s), lanes.
  uint32_t max_payload_size = 256, max_read_request_size = 512;
  unsigned link_generation = 3, link_lanes = 4;
};

class EndpointConfigSpace : public ConfigSpace {
 public:
  explicit EndpointConfigSpace(const EndpointConfig& config);

  const EndpointConfig& config() const { return config_; }
  // Moves the MSI-X table and PBA (a device that maps them into another BAR).
  void set_msix_location(uint8_t table_bir, uint32_t table_offset, uint8_t pba_bir, uint32_t pba_offset);
  // BAR `index` (0..5) reads 0 and is not writable from now on.
  void clear_bar(unsigned index);

  unsigned pm_capability() const { return pm_; }
  unsigned msix_capability() const { return msix_; }  // 0: no MSI-X
  unsigned express_capability() const { return express_; }

  // What software has programmed.
  uint16_t command() const { return get16(cfg::COMMAND); }
  bool memory_space_enabled() const { return command() & cfg::CMD_MEMORY_SPACE; }
  bool bus_master_enabled() const { return command() & cfg::CMD_BUS_MASTER; }
  bool intx_disabled() const { return command() & cfg::CMD_INTX_DISABLE; }
  bool msix_enabled() const { return msix_ && (get16(msix_ + cfg::MSIX_CONTROL) & cfg::MSIX_ENABLE); }
  bool msix_function_masked() const {
    return msix_ && (get16(msix_ + cfg::MSIX_CONTROL) & cfg::MSIX_FUNCTION_MASK);
  }
  uint8_t power_state() const { return uint8_t(get16(pm_ + cfg::PM_PMCSR) & cfg::PMCSR_POWER_STATE); }
  // Device Control's fields, in bytes.
  uint32_t max_payload_size() const;
  uint32_t max_read_request_size() const;

 protected:
  void written(unsigned offset, unsigned len, const uint8_t* before) override;

 private:
  void set_memory_bar(unsigned index, uint64_t base, uint64_t size, bool is64);
  EndpointConfig config_;
  unsigned pm_ = 0, msix_ = 0, express_ = 0;
};

}  // namespace nvmesim::fw::pci
