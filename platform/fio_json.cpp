// fio-compatible JSON out (see fio_json.h).
#include "platform/fio_json.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>

#include "platform/json_text.h"
#include <sstream>

#include "platform/fio_job.h"
#include "platform/params.h"

#ifndef NVMESIM_VERSION
#define NVMESIM_VERSION "unknown"
#endif

namespace nvmesim::platform {

using models::LatencyHistogram;

namespace {

std::string quoted(const std::string& s) { return json_quoted(s); }

std::string num(uint64_t v) { return std::to_string(v); }
std::string flt(double v) {  // fio prints floats with %f
  char buf[64];
  std::snprintf(buf, sizeof buf, "%f", std::isfinite(v) ? v : 0.0);
  return buf;
}

// fio's JSON layout: `"key" : value`, two spaces per level.
class Writer {
 public:
  explicit Writer(std::ostream& o) : o_(o) {}
  void open(const std::string& key, char bracket) {
    separate();
    if (!key.empty()) o_ << quoted(key) << " : ";
    o_ << bracket;
    first_.push_back(true);
  }
  void close(char bracket) {
    const bool empty = first_.back();
    first_.pop_back();
    if (!empty) o_ << "\n" << std::string(2 * first_.size(), ' ');
    o_ << bracket;
  }
  void field(const std::string& key, const std::string& raw) {
    separate();
    o_ << quoted(key) << " : " << raw;
  }

