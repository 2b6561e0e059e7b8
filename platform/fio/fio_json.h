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
//   - clat_ns and lat_ns are both nvmesim's I/O latency: from the driver
//     starting to build the command to the driver finishing its completion
//     (PRODUCT.md). Submission latency is not separated, so slat_ns has N = 0.
//     Both carry fio's percentile map and the json+ "bins" (key: the bin's
//     value in ns, fio's plat_idx_to_val; only non-empty bins).
//   - iops and bw_bytes come from the exact simulated interval (the same
//     figures as --output-format=json); "runtime" is that interval in ms,
//     rounded up, as fio's field is an integer.
//   - One job entry per vCPU (fio's clones); with group_reporting one entry
//     for the whole run.
//   - Not modelled, written as fio writes "no samples": bw_* and iops_*
//     (no periodic samples), ctx / majf / minf. usr_cpu and sys_cpu are the
//     vCPUs' guest-work and in-exit shares of the interval. latency_ns /
//     latency_us / latency_ms are binned from the histogram's bins.
//   - "timestamp" is 0 and "fio version" is "nvmesim-<version>", so the
//     output stays byte-identical for a given seed and configuration.
#pragma once

#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

#include "platform/report/json_out.h"
#include "platform/report/results.h"

namespace nvmesim::platform {

class Config;
struct FioJobs;

// One entry of "jobs": which vCPUs it covers.
struct FioJsonJob {
  std::string name;
  std::vector<std::pair<std::string, std::string>> options;  // "job options"
  std::vector<unsigned> vcpus;
  uint32_t iodepth = 0;
  int group = 0;  // fio's groupid (stonewall, new_group)
};

// The entries for a run: from the job file's sections (`fio`, may be null:
// then each vCPU is a job named "nvmesim" whose options are the workload
// options the user set).
std::vector<FioJsonJob> fio_json_jobs(const RunResults& r, const Config& config, const FioJobs* fio);

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
