// Latency percentiles hold over the whole range the simulator can measure:
// generated distributions at every scale from ns to 2^63 ns (fio's bins
// stopped at 2^34 ns = 17.18 s and every longer latency read 17.1 s), each
// percentile within one bin (1/64) of the exact one and of [min, max],
// percentiles non-decreasing in p, every value in a bin that holds it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "nvmesim/models/guest/latency_histogram.h"

using nvmesim::models::LatencyHistogram;

namespace {

// fio's percentile: the first sample (sorted) at which the cumulative count reaches p%.
uint64_t exact_percentile(const std::vector<uint64_t>& sorted, double p) {
  const double wanted = p / 100.0 * double(sorted.size());
  for (size_t k = 0; k < sorted.size(); ++k)
    if (double(k + 1) >= wanted) return sorted[k];
  return sorted.back();
}

}  // namespace

TEST_CASE("histogram range: every value up to 2^64 ns lies in a bin that holds it", "[histogram]") {
  for (unsigned bit = 7; bit < 64; ++bit)
    for (const uint64_t v : {uint64_t(1) << bit, (uint64_t(1) << bit) + (uint64_t(1) << bit) / 3,
                             (uint64_t(1) << bit) - 1 + (uint64_t(1) << bit)}) {
      INFO("v = " << v);
      const unsigned i = LatencyHistogram::value_to_index(v);
      REQUIRE(i < LatencyHistogram::PLAT_NR);
      const uint64_t rep = LatencyHistogram::index_to_value(i);
      CHECK(std::fabs(double(rep) - double(v)) / double(v) <= 1.0 / 64);
      // Distinct powers of two never share a bin (no saturation).
      if (bit > 7) CHECK(i > LatencyHistogram::value_to_index(uint64_t(1) << (bit - 1)));
    }
  CHECK(LatencyHistogram::value_to_index(UINT64_MAX) == LatencyHistogram::PLAT_NR - 1);
}

TEST_CASE("histogram range: percentiles at every scale within one bin of the exact ones", "[histogram]") {
  std::mt19937_64 rng(27);
  size_t cases = 0;
  // Scales from 100 ns to 2^62 ns (146 years), around fio's old 17.18 s edge too.
  std::vector<double> scales = {1e2, 1e4, 1e6, 1e9, 1.7e10, 1.72e10, 3.2e10, 1e12, 1e15, 4.6e18};
  for (const double scale : scales)
    for (int shape = 0; shape < 4; ++shape) {
      std::vector<uint64_t> v;
      const size_t n = 1 + rng() % 2000;
      for (size_t k = 0; k < n; ++k) {
        const double u = double(rng() % 1000000) / 1e6;
        // Uniform, a ramp (queueing), a heavy tail, two modes.
        const double x = shape == 0   ? scale * (0.5 + u)
                         : shape == 1 ? scale * double(k + 1) / double(n)
                         : shape == 2 ? scale * std::pow(1.0 / (1.0 - u * 0.999), 1.5)
                                      : scale * (k % 3 ? 1.0 : 8.0) * (1 + u / 100);
        v.push_back(uint64_t(std::min(x, 9.2e18)));
      }
      LatencyHistogram h;
      for (uint64_t x : v) h.add(x);
      std::sort(v.begin(), v.end());
      ++cases;
      uint64_t previous = 0;
      for (double p : LatencyHistogram::fio_percentiles()) {
        INFO("scale " << scale << " shape " << shape << " n " << n << " p" << p);
        const uint64_t got = h.percentile(p), want = exact_percentile(v, p);
        CHECK(double(got) >= double(h.min()) * (1 - 1.0 / 128));
        CHECK(double(got) <= double(h.max()) * (1 + 1.0 / 128));
        CHECK(got >= previous);
        CHECK(std::fabs(double(got) - double(want)) / double(want) <= 1.0 / 64);
        previous = got;
      }
    }
  CHECK(cases == 40);
}
