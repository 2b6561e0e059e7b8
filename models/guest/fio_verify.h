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
    written_.assign(region_bytes / bs, 0);
  }
  bool enabled() const { return enabled_; }
  uint32_t block_bytes() const { return bs_; }

  // The I/O on `tag` is being issued with its data buffer `buf` of `bytes`.
  void prepare(uint32_t tag, bool write, uint64_t offset, uint8_t* buf, uint32_t bytes) {
    const uint64_t block = offset / bs_;
    block_[tag] = block;
    if (write) {
      fill(buf, block);
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
  bool matches(uint32_t tag, const uint8_t* buf) const {
    for (uint64_t i = 0; i < bs_ / 8; ++i) {
      uint64_t w;
      std::memcpy(&w, buf + 8 * i, 8);
      if (w != pattern_word(block_[tag], i)) return false;
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
  void fill(uint8_t* p, uint64_t block) const {
    for (uint64_t i = 0; i < bs_ / 8; ++i) {
      const uint64_t w = pattern_word(block, i);
      std::memcpy(p + 8 * i, &w, 8);
    }
  }

  bool enabled_;
  uint32_t bs_;
  std::vector<uint64_t> block_;   // per tag: the block its I/O addresses
  std::vector<uint8_t> check_;    // per tag: a read of a block written before it
  std::vector<uint8_t> written_;  // per block: a write of it completed
};

}  // namespace nvmesim::models
