#include "nvmesim/firmware/pcie/config_space.h"

#include <cstring>
#include <stdexcept>

namespace nvmesim::fw::pci {

// ---------------------------------------------------------------- the register file
namespace {

// `len` bytes of `v`, little-endian, into one of the per-byte arrays.
template <class Bytes>
void put_le(Bytes& a, unsigned offset, uint32_t v, unsigned len) {
  for (unsigned i = 0; i < len; ++i) a.at(offset + i) = uint8_t(v >> (8 * i));
}

template <class Bytes>
uint32_t take_le(const Bytes& a, unsigned offset, unsigned len) {
  uint32_t v = 0;
  for (unsigned i = 0; i < len; ++i) v |= uint32_t(a.at(offset + i)) << (8 * i);
  return v;
}

}  // namespace

void ConfigSpace::set_le(unsigned offset, uint32_t v, unsigned len) { put_le(bytes_, offset, v, len); }
uint32_t ConfigSpace::get_le(unsigned offset, unsigned len) const { return take_le(bytes_, offset, len); }
void ConfigSpace::set_writable(unsigned offset, unsigned len, uint32_t mask) { put_le(writable_, offset, mask, len); }
void ConfigSpace::set_write_one_to_clear(unsigned offset, unsigned len, uint32_t mask) {
  put_le(rw1c_, offset, mask, len);
}
uint32_t ConfigSpace::writable(unsigned offset, unsigned len) const { return take_le(writable_, offset, len); }

bool ConfigSpace::read(uint64_t offset, unsigned len, uint32_t* value) const {
  if (!access_ok(offset, len)) return false;
  *value = get_le(unsigned(offset), len);
  return true;
}

bool ConfigSpace::write(uint64_t offset, unsigned len, uint32_t value) {
  if (!access_ok(offset, len)) return false;
  const unsigned at = unsigned(offset);
  uint8_t before[4];
  std::memcpy(before, &bytes_[at], len);
  bool changed = false;
  for (unsigned i = 0; i < len; ++i) {
    const uint8_t v = uint8_t(value >> (8 * i));
    const uint8_t old = bytes_[at + i];
    uint8_t b = uint8_t((old & ~writable_[at + i]) | (v & writable_[at + i]));
    b = uint8_t(b & ~(v & rw1c_[at + i]));
    bytes_[at + i] = b;
    changed |= b != old;
  }
  if (changed) written(at, len, before);
  return true;
}

unsigned ConfigSpace::add_capability(uint8_t id, unsigned bytes) {
  const unsigned at = (capabilities_end_ + 3) & ~3u;
  if (bytes < 2 || at + bytes > 0x100) throw std::length_error("PCI capability list: no room below 0x100");
  set8(at, id);
  set8(at + 1, 0);
  if (last_capability_ == 0)
    set8(cfg::CAPABILITIES_POINTER, uint8_t(at));
  else
    set8(last_capability_ + 1, uint8_t(at));
  set16(cfg::STATUS, uint16_t(get16(cfg::STATUS) | cfg::STS_CAPABILITIES_LIST));
  last_capability_ = at;
  capabilities_end_ = at + bytes;
  return at;
}

unsigned ConfigSpace::find_capability(uint8_t id) const {
  if (!(get16(cfg::STATUS) & cfg::STS_CAPABILITIES_LIST)) return 0;
  unsigned at = get8(cfg::CAPABILITIES_POINTER) & ~3u;
  for (unsigned hops = 0; at >= cfg::CAPABILITIES_START && at < 0x100 && hops < 48; ++hops) {
    if (get8(at) == id) return at;
    at = get8(at + 1) & ~3u;
  }
  return 0;
}

// ---------------------------------------------------------------- an endpoint's
EndpointConfigSpace::EndpointConfigSpace(const EndpointConfig& c) : config_(c) {
  using namespace cfg;
  // Type 0 header (PCI Local Bus 3.0 section 6.2).
  set16(VENDOR_ID, c.vendor_id);
  set16(DEVICE_ID, c.device_id);
  set8(REVISION_ID, c.revision_id);
  set8(CLASS_PROG_IF, c.prog_if);
  set8(CLASS_SUB, c.sub_class);
  set8(CLASS_BASE, c.base_class);
  set8(HEADER_TYPE, 0x00);  // type 0, single function
  set_writable(COMMAND, 2, CMD_MEMORY_SPACE | CMD_BUS_MASTER | CMD_PARITY_ERROR_RESPONSE | CMD_SERR_ENABLE |
                               CMD_INTX_DISABLE);
  set_write_one_to_clear(STATUS, 2, STS_RW1C);
  set_writable(CACHE_LINE_SIZE, 1, 0xFF);  // no effect on a PCI Express function
  if (c.bar0_size) set_memory_bar(0, c.bar0_base, c.bar0_size, c.bar0_64bit);
  if (c.bar2_size) set_memory_bar(2, c.bar2_base, c.bar2_size, false);
  set16(SUBSYSTEM_VENDOR_ID, c.subsystem_vendor_id);
  set16(SUBSYSTEM_ID, c.subsystem_id);
  set_writable(INTERRUPT_LINE, 1, 0xFF);
  set8(INTERRUPT_PIN, c.interrupt_pin);

  // Power Management (PCI Bus Power Management Interface 1.2 section 3.2):
  // version 1.2, no PME, no D1/D2; D3hot to D0 keeps the function's state.
  pm_ = add_capability(CAP_PM, PM_BYTES);
  set16(pm_ + PM_PMC, PMC_VERSION_1_2);
  set16(pm_ + PM_PMCSR, PMCSR_NO_SOFT_RESET);
  set_writable(pm_ + PM_PMCSR, 2, PMCSR_POWER_STATE);
  set_write_one_to_clear(pm_ + PM_PMCSR, 2, PMCSR_PME_STATUS);

  // MSI-X (PCI Local Bus 3.0 section 6.8.2).
  if (c.msix_vectors) {
    msix_ = add_capability(CAP_MSIX, MSIX_BYTES);
    set16(msix_ + MSIX_CONTROL, uint16_t((c.msix_vectors - 1) & MSIX_TABLE_SIZE));
    set_writable(msix_ + MSIX_CONTROL, 2, MSIX_ENABLE | MSIX_FUNCTION_MASK);
    set_msix_location(c.msix_table_bir, c.msix_table_offset, c.msix_pba_bir, c.msix_pba_offset);
  }

  // PCI Express (PCI Express Base 4.0 section 7.5.3), version 2, an endpoint.
  express_ = add_capability(CAP_EXPRESS, EXP_BYTES);
  const unsigned e = express_;
  const uint16_t mps = payload_size_code(c.max_payload_size);
  const uint16_t mrrs = payload_size_code(c.max_read_request_size);
  set16(e + EXP_CAPS, EXP_VERSION_2 | EXP_TYPE_ENDPOINT);
  // Max_Payload_Size Supported: the link's MPS (Device Control's must not
  // be programmed above it, section 7.5.3.4).
  set32(e + EXP_DEVCAP, mps | DEVCAP_ROLE_BASED_ERROR);
  set16(e + EXP_DEVCTL, uint16_t(DEVCTL_RELAXED_ORDERING | DEVCTL_NO_SNOOP | mps << DEVCTL_MPS_SHIFT |
                                 mrrs << DEVCTL_MRRS_SHIFT));
  // Writable: the error reporting enables (bits 3:0), Enable Relaxed
  // Ordering, Max_Payload_Size, Enable No Snoop, Max_Read_Request_Size.
  set_writable(e + EXP_DEVCTL, 2, 0x000F | DEVCTL_RELAXED_ORDERING | DEVCTL_MPS | DEVCTL_NO_SNOOP | DEVCTL_MRRS);
  set_write_one_to_clear(e + EXP_DEVSTA, 2, 0x000F);  // the error Detected bits
  const unsigned gen = c.link_generation < 1 ? 1 : c.link_generation > 5 ? 5 : c.link_generation;
  const uint32_t width = c.link_lanes & 0x3F;
  set32(e + EXP_LNKCAP, gen | width << LNKCAP_WIDTH_SHIFT);  // port number 0, no ASPM
  // Link Control: ASPM Control, Read Completion Boundary, Common Clock
  // Configuration, Extended Synch.
  set_writable(e + EXP_LNKCTL, 2, 0x00CB);
  set16(e + EXP_LNKSTA, uint16_t(gen | width << LNKSTA_WIDTH_SHIFT));  // trained at its maximum
  // Link Capabilities 2: Supported Link Speeds Vector (bits 7:1), every
  // speed up to the generation's; Link Control 2: Target Link Speed.
  set32(e + EXP_LNKCAP2, ((1u << gen) - 1) << 1);
  set16(e + EXP_LNKCTL2, uint16_t(gen));
  set_writable(e + EXP_LNKCTL2, 2, 0x000F);
}

void EndpointConfigSpace::set_memory_bar(unsigned index, uint64_t base, uint64_t size, bool is64) {
  // A power of two of at least 16 bytes (section 6.2.5.1); others round up.
  uint64_t bytes = 16;
  while (bytes < size && bytes < (uint64_t(1) << 63)) bytes <<= 1;
  const uint64_t mask = ~(bytes - 1);
  const unsigned at = cfg::BAR0 + 4 * index;
  const uint32_t type = is64 ? cfg::BAR_MEM_64 : 0;
  set32(at, uint32_t(base & mask & ~uint64_t(0xF)) | type);
  set_writable(at, 4, uint32_t(mask & ~uint64_t(0xF)));
  if (is64) {
    set32(at + 4, uint32_t((base & mask) >> 32));
    set_writable(at + 4, 4, uint32_t(mask >> 32));
  }
}

void EndpointConfigSpace::clear_bar(unsigned index) {
  const unsigned at = cfg::BAR0 + 4 * index;
  set32(at, 0);
  set_writable(at, 4, 0);
}

void EndpointConfigSpace::set_msix_location(uint8_t table_bir, uint32_t table_offset, uint8_t pba_bir,
                                            uint32_t pba_offset) {
  config_.msix_table_bir = table_bir;
  config_.msix_table_offset = table_offset;
  config_.msix_pba_bir = pba_bir;
  config_.msix_pba_offset = pba_offset;
  if (!msix_) return;
  set32(msix_ + cfg::MSIX_TABLE, (table_offset & ~cfg::MSIX_BIR) | (table_bir & cfg::MSIX_BIR));
  set32(msix_ + cfg::MSIX_PBA, (pba_offset & ~cfg::MSIX_BIR) | (pba_bir & cfg::MSIX_BIR));
}

uint32_t EndpointConfigSpace::max_payload_size() const {
  return payload_size_bytes(uint16_t((get16(express_ + cfg::EXP_DEVCTL) & cfg::DEVCTL_MPS) >> cfg::DEVCTL_MPS_SHIFT));
}

uint32_t EndpointConfigSpace::max_read_request_size() const {
  return payload_size_bytes(
      uint16_t((get16(express_ + cfg::EXP_DEVCTL) & cfg::DEVCTL_MRRS) >> cfg::DEVCTL_MRRS_SHIFT));
}

void EndpointConfigSpace::written(unsigned offset, unsigned len, const uint8_t* before) {
  // PMCSR's PowerState: D1 and D2 are not supported, so a write of either
  // completes but is dropped (PCI Bus Power Management Interface 1.2
  // section 3.2.4).
  const unsigned pmcsr = pm_ + cfg::PM_PMCSR;
  if (pm_ && offset <= pmcsr && pmcsr < offset + len) {
    const uint8_t state = get8(pmcsr) & cfg::PMCSR_POWER_STATE;
    if (state != cfg::POWER_D0 && state != cfg::POWER_D3HOT)
      set8(pmcsr, uint8_t((get8(pmcsr) & ~cfg::PMCSR_POWER_STATE) | (before[pmcsr - offset] & cfg::PMCSR_POWER_STATE)));
  }
}

}  // namespace nvmesim::fw::pci
