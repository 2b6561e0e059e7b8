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

// A block's I/Os and bytes per direction (0 read, 1 write).
struct DirectionCounts {
  uint64_t ios[2]{}, bytes[2]{};
};

// stat.c show_ddir_status per direction with I/O: "  read: IOPS=..., BW=..."
// over `sim_time_ns`, then slat, clat, lat and clat's percentiles.
void direction_blocks(std::ostream& o, const DirectionCounts& counts, double sim_time_ns,
                      const DirectionLatency& read, const DirectionLatency& write);

// stat.c show_latencies' "IO depths" / "submit" / "complete" lines.
void io_depths(std::ostream& o, const models::IoDepthCounts& depths);

// A job file's jobs, as fio's show_thread_status_normal prints them: one
// block per job (each clone of a section's numjobs its own) headed
// "NAME: (groupid=G, jobs=1): vcpuN", or with group_reporting one block per
// reporting group named after its first job, over all its jobs.
void job_blocks(std::ostream& o, const RunResults& r);

// stat.c show_group_stats: "Run status group G (all jobs):" and a READ /
// WRITE line per direction with I/O over the group's jobs (vCPUs).
void group_status(std::ostream& o, const RunResults& r);

}  // namespace nvmesim::platform::fio_text
