// VFIO's MSI-X page rule (firmware/pcie/msix_page.h): which host pages trap, and
// whether the doorbells are among them.
#include <catch2/catch.hpp>

#include "nvmesim/firmware/pcie/msix_page.h"

using namespace nvmesim::fw::vfio;

namespace {

// The independent statement: two ranges share a host page iff some byte of
// one and some byte of the other have the same page number (offset / page).
bool share_by_bytes(const BarRange& a, const BarRange& b, uint64_t page) {
  if (a.bar != b.bar) return false;
  for (uint64_t x = a.offset; x < a.offset + a.bytes; ++x)
    for (uint64_t y = b.offset; y < b.offset + b.bytes; ++y)
      if (x / page == y / page) return true;
  return false;
}

// The NVMe model's BAR0 with nvme.msix_table=bar0 and 64 I/O queues at
// DSTRD 0: 65 doorbell pairs from 0x1000 (8 bytes each), 65 table entries
// at 0x2000 (16 bytes each), the PBA (3 DWORDs) at 0x3000.
const MsixLayout kBar0Layout{{0, 0x1000, 65 * 8}, {0, 0x2000, 65 * 16}, {0, 0x3000, 12}};
// nvme.msix_table=bar2 (the default): table at BAR2 0, PBA at BAR2 0x2000.
const MsixLayout kBar2Layout{{0, 0x1000, 65 * 8}, {2, 0, 65 * 16}, {2, 0x2000, 12}};

}  // namespace

TEST_CASE("vfio: share_host_page agrees with a byte-by-byte comparison of page numbers", "[vfio]") {
  unsigned checked = 0, shared = 0;
  for (uint64_t page : {4u, 8u, 16u})
    for (unsigned bar_b : {0u, 1u})
      for (uint64_t ao = 0; ao < 40; ao += 3)
        for (uint64_t al = 1; al < 12; al += 2)
          for (uint64_t bo = 0; bo < 40; bo += 5)
            for (uint64_t bl = 1; bl < 10; bl += 3) {
              const BarRange a{0, ao, al}, b{bar_b, bo, bl};
              const bool expected = share_by_bytes(a, b, page);
              INFO("page " << page << " a " << ao << "+" << al << " b bar" << bar_b << " " << bo << "+" << bl);
              REQUIRE(share_host_page(a, b, page) == expected);
              REQUIRE(share_host_page(b, a, page) == expected);
              ++checked;
              shared += expected;
            }
  CHECK(checked == 3 * 2 * 14 * 6 * 8 * 3);
  CHECK(shared > 0);  // both outcomes were exercised
  CHECK(shared < checked);
}

TEST_CASE("vfio: 64 KiB pages put an MSI-X table in BAR0 below 64 KiB in the doorbells' page", "[vfio]") {
  CHECK(share_host_page(kBar0Layout.doorbells, kBar0Layout.table, 65536));
  CHECK(doorbells_trapped(kBar0Layout, 65536, false));
  // What traps: the whole first 64 KiB page, for the table and for the PBA.
  const auto r = trapped_ranges(kBar0Layout, 65536, false);
  REQUIRE(r.size() == 2);
  CHECK((r[0].bar == 0 && r[0].offset == 0 && r[0].bytes == 65536));
  CHECK((r[1].bar == 0 && r[1].offset == 0 && r[1].bytes == 65536));
}

TEST_CASE("vfio: 4 KiB pages keep the doorbells' page (0x1000) apart from a table at 0x2000", "[vfio]") {
  CHECK_FALSE(share_host_page(kBar0Layout.doorbells, kBar0Layout.table, 4096));
  CHECK_FALSE(doorbells_trapped(kBar0Layout, 4096, false));
  const auto r = trapped_ranges(kBar0Layout, 4096, false);
  REQUIRE(r.size() == 2);
  CHECK((r[0].offset == 0x2000 && r[0].bytes == 0x1000));
  CHECK((r[1].offset == 0x3000 && r[1].bytes == 0x1000));
  // A function that broke PCI 3.0 6.8.2 (its table in the doorbells' 4 KiB
  // range) would trap them even with 4 KiB pages.
  const MsixLayout crowded{{0, 0x1000, 65 * 8}, {0, 0x1800, 65 * 16}, {0, 0x3000, 12}};
  CHECK(doorbells_trapped(crowded, 4096, false));
}

TEST_CASE("vfio: a table in its own BAR never traps the doorbells and a mappable BAR traps only the table",
          "[vfio]") {
  for (uint64_t page : {4096u, 65536u}) {
    CHECK_FALSE(doorbells_trapped(kBar2Layout, page, false));
    CHECK_FALSE(doorbells_trapped(kBar0Layout, page, true));
  }
  const auto r = trapped_ranges(kBar0Layout, 65536, true);
  REQUIRE(r.size() == 2);
  CHECK((r[0].offset == 0x2000 && r[0].bytes == 65 * 16));
  CHECK((r[1].offset == 0x3000 && r[1].bytes == 12));
}
