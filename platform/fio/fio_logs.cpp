// fio's log files out (see fio_logs.h).
#include "nvmesim/platform/fio/fio_logs.h"

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>

namespace nvmesim::platform {

FioLogs::FioLogs(const FioLogSpec& spec, unsigned job_number) : spec_(spec), job_number_(job_number) {}

FioLogs::~FioLogs() {
  for (auto& o : files_)
    if (o->f) std::fclose(o->f);
}

std::string FioLogs::open_files() {
  const std::vector<std::string> names = file_names();
  for (const std::string& name : names) {
    auto o = std::make_unique<Out>();
    std::string e = o->pending.create(name);
    if (e.empty() && !(o->f = std::fopen(o->pending.temp_path().c_str(), "w"))) e = std::strerror(errno);
    if (!e.empty()) return "cannot write the fio log " + name + " (" + e + ")";
    files_.push_back(std::move(o));
  }
  size_t k = 0;
  if (!spec_.lat.empty()) {
    lat_ = files_[k++].get();
    clat_ = files_[k++].get();
    slat_ = files_[k++].get();
  }
  if (!spec_.bw.empty()) bw_ = files_[k++].get();
  if (!spec_.iops.empty()) iops_ = files_[k++].get();
  return "";
}

std::vector<std::string> FioLogs::file_names() const {
  std::vector<std::string> names;
  const std::string n = "." + std::to_string(job_number_) + ".log";
  if (!spec_.lat.empty()) {
    names.push_back(spec_.lat + "_lat" + n);
    names.push_back(spec_.lat + "_clat" + n);
    names.push_back(spec_.lat + "_slat" + n);
  }
  if (!spec_.bw.empty()) names.push_back(spec_.bw + "_bw" + n);
  if (!spec_.iops.empty()) names.push_back(spec_.iops + "_iops" + n);
  return names;
}

// iolog.c flush_samples: "%lu, %" PRId64 ", %u, %llu[, %llu], %u\n".
void FioLogs::row(std::initializer_list<Out*> logs, uint64_t ms, uint64_t value, unsigned ddir, uint64_t bs,
                  uint64_t offset) {
  char b[128];
  if (spec_.offset)
    std::snprintf(b, sizeof b, "%" PRIu64 ", %" PRIu64 ", %u, %" PRIu64 ", %" PRIu64 ", 0\n", ms, value, ddir, bs, offset);
  else
    std::snprintf(b, sizeof b, "%" PRIu64 ", %" PRIu64 ", %u, %" PRIu64 ", 0\n", ms, value, ddir, bs);
  for (Out* o : logs)
    if (o && o->f) std::fputs(b, o->f);
}

void FioLogs::add(uint64_t elapsed_ps, const FioLatencies& l, bool write, uint32_t bytes, uint64_t offset) {
  const uint64_t ms = elapsed_ps / 1000000000ull;  // fio's mtime_since: whole ms
  const unsigned d = write ? 1 : 0;
  const uint64_t lat_ns = l.lat_ns;
  if (spec_.avg_msec == 0) {
    if (!spec_.lat.empty()) {
      row({lat_}, ms, lat_ns, d, bytes, offset);
      row({clat_}, ms, l.clat_ns, d, bytes, offset);
      row({slat_}, ms, l.slat_ns, d, bytes, offset);
    }
    // stat.c add_bw_sample: rate = bytes * 1000000 / spent (the latency in ns).
    if (!spec_.bw.empty()) row({bw_}, ms, lat_ns ? uint64_t(bytes) * 1000000ull / lat_ns : 0, d, bytes, offset);
    if (!spec_.iops.empty()) row({iops_}, ms, 1, d, bytes, offset);
    return;
  }
  const uint64_t w = ms / spec_.avg_msec;
  if (any_ && w != window_) flush_window((window_ + 1) * spec_.avg_msec);
  window_ = w;
  last_ms_ = ms;
  any_ = true;
  lat_sum_[d] += lat_ns;
  clat_sum_[d] += l.clat_ns;
  slat_sum_[d] += l.slat_ns;
  ++ios_[d];
  bytes_[d] += bytes;
}

// One row per data direction that had I/O in the window ending at end_ms.
void FioLogs::flush_window(uint64_t end_ms) {
  const uint64_t spent = end_ms > window_ * spec_.avg_msec ? end_ms - window_ * spec_.avg_msec : 0;
  for (unsigned d = 0; d < 2; ++d) {
    if (!ios_[d]) continue;
    // stat.c __add_stat_to_log: the mean, rounded up at .5.
    if (!spec_.lat.empty()) {
      row({lat_}, end_ms, uint64_t(lat_sum_[d] / ios_[d] + 0.5L), d, 0, 0);
      row({clat_}, end_ms, uint64_t(clat_sum_[d] / ios_[d] + 0.5L), d, 0, 0);
      row({slat_}, end_ms, uint64_t(slat_sum_[d] / ios_[d] + 0.5L), d, 0, 0);
    }
    // stat.c __add_samples: KiB/s and I/Os per second over the window.
    if (!spec_.bw.empty()) row({bw_}, end_ms, spent ? bytes_[d] * 1000 / spent / 1024 : 0, d, spec_.bs, 0);
    if (!spec_.iops.empty()) row({iops_}, end_ms, spent ? ios_[d] * 1000 / spent : 0, d, spec_.bs, 0);
    lat_sum_[d] = clat_sum_[d] = slat_sum_[d] = 0;
    ios_[d] = bytes_[d] = 0;
  }
}

std::string FioLogs::write_files() {
  if (spec_.avg_msec && any_) {
    // The partial window ends at its last I/O (at least 1 ms in, so it has a rate).
    flush_window(std::max(last_ms_, window_ * spec_.avg_msec + 1));
    any_ = false;
  }
  if (files_.empty() && spec_.any()) return "internal error: the fio logs were not opened before the run";
  for (auto& o : files_) {
    const bool bad = std::ferror(o->f) || std::fflush(o->f) != 0;
    const bool closed = std::fclose(o->f) == 0;
    o->f = nullptr;
    if (bad || !closed) return "error writing the fio log " + o->pending.path() + " (" + std::strerror(errno) + ")";
  }
  for (auto& o : files_)
    if (const std::string e = o->pending.commit(); !e.empty())
      return "cannot rename the finished fio log to " + o->pending.path() + " (" + e + ")";
  return "";
}

}  // namespace nvmesim::platform
