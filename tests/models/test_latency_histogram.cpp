#include <catch2/catch.hpp>

#include "nvmesim/models/guest/latency_histogram.h"

using nvmesim::models::LatencyHistogram;

TEST_CASE("histogram: values below 128 ns have exact bins", "[histogram]") {
  for (uint64_t v = 0; v < 128; ++v) {
    REQUIRE(LatencyHistogram::value_to_index(v) == v);
    REQUIRE(LatencyHistogram::index_to_value(unsigned(v)) == v);
  }
}

TEST_CASE("histogram: log-linear bins of 64 per power of two, as fio", "[histogram]") {
  // 1000 lies in [512, 1024): 64 bins of width 8; 1000 is in bin [1000, 1008),
  // the 61st of that group; fio reports the bin's middle, 1004.
  CHECK(LatencyHistogram::value_to_index(1000) == 4 * 64 + 61);
  CHECK(LatencyHistogram::index_to_value(4 * 64 + 61) == 1004);
  // 128..255: width 2 -> 200 is in [200, 202), middle 201.
  CHECK(LatencyHistogram::index_to_value(LatencyHistogram::value_to_index(200)) == 201);
  // Every value maps to a bin whose range contains it (relative error < 1/64).
  for (uint64_t v = 128; v < (1ull << 33); v = v * 3 / 2 + 7) {
    const uint64_t rep = LatencyHistogram::index_to_value(LatencyHistogram::value_to_index(v));
    const double err = double(rep > v ? rep - v : v - rep) / double(v);
    REQUIRE(err <= 1.0 / 64);
  }
}

TEST_CASE("histogram: min, max, mean and percentiles", "[histogram]") {
  LatencyHistogram h;
  for (uint64_t v = 1; v <= 100; ++v) h.add(v);  // exact bins
  CHECK(h.count() == 100);
  CHECK(h.min() == 1);
  CHECK(h.max() == 100);
  CHECK(h.mean() == Approx(50.5));
  CHECK(h.percentile(1) == 1);
  CHECK(h.percentile(50) == 50);
  CHECK(h.percentile(99) == 99);
  CHECK(h.percentile(99.99) == 100);
  LatencyHistogram other;
  other.add(5000);
  h.merge(other);
  CHECK(h.count() == 101);
  CHECK(h.max() == 5000);
  CHECK(h.percentile(100) == LatencyHistogram::index_to_value(LatencyHistogram::value_to_index(5000)));
}
