// Which host pages of a passed-through device's BARs the host cannot map
// into the guest, and so must trap: VFIO's MSI-X rule.
//
// Linux vfio-pci (before commit a32295c "vfio-pci: Allow mapping MSIX BAR",
// Linux 4.16) refused to mmap the MSI-X table and PBA, at the host's page
// granularity; QEMU emulates the refused pages with read/write on the VFIO
// device fd. PCI Local Bus 3.0 section 6.8.2 asks a function to keep other
// registers out of the naturally aligned 4 KiB ranges that hold its MSI-X
// structures, so with 4 KiB pages only those structures trap. With 64 KiB
// pages (ppc64) a table in BAR0 below 64 KiB shares its page with the NVMe
// registers and doorbells (from 0x1000): every doorbell write then traps
// (Launchpad bug 1847948, "Improve NVMe guest performance on Bionic QEMU").
// Plain C++: no SystemC.
#pragma once

#include <cstdint>
#include <vector>

namespace nvmesim::fw::vfio {

// Bytes [offset, offset + bytes) of BAR `bar`.
struct BarRange {
  unsigned bar = 0;
  uint64_t offset = 0;
  uint64_t bytes = 0;
};

// The host pages a range touches: [first_page, last_page] (page numbers).
constexpr uint64_t first_page(const BarRange& r, uint64_t page_bytes) { return r.offset / page_bytes; }
constexpr uint64_t last_page(const BarRange& r, uint64_t page_bytes) {
  return (r.offset + r.bytes - 1) / page_bytes;
}

// True iff some host page of `page_bytes` holds bytes of both ranges.
constexpr bool share_host_page(const BarRange& a, const BarRange& b, uint64_t page_bytes) {
  if (a.bar != b.bar || a.bytes == 0 || b.bytes == 0 || page_bytes == 0) return false;
  return first_page(a, page_bytes) <= last_page(b, page_bytes) &&
         first_page(b, page_bytes) <= last_page(a, page_bytes);
}

// A function's MSI-X structures and its doorbell registers.
struct MsixLayout {
  BarRange doorbells;
  BarRange table;
  BarRange pba;
};

// The part of each BAR the host must trap. `msix_bar_mmap`: the host lets
// the whole BAR be mapped (VFIO_REGION_INFO_CAP_MSIX_MAPPABLE, commit
// a32295c; QEMU 2.12 "vfio-pci: Allow mmap of MSIX BAR"): only the MSI-X
// structures' own bytes trap. Otherwise the host pages that hold them trap.
std::vector<BarRange> trapped_ranges(const MsixLayout& layout, uint64_t page_bytes, bool msix_bar_mmap);

// True iff the guest's doorbell writes trap (an exit each) instead of
// reaching the device's BAR directly.
bool doorbells_trapped(const MsixLayout& layout, uint64_t page_bytes, bool msix_bar_mmap);

}  // namespace nvmesim::fw::vfio
