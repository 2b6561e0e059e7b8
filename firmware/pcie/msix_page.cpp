#include "nvmesim/firmware/pcie/msix_page.h"

namespace nvmesim::fw::vfio {

namespace {

// [first page's start, last page's end) of `r`.
BarRange page_span(const BarRange& r, uint64_t page_bytes) {
  const uint64_t first = first_page(r, page_bytes), last = last_page(r, page_bytes);
  return BarRange{r.bar, first * page_bytes, (last - first + 1) * page_bytes};
}

bool overlap(const BarRange& a, const BarRange& b) {
  return a.bar == b.bar && a.bytes && b.bytes && a.offset < b.offset + b.bytes && b.offset < a.offset + a.bytes;
}

}  // namespace

std::vector<BarRange> trapped_ranges(const MsixLayout& layout, uint64_t page_bytes, bool msix_bar_mmap) {
  std::vector<BarRange> out;
  for (const BarRange& r : {layout.table, layout.pba}) {
    if (r.bytes == 0) continue;
    out.push_back(msix_bar_mmap ? r : page_span(r, page_bytes));
  }
  return out;
}

bool doorbells_trapped(const MsixLayout& layout, uint64_t page_bytes, bool msix_bar_mmap) {
  for (const BarRange& r : trapped_ranges(layout, page_bytes, msix_bar_mmap))
    if (overlap(r, layout.doorbells)) return true;
  return false;
}

}  // namespace nvmesim::fw::vfio
