// Streaming latency statistics with fio's log-linear bins (6 bits of
// precision per power of two, nanoseconds), so percentiles come out the way
// fio reports them and memory does not grow with the number of I/Os.
// fio stops at 29 groups (2^34 ns, 17.18 s: every longer latency lands in
// its last bin); these groups reach 2^64 ns, so no latency the simulator can
// measure saturates. A percentile is the bin's middle, as fio reports it
// (so it can lie up to half a bin, 1/128, past the largest value).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace nvmesim::models {

class LatencyHistogram {
 public:
  static constexpr unsigned PLAT_BITS = 6;
  static constexpr unsigned PLAT_VAL = 1u << PLAT_BITS;
  // Group g >= 1 holds [2^(g+5), 2^(g+6)) ns; group 58 ends at 2^64.
  static constexpr unsigned PLAT_GROUP_NR = 59;
  static constexpr unsigned PLAT_NR = PLAT_GROUP_NR * PLAT_VAL;  // 3776 bins

  // fio's percentile list.
  static const std::array<double, 17>& fio_percentiles();

  void add(uint64_t ns);
  void merge(const LatencyHistogram& other);

  uint64_t count() const { return count_; }
  uint64_t min() const { return count_ ? min_ : 0; }
  uint64_t max() const { return max_; }
  double mean() const { return count_ ? double(sum_) / double(count_) : 0.0; }
  // The value fio reports for percentile p (0..100]: the representative
  // value of the first bin where the cumulative count reaches p% of all.
  uint64_t percentile(double p) const;
  const std::array<uint64_t, PLAT_NR>& bins() const { return bins_; }

  static unsigned value_to_index(uint64_t ns);
  static uint64_t index_to_value(unsigned index);

 private:
  std::array<uint64_t, PLAT_NR> bins_{};
  uint64_t count_ = 0, sum_ = 0, min_ = UINT64_MAX, max_ = 0;
};

}  // namespace nvmesim::models
