// fio-compatible JSON out: `--output-format=json+`.
//
// fio's json+ layout (fio 3.x stat.c): "fio version", "timestamp",
// "timestamp_ms", "time", "global options", "jobs": [{"jobname", "groupid",
// "error", "job options", "read" / "write" / "trim": {io_bytes, io_kbytes,
// bw_bytes, bw, iops, runtime, total_ios, short_ios, drop_ios, slat_ns,
// clat_ns, lat_ns, bw_*, iops_*}, "sync", "job_runtime", "usr_cpu",
// "sys_cpu", ..., "latency_ns" / "latency_us" / "latency_ms", ...}], with
// nvmesim's own results object (the --output-format=json one) under
// "nvmesim" at the top level.
//
// What the numbers are:
//   - slat_ns, clat_ns and lat_ns are fio's (models/guest/fio_latency.h): slat
//     from the job preparing the I/O to its io_submit returning, clat from
//     there to the reap, lat their sum; each with fio's percentile map and
//     the json+ "bins" (key: the bin's value in ns, fio's plat_idx_to_val;
//     only non-empty bins). The driver's own latency is in nvmesim's JSON
//     ("driver_lat_ns").
//   - iodepth_level, iodepth_submit, iodepth_complete: fio's depth shares
//     (stat_calc_dist), from the depths the job's submissions found and the
//     I/Os per io_submit and per io_getevents.
//   - iops and bw_bytes come from the exact simulated interval (the same
//     figures as --output-format=json); "runtime" is that interval in ms,
//     rounded up, as fio's field is an integer.
//   - One job entry per vCPU (fio's clones); with group_reporting one entry
//     for the whole run.
//   - Not modelled, written as fio writes "no samples": bw_* and iops_*
//     (no periodic samples), ctx / majf / minf. usr_cpu and sys_cpu are the
//     vCPUs' guest-work and in-exit shares of the interval. latency_ns /
//     latency_us / latency_ms are binned from clat's bins, as fio does.
//   - "timestamp" is 0 and "fio version" is "nvmesim-<version>", so the
//     output stays byte-identical for a given seed and configuration.
#pragma once

#include <array>
#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

#include "nvmesim/platform/report/json_out.h"
#include "nvmesim/platform/report/results.h"

namespace nvmesim::platform {

class Config;
struct FioJobs;

// One entry of "jobs": which vCPUs it covers.
struct FioJsonJob {
  std::string name;
  std::vector<std::pair<std::string, std::string>> options;  // "job options"
  std::vector<unsigned> vcpus;
  uint32_t iodepth = 0;
  // fio's latency_target options, as its JSON shows them (0: no search).
  uint64_t latency_target_ns = 0, latency_window_us = 0;
  double latency_percentile = 100;
  int group = 0;  // fio's groupid (stonewall, new_group)
};

// The entries for a run: from the job file's sections (`fio`, may be null:
// then each vCPU is a job named "nvmesim" whose options are the workload
// options the user set).
std::vector<FioJsonJob> fio_json_jobs(const RunResults& r, const Config& config, const FioJobs* fio);

// fio's stat_calc_dist: each bucket's share of `total` in percent, a
// non-empty bucket at least 0.1.
std::array<double, models::IoDepthCounts::kBuckets> depth_shares(
    const std::array<uint64_t, models::IoDepthCounts::kBuckets>& map, uint64_t total);
// fio's "iodepth_level", "iodepth_submit" and "iodepth_complete" objects into `job`.
void io_depths_json(report::Json& job, const models::IoDepthCounts& d);

void write_fio_json_plus(const RunResults& r, const Config& config, const FioJobs* fio,
                         std::ostream& out);

// The pieces, for the default comparison (its runs are simulated in child
// processes): a run's "jobs" entries with `groupid` added to their own group
// and options added
// to each entry's "job options"; the style fio writes; the document from
// entries already written (at nesting level 2) and an "nvmesim" text (level 1).
report::Json fio_json_plus_jobs(const RunResults& r, const Config& config, const FioJobs* fio,
                                int groupid, const std::vector<std::pair<std::string, std::string>>& extra_options);
report::JsonStyle fio_json_style();
void write_fio_json_plus_doc(const FioJobs* fio, const std::vector<std::string>& job_texts,
                             const std::string& nvmesim_text, std::ostream& out);

}  // namespace nvmesim::platform
