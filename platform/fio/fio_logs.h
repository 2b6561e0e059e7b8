// fio's log files out: write_lat_log, write_bw_log, write_iops_log, with
// log_avg_msec and log_offset, in fio 3.33's format (HOWTO "Log File
// Formats"; iolog.c flush_samples, stat.c add_log_sample / __add_samples):
//
//   time (ms from the job's start), value, data direction (0 read, 1 write),
//   block size (bytes)[, offset (bytes) with log_offset=1], priority (0)
//
// Files NAME_lat.N.log, NAME_clat.N.log and NAME_slat.N.log (fio's lat,
// clat and slat, ns: models/guest/fio_latency.h), NAME_bw.N.log
// (per I/O: bytes * 10^6 / lat in ns, as fio's add_bw_sample; windowed:
// KiB/s), NAME_iops.N.log (per I/O: 1; windowed: I/Os per second), N being
// fio's job number (the vCPU's index + 1), NAME the option's value or the
// job's name. A sample is taken when fio reaps the I/O. With log_avg_msec=W, each W ms
// window gives one row per data direction that had I/O: the mean latency
// (rounded as fio: mean + 0.5), or the window's rate; block size and offset
// are 0 in the latency logs and the job's bs in the bw and iops logs, as in
// fio's code. The last, partial window ends at its last I/O.
#pragma once

#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "nvmesim/platform/report/pending_file.h"

namespace nvmesim::platform {

struct FioLogSpec {
  std::string lat, bw, iops;  // file name stems; empty: not written
  uint64_t avg_msec = 0;      // log_avg_msec: 0 = every I/O
  bool offset = false;        // log_offset
  uint32_t bs = 0;            // the job's block size (windowed bw/iops rows)
  bool any() const { return !lat.empty() || !bw.empty() || !iops.empty(); }
};

struct FioLatencies {
  uint64_t slat_ns, clat_ns, lat_ns;
};

// One job's (vCPU's) logs. Rows are streamed to temporary files beside the
// logs as the I/Os complete (memory stays bounded whatever the run's
// length); write_files() renames them into place, as the other outputs are
// written (platform/report/pending_file.h): a failed run leaves old logs as
// they were.
class FioLogs {
 public:
  FioLogs(const FioLogSpec& spec, unsigned job_number);
  ~FioLogs();  // an uncommitted log's temporary file is removed
  FioLogs(const FioLogs&) = delete;
  FioLogs& operator=(const FioLogs&) = delete;
  // Creates the temporary files; "" or a one-line error. Call before the run.
  std::string open_files();
  void add(uint64_t elapsed_ps, const FioLatencies& l, bool write, uint32_t bytes, uint64_t offset);
  // Flushes the last window, closes the files and renames them into place;
  // "" or a one-line error.
  std::string write_files();
  // The file names it writes, in order (lat, clat, slat, bw, iops).
  std::vector<std::string> file_names() const;

 private:
  struct Out {
    PendingFile pending;
    std::FILE* f = nullptr;
  };
  void row(std::initializer_list<Out*> logs, uint64_t ms, uint64_t value, unsigned ddir, uint64_t bs,
           uint64_t offset);
  void flush_window(uint64_t end_ms);

  FioLogSpec spec_;
  unsigned job_number_;
  std::vector<std::unique_ptr<Out>> files_;  // in file_names() order, once opened
  Out* lat_ = nullptr;  // _lat
  Out* clat_ = nullptr;  // _clat
  Out* slat_ = nullptr;  // _slat
  Out* bw_ = nullptr;
  Out* iops_ = nullptr;
  // The open window: per data direction, latency sum and count, bytes.
  uint64_t window_ = 0, last_ms_ = 0;
  long double lat_sum_[2] = {0, 0}, clat_sum_[2] = {0, 0}, slat_sum_[2] = {0, 0};
  uint64_t ios_[2] = {0, 0}, bytes_[2] = {0, 0};
  bool any_ = false;
};

}  // namespace nvmesim::platform
