// fio 3.33's text report pieces (stat.c, lib/num2str.c), so nvmesim's
// report reads as fio's: latency lines with fio's unit scaling, the clat
// percentile block, and the "Run status group" lines.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>

#include "nvmesim/models/guest/fio_latency.h"
#include "nvmesim/platform/report/results.h"

namespace nvmesim::platform::fio_text {

// lib/num2str.c num2str(num, maxlen, 1, pow2, unit): at most maxlen digits,
// dividing by 1000 (or 1024) with k/M/G (Ki/Mi/Gi) prefixes, one decimal
// where there is room, rounding as fio does. unit: "", "B" or "B/s".
std::string num2str(uint64_t num, int maxlen, bool pow2, const char* unit);

// stat.c display_lat: "    NAME (nsec|usec|msec): min=..., max=..., avg=..., stdev=...".
void latency_line(std::ostream& o, const char* name, const models::LatencyStat& l);

// stat.c show_clat_percentiles with fio's percentile list and precision 2.
void percentiles(std::ostream& o, const char* name, const models::LatencyHistogram& h);

// stat.c show_group_stats: "Run status group G (all jobs):" and a READ /
// WRITE line per direction with I/O over the group's jobs (vCPUs).
void group_status(std::ostream& o, const RunResults& r);

}  // namespace nvmesim::platform::fio_text
