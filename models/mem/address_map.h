// The platform's physical address map (guest-physical = bus address; no IOMMU).
//
//   0x0000'0000 .. ram_size-1        guest RAM (size from the configuration,
//                                    at most kGuestRamMaxSize)
//   0xE000'0000 .. 0xE000'0FFF       PCI ECAM config space: bus 0 dev 0 fn 0
//   0xFE00'0000 .. 0xFE00'3FFF       BAR0: NVMe controller registers + doorbells
//   0xFE01'0000 .. 0xFE01'3FFF       BAR2: MSI-X table and PBA
//   0xFEE0'0000 .. 0xFEEF'FFFF       MSI window: a DWORD write here is an
//                                    interrupt message; address bits 19:12
//                                    carry the destination APIC id (= vCPU
//                                    index), the data's low 8 bits the vector.
#pragma once

#include <cstdint>

namespace nvmesim::models {

inline constexpr uint64_t kGuestRamBase = 0x0000'0000ULL;
// Guest RAM must end below the first MMIO window (the ECAM window).
inline constexpr uint64_t kGuestRamMaxSize = 0xE000'0000ULL;

inline constexpr uint64_t kEcamBase = 0xE000'0000ULL;
inline constexpr uint64_t kEcamSize = 0x1000ULL;  // one function's 4 KiB

inline constexpr uint64_t kBar0Base = 0xFE00'0000ULL;
inline constexpr uint64_t kBar0Size = 0x4000ULL;

inline constexpr uint64_t kBar2Base = 0xFE01'0000ULL;
inline constexpr uint64_t kBar2Size = 0x4000ULL;

inline constexpr uint64_t kMsiBase = 0xFEE0'0000ULL;
inline constexpr uint64_t kMsiSize = 0x10'0000ULL;  // 0xFEE0'0000..0xFEEF'FFFF

// True iff [addr, addr+len) lies entirely inside [base, base+size).
// len == 0 is treated as a one-byte access at addr. Overflow-safe.
constexpr bool in_window(uint64_t addr, uint64_t len, uint64_t base,
                         uint64_t size) {
  if (len == 0) len = 1;
  return addr >= base && addr - base < size && len <= size - (addr - base);
}

// MSI address/data encoding (x86 style, as used by the root complex).
constexpr uint32_t msi_apic_id(uint64_t msi_addr) {
  return static_cast<uint32_t>((msi_addr >> 12) & 0xFFu);
}
constexpr uint32_t msi_vector(uint32_t msi_data) { return msi_data & 0xFFu; }
constexpr uint64_t msi_address(uint32_t apic_id) {
  return kMsiBase | (static_cast<uint64_t>(apic_id & 0xFFu) << 12);
}

static_assert(msi_apic_id(0xFEE0'2000ULL) == 2);
static_assert(msi_address(2) == 0xFEE0'2000ULL);
static_assert(in_window(kBar0Base + 0x1000, 4, kBar0Base, kBar0Size));
static_assert(!in_window(kBar0Base + kBar0Size - 2, 4, kBar0Base, kBar0Size));

}  // namespace nvmesim::models
