#include "nvmesim/platform/config/sim_time_range.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "nvmesim/models/guest/fio_options.h"
#include "nvmesim/platform/config/device_backend.h"
#include "nvmesim/platform/config/params.h"

namespace nvmesim::platform {

namespace {

std::string days(double seconds) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f days", seconds / 86400.0);
  return buf;
}

}  // namespace

void check_simulated_time_range(const SystemParams& p, const Config& c) {
  const models::StorageBackend::Params& backend =
      p.device.device == DeviceKind::VirtioBlk ? p.virtio.backend : p.nvme.backend;
  for (const models::WorkloadParams& w : p.jobs) {
    if (w.number_ios == 0) continue;
    const double ios = double(w.number_ios);
    const models::RwMode rw = w.job.rw;
    const bool reads = rw != models::RwMode::Write && rw != models::RwMode::RandWrite;
    const bool writes = rw != models::RwMode::Read && rw != models::RwMode::RandRead;
    const unsigned first = reads ? 0 : 1, last = writes ? 1 : 0;
    // Each bound: seconds, the option and the values behind it.
    double least = 0;
    std::string option, because;
    auto bound = [&](double seconds, const std::string& name, const std::string& why) {
      if (seconds > least) least = seconds, option = name, because = why;
    };
    // fio's rate / rate_iops limit each direction: the job's I/Os cannot go
    // faster than the directions' limits together (a direction without a
    // limit leaves no bound).
    uint64_t rate[2], rate_iops[2];
    models::fio_opt::parse_rate(w.rate, true, rate);
    models::fio_opt::parse_rate(w.rate_iops, false, rate_iops);
    double bytes_per_s = 0, iops = 0;
    bool rate_bounds = true, iops_bounds = true;
    uint64_t min_bs = ~0ull;
    for (unsigned d = first; d <= last; ++d) {
      rate_bounds = rate_bounds && rate[d] > 0;
      iops_bounds = iops_bounds && rate_iops[d] > 0;
      bytes_per_s += double(rate[d]);
      iops += double(rate_iops[d]);
      min_bs = std::min(min_bs, w.job.min_bs(d));
    }
    if (rate_bounds)
      bound(ios * double(min_bs) / bytes_per_s, "rate",
            w.rate + " with bs " + format_size(min_bs) + " and number_ios " + std::to_string(w.number_ios));
    if (iops_bounds)
      bound(ios / iops, "rate_iops", w.rate_iops + " and number_ios " + std::to_string(w.number_ios));
    // A thinktime after every thinktime_blocks I/Os (fio's: not after the last).
    const double thinks = std::max(0.0, double((w.number_ios - 1) / std::max<uint64_t>(1, w.thinktime_blocks)));
    bound(thinks * w.thinktime.to_seconds(), "thinktime",
          c.text("thinktime") + " every " + std::to_string(w.thinktime_blocks) + " I/Os and number_ios " +
              std::to_string(w.number_ios));
    // At most iodepth I/Os wait at the backend at once.
    if (backend.kind != models::BackendKind::Null)
      bound(std::ceil(ios / std::max(1u, unsigned(w.iodepth))) * backend.latency.to_seconds(),
            backend_param(c, "backend_latency"),
            c.text(backend_value_param(c, "backend_latency")) + " per round of iodepth " + std::to_string(w.iodepth) +
                " I/Os and number_ios " + std::to_string(w.number_ios));
    if (least > kSimTimeRefusedShare * kSimTimeRangeSeconds)
      throw ConfigError("--" + option + ": " + because + " need at least " + days(least) +
                        " of simulated time; SystemC's time (64-bit picoseconds) ends at " +
                        days(kSimTimeRangeSeconds) + " and runs that could pass " +
                        days(kSimTimeRefusedShare * kSimTimeRangeSeconds) +
                        " are refused (lower number_ios or thinktime, or raise rate or rate_iops)");
  }
}

}  // namespace nvmesim::platform
