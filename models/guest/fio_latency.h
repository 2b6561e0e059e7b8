// fio's view of an I/O's time (fio 3.33 stat.c, ioengines.c, engines/libaio.c):
//   slat: from the job preparing the I/O (io_u->start_time, get_io_u) to its
//         submission returning (io_u->issue_time, set after io_submit in
//         fio_libaio_queued);
//   clat: from the submission to the job reaping the completion
//         (io_getevents returning, ios_completed);
//   lat:  slat + clat.
// And fio's "IO depths" report (io_u_mark_depth, io_u_mark_submit,
// io_u_mark_complete): the queue depth each submitted I/O found, the I/Os per
// io_submit, the I/Os per io_getevents, in fio's buckets.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>

#include "nvmesim/models/guest/latency_histogram.h"

namespace nvmesim::models {

// One latency's distribution: fio's min, mean, max, stddev and percentiles.
struct LatencyStat {
  LatencyHistogram hist;
  long double sum_sq = 0;  // sum of squares (ns^2), for the standard deviation

  void add(uint64_t ns) {
    hist.add(ns);
    sum_sq += (long double)ns * (long double)ns;
  }
  void merge(const LatencyStat& o) {
    hist.merge(o.hist);
    sum_sq += o.sum_sq;
  }
  // Sample standard deviation (n - 1), as fio's.
  double stddev() const {
    const uint64_t n = hist.count();
    if (n < 2) return 0;
    const long double sum = (long double)hist.mean() * n;
    const long double var = (sum_sq - sum * sum / n) / (n - 1);
    return var > 0 ? double(std::sqrt(var)) : 0.0;
  }
};

// fio's three depth distributions, as counts (fio prints them as shares).
struct IoDepthCounts {
  static constexpr unsigned kBuckets = 7;
  // Depth buckets 1, 2, 4, 8, 16, 32, >=64 (io_u_map, the depth after the
  // submission, counted once per I/O submitted).
  std::array<uint64_t, kBuckets> depth{};
  // Submit and complete buckets 0, 4, 8, 16, 32, 64, >=64 (I/Os per call;
  // "4" holds 1..4, "8" 5..8, ...), counted once per call.
  std::array<uint64_t, kBuckets> submit{}, complete{};
  uint64_t submit_calls = 0, complete_calls = 0;  // fio's total_submit / total_complete

  static unsigned depth_bucket(uint32_t cur_depth) {
    if (cur_depth >= 64) return 6;
    if (cur_depth >= 32) return 5;
    if (cur_depth >= 16) return 4;
    if (cur_depth >= 8) return 3;
    if (cur_depth >= 4) return 2;
    if (cur_depth >= 2) return 1;
    return 0;
  }
  static unsigned call_bucket(uint32_t nr) {
    if (nr == 0) return 0;
    if (nr <= 4) return 1;
    if (nr <= 8) return 2;
    if (nr <= 16) return 3;
    if (nr <= 32) return 4;
    if (nr <= 64) return 5;
    return 6;
  }
  void mark_submit(uint32_t nr, uint32_t cur_depth) {
    depth[depth_bucket(cur_depth)] += nr;
    ++submit[call_bucket(nr)];
    ++submit_calls;
  }
  void mark_complete(uint32_t nr) {
    ++complete[call_bucket(nr)];
    ++complete_calls;
  }
  void merge(const IoDepthCounts& o) {
    for (unsigned k = 0; k < kBuckets; ++k) {
      depth[k] += o.depth[k];
      submit[k] += o.submit[k];
      complete[k] += o.complete[k];
    }
    submit_calls += o.submit_calls;
    complete_calls += o.complete_calls;
  }
};

}  // namespace nvmesim::models