 private:
  void separate() {
    if (first_.empty()) return;
    o_ << (first_.back() ? "\n" : ",\n") << std::string(2 * first_.size(), ' ');
    first_.back() = false;
  }
  std::ostream& o_;
  std::vector<bool> first_;
};

// slat_ns / clat_ns / lat_ns (fio's add_ddir_lat_json, json+ flavour).
void lat_object(Writer& w, const char* key, const DirectionFigures* d) {
  w.open(key, '{');
  const uint64_t n = d ? d->lat.count() : 0;
  w.field("min", num(n ? d->lat.min() : 0));
  w.field("max", num(n ? d->lat.max() : 0));
  w.field("mean", flt(n ? d->lat.mean() : 0));
  w.field("stddev", flt(n ? d->lat_stddev() : 0));
  w.field("N", num(n));
  if (n) {
    w.open("percentile", '{');
    for (double p : LatencyHistogram::fio_percentiles()) w.field(flt(p), num(d->lat.percentile(p)));
    w.close('}');
    w.open("bins", '{');
    const auto& bins = d->lat.bins();
    for (unsigned i = 0; i < LatencyHistogram::PLAT_NR; ++i)
      if (bins[i]) w.field(num(LatencyHistogram::index_to_value(i)), num(bins[i]));
    w.close('}');
  }
  w.close('}');
}

void direction(Writer& w, const char* key, const DirectionFigures& d, double runtime_ns) {
  const double secs = runtime_ns / 1e9;
  const bool any = d.ios > 0 && secs > 0;
  const uint64_t bw_bytes = any ? uint64_t(double(d.bytes) / secs) : 0;
  w.open(key, '{');
  w.field("io_bytes", num(d.bytes));
  w.field("io_kbytes", num(d.bytes >> 10));
  w.field("bw_bytes", num(bw_bytes));
  w.field("bw", num(bw_bytes / 1024));
  w.field("iops", flt(any ? double(d.ios) / secs : 0));
  w.field("runtime", num(d.ios ? uint64_t(std::ceil(runtime_ns / 1e6)) : 0));
  w.field("total_ios", num(d.ios));
  w.field("short_ios", "0");
  w.field("drop_ios", "0");
  lat_object(w, "slat_ns", nullptr);
  lat_object(w, "clat_ns", &d);
  lat_object(w, "lat_ns", &d);
  for (const char* k : {"bw_min", "bw_max"}) w.field(k, "0");
  for (const char* k : {"bw_agg", "bw_mean", "bw_dev"}) w.field(k, flt(0));
  w.field("bw_samples", "0");
  for (const char* k : {"iops_min", "iops_max"}) w.field(k, "0");
  for (const char* k : {"iops_mean", "iops_stddev"}) w.field(k, flt(0));
  w.field("iops_samples", "0");
  w.close('}');
}

// fio's latency_ns / latency_us / latency_ms shares (io_u_mark_lat_*),
// binned from each histogram bin's value.
void latency_shares(Writer& w, const DirectionFigures& a, const DirectionFigures& b) {
  static const uint64_t nu[10] = {2, 4, 10, 20, 50, 100, 250, 500, 750, 1000};
  static const uint64_t m[11] = {2, 4, 10, 20, 50, 100, 250, 500, 750, 1000, 2000};
  uint64_t ns[10] = {}, us[10] = {}, ms[12] = {};
  for (const DirectionFigures* d : {&a, &b}) {
    const auto& bins = d->lat.bins();
    for (unsigned i = 0; i < LatencyHistogram::PLAT_NR; ++i) {
      if (!bins[i]) continue;
      const uint64_t v = LatencyHistogram::index_to_value(i);
      auto index = [](const uint64_t* thr, unsigned n, uint64_t x) {
        unsigned k = 0;
        while (k < n && x >= thr[k]) ++k;
        return k;
      };
      if (v < 1000) ns[index(nu, 10, v)] += bins[i];
      else if (v / 1000 < 1000) us[index(nu, 10, v / 1000)] += bins[i];
      else ms[index(m, 11, v / 1000000)] += bins[i];
    }
  }
  const uint64_t total = a.ios + b.ios;
  auto share = [&](uint64_t c) {
    double p = total ? 100.0 * double(c) / double(total) : 0.0;
    if (c && p < 0.01) p = 0.01;  // fio shows any non-empty bucket as at least 0.01%
    return flt(p);
  };
  w.open("latency_ns", '{');
  for (unsigned k = 0; k < 10; ++k) w.field(num(nu[k]), share(ns[k]));
  w.close('}');
  w.open("latency_us", '{');
  for (unsigned k = 0; k < 10; ++k) w.field(num(nu[k]), share(us[k]));
  w.close('}');
  w.open("latency_ms", '{');
  for (unsigned k = 0; k < 11; ++k) w.field(num(m[k]), share(ms[k]));
  w.field(">=2000", share(ms[11]));
  w.close('}');
}

}  // namespace

std::vector<FioJsonJob> fio_json_jobs(const RunResults& r, const Config& config, const FioJobs* fio) {
  std::vector<FioJsonJob> out;
  const unsigned vcpus = unsigned(r.vcpus.size());
  if (fio && fio->group_reporting) {
    FioJsonJob j;
    j.name = fio->jobs[0].name;
    j.options = fio->jobs[0].options;
    j.iodepth = uint32_t(fio->jobs[0].config.integer("iodepth"));
    for (unsigned v = 0; v < vcpus; ++v) j.vcpus.push_back(v);
    out.push_back(std::move(j));
    return out;
  }
  std::vector<std::pair<std::string, std::string>> flat;
  if (!fio)
    for (const char* name : {"rw", "bs", "iodepth", "iodepth_batch_submit", "numjobs", "runtime",
                             "number_ios", "size", "rwmixread", "seed", "verify"})
      if (config.is_set(name)) flat.emplace_back(name, config.text(name));
  for (unsigned v = 0; v < vcpus; ++v) {
    FioJsonJob j;
    if (fio && v < fio->vcpu_job.size()) {
      const FioJob& job = fio->jobs[fio->vcpu_job[v]];
      j.name = job.name;
      j.options = job.options;
      j.iodepth = uint32_t(job.config.integer("iodepth"));
    } else {
      j.name = "nvmesim";
      j.options = flat;
      j.iodepth = uint32_t(config.integer("iodepth"));
    }
    j.vcpus.push_back(v);
    out.push_back(std::move(j));
  }
  return out;
}

void write_fio_json_plus(const RunResults& r, const Config& config, const FioJobs* fio,
                         std::ostream& o) {
  Writer w(o);
  w.open("", '{');
  w.field("fio version", quoted(std::string("nvmesim-") + NVMESIM_VERSION));
  w.field("timestamp", "0");
  w.field("timestamp_ms", "0");
  w.field("time", quoted("Thu Jan  1 00:00:00 1970"));
  if (fio && !fio->global_options.empty()) {
    w.open("global options", '{');
    for (const auto& [k, v] : fio->global_options) w.field(k, quoted(v));
    w.close('}');
  }
  w.open("jobs", '[');
  for (const FioJsonJob& job : fio_json_jobs(r, config, fio)) {
    DirectionFigures rd, wr;
    double runtime_ns = 0, guest_ns = 0, exit_ns = 0;
    for (unsigned v : job.vcpus) {
      const VcpuFigures& f = r.vcpus[v];
      rd.merge(f.read);
      wr.merge(f.write);
      runtime_ns = std::max(runtime_ns, f.sim_time_ns);
      guest_ns += f.guest_ns;
      exit_ns += f.exit_ns;
    }
    const double span = runtime_ns * double(job.vcpus.size());
    w.open("", '{');
    w.field("jobname", quoted(job.name));
    w.field("groupid", "0");
    w.field("error", r.io_errors ? "5" : "0");  // EIO, as fio reports a failed I/O
    if (!job.options.empty()) {
      w.open("job options", '{');
      for (const auto& [k, v] : job.options) w.field(k, quoted(v));
      w.close('}');
    }
    direction(w, "read", rd, runtime_ns);
    direction(w, "write", wr, runtime_ns);
    direction(w, "trim", DirectionFigures{}, runtime_ns);
    w.open("sync", '{');
    w.field("total_ios", "0");
    lat_object(w, "lat_ns", nullptr);
    w.close('}');
    w.field("job_runtime", num(uint64_t(std::ceil(runtime_ns / 1e6))));
    w.field("usr_cpu", flt(span > 0 ? 100.0 * guest_ns / span : 0));
    w.field("sys_cpu", flt(span > 0 ? 100.0 * exit_ns / span : 0));
    for (const char* k : {"ctx", "majf", "minf"}) w.field(k, "0");
    latency_shares(w, rd, wr);
    w.field("latency_depth", num(job.iodepth));
    w.field("latency_target", "0");
    w.field("latency_percentile", flt(100.0));
    w.field("latency_window", "0");
    w.close('}');
  }
  w.close(']');
  std::ostringstream own;
  write_json(r, own, "  ");
  o << ",\n  " << quoted("nvmesim") << " : " << own.str().substr(2) << "\n}\n";
}

}  // namespace nvmesim::platform
