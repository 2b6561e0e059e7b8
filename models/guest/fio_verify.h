// fio's verify=pattern for one job: a write fills its buffer with a pattern
// of its block, a read of a block some write completed checks that pattern
// (fio verify.c, simplified: the pattern depends on the block only, so every
// job writes the same bytes to a block and overlapping writes cannot make a
// correct read fail). A read's buffer is zeroed when it is issued, so stale
// data cannot pass the check.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

namespace nvmesim::models {

class FioVerify {
 public:
  // bs: the job's block size (what a pattern covers); region_bytes: the
  // region the job addresses; tags: how many I/Os can be in flight.
  FioVerify(bool enabled, uint32_t bs, uint64_t region_bytes, uint32_t tags) : enabled_(enabled), bs_(bs) {
    if (!enabled) return;
    block_.resize(tags);
    check_.resize(tags);
    part_.resize(tags);
    written_.assign(region_bytes / bs, 0);
  }
  bool enabled() const { return enabled_; }
  uint32_t block_bytes() const { return bs_; }

  // The I/O on `tag` is being issued with its data buffer `buf` of `bytes`:
  // the whole I/O, or the part `part_offset` bytes into it (an I/O split at
  // MDTS: each part has its tag and buffer, and carries its share of the
  // block's pattern).
  void prepare(uint32_t tag, bool write, uint64_t offset, uint8_t* buf, uint32_t bytes,
               uint32_t part_offset = 0) {
    const uint64_t block = offset / bs_;
    block_[tag] = block;
    part_[tag] = Part{part_offset, bytes};
    if (write) {
      fill(buf, block, part_offset, bytes);
    } else {
      check_[tag] = written_[block];
      std::memset(buf, 0, bytes);
    }
  }
  // The I/O on `tag` completed without error: a write's block holds its
  // pattern from now on; true for a read whose block had been written
  // before it was issued (then check its buffer with matches).
  bool completed(uint32_t tag, bool write) {
    if (write) {
      written_[block_[tag]] = 1;
      return false;
    }
    return check_[tag] != 0;
  }
  // The bytes of the block the I/O (or part) on `tag` carries.
  uint32_t part_bytes(uint32_t tag) const { return part_[tag].bytes; }
  bool matches(uint32_t tag, const uint8_t* buf) const {
    const uint64_t first = part_[tag].offset / 8;
    for (uint64_t i = 0; i < part_[tag].bytes / 8; ++i) {
      uint64_t w;
      std::memcpy(&w, buf + 8 * i, 8);
      if (w != pattern_word(block_[tag], first + i)) return false;
    }
    return true;
  }

  // Word i of block `block`'s pattern (splitmix64 of both).
  static uint64_t pattern_word(uint64_t block, uint64_t i) {
    uint64_t z = block * 0x9E3779B97F4A7C15ull + i + 1;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    return z ^ (z >> 27);
  }

 private:
  void fill(uint8_t* p, uint64_t block, uint32_t offset, uint32_t bytes) const {
    for (uint64_t i = 0; i < bytes / 8; ++i) {
      const uint64_t w = pattern_word(block, offset / 8 + i);
      std::memcpy(p + 8 * i, &w, 8);
    }
  }

  bool enabled_;
  uint32_t bs_;
  std::vector<uint64_t> block_;   // per tag: the block its I/O addresses
  std::vector<uint8_t> check_;    // per tag: a read of a block written before it
  struct Part {
    uint32_t offset = 0, bytes = 0;  // into the block
  };
  std::vector<Part> part_;        // per tag: the part of the block its buffer holds
  std::vector<uint8_t> written_;  // per block: a write of it completed
};

}  // namespace nvmesim::models
