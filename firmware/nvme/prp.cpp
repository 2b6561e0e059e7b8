#include "nvmesim/firmware/nvme/prp.h"

#include <algorithm>

namespace nvmesim::fw {

namespace {
constexpr unsigned LIST_CHUNK = 64;  // PRP entries read per DMA

uint64_t le64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
}  // namespace

uint32_t max_prp_segments(uint64_t len, uint32_t page_bytes) {
  return len == 0 ? 0 : uint32_t((len + page_bytes - 1) / page_bytes + 1);
}

uint16_t map_prp(ControllerEnv& env, uint64_t prp1, uint64_t prp2, uint32_t len,
                 uint32_t page_bytes, std::vector<IoRequest::Segment>& out) {
  using namespace nvme;
  out.clear();
  if (len == 0) return STATUS_SUCCESS;
  const uint64_t page_mask = uint64_t(page_bytes) - 1;
  auto add = [&](uint64_t addr, uint32_t seg_len) { out.push_back(IoRequest::Segment{addr, seg_len}); };

  if (prp1 == 0) return status_generic(sc::INVALID_FIELD);
  if (prp1 & 3) return status_generic(sc::PRP_OFFSET_INVALID);
  const uint32_t first = uint32_t(std::min<uint64_t>(len, page_bytes - (prp1 & page_mask)));
  add(prp1, first);
  uint32_t remaining = len - first;
  if (remaining == 0) return STATUS_SUCCESS;

  if (remaining <= page_bytes) {  // PRP2 is the second data page
    if (prp2 == 0) return status_generic(sc::INVALID_FIELD);
    if (prp2 & page_mask) return status_generic(sc::PRP_OFFSET_INVALID);
    add(prp2, remaining);
    return STATUS_SUCCESS;
  }

  // PRP2 points to a PRP list; the last entry of a full list page chains.
  if (prp2 == 0) return status_generic(sc::INVALID_FIELD);
  if (prp2 & 3) return status_generic(sc::PRP_OFFSET_INVALID);
  uint64_t list = prp2;
  uint8_t raw[LIST_CHUNK * 8];
  while (remaining > 0) {
    const uint32_t entries_in_page = uint32_t((page_bytes - (list & page_mask)) / 8);
    const uint32_t data_needed = (remaining + page_bytes - 1) / page_bytes;
    // All data entries fit in this page: no chain. Else the last one chains.
    const bool chains = data_needed > entries_in_page;
    const uint32_t data_here = chains ? entries_in_page - 1 : data_needed;
    if (entries_in_page == 0 || (chains && data_here == 0))
      return status_generic(sc::PRP_OFFSET_INVALID);
    const uint32_t to_read = chains ? entries_in_page : data_here;
    uint64_t chain_ptr = 0;
    for (uint32_t done = 0; done < to_read;) {
      const uint32_t k = std::min<uint32_t>(LIST_CHUNK, to_read - done);
      if (!env.dma_read(DmaPurpose::PrpList, list + uint64_t(done) * 8, raw, k * 8))
        return status_generic(sc::DATA_TRANSFER_ERROR);
      for (uint32_t i = 0; i < k; ++i) {
        const uint64_t e = le64(raw + i * 8);
        if (done + i == data_here) {  // the chain pointer
          chain_ptr = e;
          continue;
        }
        if (e == 0) return status_generic(sc::INVALID_FIELD);
        if (e & page_mask) return status_generic(sc::PRP_OFFSET_INVALID);
        const uint32_t seg = std::min(remaining, page_bytes);
        add(e, seg);
        remaining -= seg;
      }
      done += k;
    }
    if (!chains) break;
    if (chain_ptr == 0) return status_generic(sc::INVALID_FIELD);
    if (chain_ptr & page_mask) return status_generic(sc::PRP_OFFSET_INVALID);
    list = chain_ptr;
  }
  return STATUS_SUCCESS;
}

}  // namespace nvmesim::fw
