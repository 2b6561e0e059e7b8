#include "nvmesim/models/guest/latency_histogram.h"

#include <algorithm>

namespace nvmesim::models {

const std::array<double, 17>& LatencyHistogram::fio_percentiles() {
  static const std::array<double, 17> p = {1.0,  5.0,  10.0, 20.0, 30.0, 40.0,  50.0,  60.0, 70.0,
                                           80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99};
  return p;
}

unsigned LatencyHistogram::value_to_index(uint64_t ns) {
  if (ns == 0) return 0;
  const unsigned msb = 63u - unsigned(__builtin_clzll(ns));
  if (msb <= PLAT_BITS) return unsigned(ns);  // exact below 2^(PLAT_BITS+1)
  const unsigned error_bits = msb - PLAT_BITS;
  const uint64_t base = uint64_t(error_bits + 1) << PLAT_BITS;
  const uint64_t offset = (PLAT_VAL - 1) & (ns >> error_bits);
  return unsigned(std::min<uint64_t>(base + offset, PLAT_NR - 1));
}

uint64_t LatencyHistogram::index_to_value(unsigned index) {
  if (index < (PLAT_VAL << 1)) return index;
  const unsigned error_bits = (index >> PLAT_BITS) - 1;
  const uint64_t base = uint64_t(1) << (error_bits + PLAT_BITS);
  const uint64_t k = index % PLAT_VAL;
  // Middle of the bin, as fio reports it.
  return base + uint64_t((double(k) + 0.5) * double(uint64_t(1) << error_bits));
}

void LatencyHistogram::add(uint64_t ns) {
  ++bins_[value_to_index(ns)];
  ++count_;
  sum_ += ns;
  min_ = std::min(min_, ns);
  max_ = std::max(max_, ns);
}

void LatencyHistogram::merge(const LatencyHistogram& other) {
  for (unsigned i = 0; i < PLAT_NR; ++i) bins_[i] += other.bins_[i];
  count_ += other.count_;
  sum_ += other.sum_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
}

uint64_t LatencyHistogram::percentile(double p) const {
  if (count_ == 0) return 0;
  const double wanted = p / 100.0 * double(count_);
  uint64_t cumulative = 0;
  for (unsigned i = 0; i < PLAT_NR; ++i) {
    cumulative += bins_[i];
    if (bins_[i] && double(cumulative) >= wanted) return index_to_value(i);
  }
  return index_to_value(PLAT_NR - 1);
}

}  // namespace nvmesim::models
