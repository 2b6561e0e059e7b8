#include "models/workload.h"

#include <stdexcept>

namespace nvmesim::models {

static uint64_t splitmix64(uint64_t& x) {
  uint64_t z = (x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

Rng::Rng(uint64_t seed) {
  uint64_t x = seed;
  for (auto& s : s_) s = splitmix64(x);
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t Rng::next() {
  const uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

uint64_t Rng::below(uint64_t n) {
  // Lemire's multiply-shift; the tiny bias is irrelevant for offsets.
  return uint64_t((unsigned __int128)next() * n >> 64);
}

Workload::Workload(const JobSpec& spec)
    : spec_(spec),
      rng_(spec.seed * 0x100000001B3ull + spec.job_index),
      blocks_(spec.bs ? spec.size / spec.bs : 0) {
  if (spec.bs == 0 || blocks_ == 0) throw std::invalid_argument("bs must be > 0 and <= size");
}

NextIo Workload::next() {
  NextIo io{};
  io.bytes = spec_.bs;
  switch (spec_.rw) {
    case RwMode::Read:
    case RwMode::Write:
      io.write = spec_.rw == RwMode::Write;
      io.offset = next_block_ * spec_.bs;
      next_block_ = (next_block_ + 1) % blocks_;
      break;
    case RwMode::RandRead:
    case RwMode::RandWrite:
      io.write = spec_.rw == RwMode::RandWrite;
      io.offset = rng_.below(blocks_) * spec_.bs;
      break;
    case RwMode::RandRw:
      io.write = rng_.below(100) >= spec_.rwmixread;
      io.offset = rng_.below(blocks_) * spec_.bs;
      break;
  }
  return io;
}

}  // namespace nvmesim::models
