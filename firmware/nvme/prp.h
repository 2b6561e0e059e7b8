// PRP (Physical Region Page) walking: turns PRP1/PRP2 of a command into the
// list of guest-memory segments of its data buffer (NVMe 1.3 section 4.3).
#pragma once

#include <cstdint>
#include <vector>

#include "nvmesim/firmware/nvme/controller.h"

namespace nvmesim::fw {

// Maps `len` bytes described by prp1/prp2 with memory page size `page_bytes`
// into `out` (cleared first; one segment per page, +1 for an offset PRP1).
// PRP lists may chain across any number of list pages (the last entry of a
// full list page points to the next one, NVMe 1.3 section 4.3): the only
// limit on a transfer is the caller's (MDTS). Returns the NVMe Status Field (0 on success):
//  - PRP1 not dword aligned, a data PRP (PRP2 or list entry) or a chained
//    list pointer with a non-zero page offset, a PRP2 list pointer not
//    dword aligned -> PRP Offset Invalid;
//  - a zero PRP where a pointer is needed -> Invalid Field in Command (DNR);
//    address 0 is never used by a real driver, so a zero is a bug, not a
//    transfer failure;
//  - a PRP list that cannot be read (DMA fails) -> Data Transfer Error;
// Reads PRP lists through env.dma_read; allocates only when `out` needs more
// capacity than it has (callers keep one vector and reuse it).
uint16_t map_prp(ControllerEnv& env, uint64_t prp1, uint64_t prp2, uint32_t len,
                 uint32_t page_bytes, std::vector<IoRequest::Segment>& out);

// Segments a transfer of `len` bytes can need: one per page it touches
// with PRP1 at the worst offset.
uint32_t max_prp_segments(uint64_t len, uint32_t page_bytes);

}  // namespace nvmesim::fw
