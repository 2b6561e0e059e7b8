// fio-compatible JSON out (see fio_json.h).
#include "nvmesim/platform/fio/fio_json.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <nlohmann/json.hpp>

#include "nvmesim/platform/fio/fio_job.h"
#include "nvmesim/platform/config/params.h"
#include "nvmesim/platform/report/json_out.h"

#ifndef NVMESIM_VERSION
#define NVMESIM_VERSION "unknown"
#endif

namespace nvmesim::platform {

using models::LatencyHistogram;

namespace {

using report::Json;

Json flt(double v) { return report::fixed(std::isfinite(v) ? v : 0.0, 6); }  // fio prints floats with %f
std::string flt_key(double v) { return report::dump(flt(v)); }

// slat_ns / clat_ns / lat_ns (fio's add_ddir_lat_json, json+ flavour).
Json lat_object(const models::LatencyStat* d) {
  Json o;
  const uint64_t n = d ? d->hist.count() : 0;
  o["min"] = n ? d->hist.min() : 0;
  o["max"] = n ? d->hist.max() : 0;
  o["mean"] = flt(n ? d->hist.mean() : 0);
  o["stddev"] = flt(n ? d->stddev() : 0);
  o["N"] = n;
  if (n) {
    Json& percentile = o["percentile"] = Json::object();
    for (double p : LatencyHistogram::fio_percentiles()) percentile[flt_key(p)] = d->hist.percentile(p);
    Json& bins = o["bins"] = Json::object();
    const auto& counts = d->hist.bins();
    for (unsigned i = 0; i < LatencyHistogram::PLAT_NR; ++i)
      if (counts[i]) bins[std::to_string(LatencyHistogram::index_to_value(i))] = counts[i];
  }
  return o;
}

// One direction of a job: its I/Os and bytes (the statistics tree's) and
// its latencies.
struct Direction {
  uint64_t ios = 0, bytes = 0;
  DirectionLatency latency;
};

Json direction(const Direction& dir, double runtime_ns) {
  const DirectionLatency& d = dir.latency;
  const double secs = runtime_ns / 1e9;
  const bool any = dir.ios > 0 && secs > 0;
  const uint64_t bw_bytes = any ? uint64_t(double(dir.bytes) / secs) : 0;
  Json o;
  o["io_bytes"] = dir.bytes;
  o["io_kbytes"] = dir.bytes >> 10;
  o["bw_bytes"] = bw_bytes;
  o["bw"] = bw_bytes / 1024;
  o["iops"] = flt(any ? double(dir.ios) / secs : 0);
  o["runtime"] = dir.ios ? uint64_t(std::ceil(runtime_ns / 1e6)) : 0;
  o["total_ios"] = dir.ios;
  o["short_ios"] = 0;
  o["drop_ios"] = 0;
  o["slat_ns"] = lat_object(&d.slat);
  o["clat_ns"] = lat_object(&d.clat);
  o["lat_ns"] = lat_object(&d.lat);
  for (const char* k : {"bw_min", "bw_max"}) o[k] = 0;
  for (const char* k : {"bw_agg", "bw_mean", "bw_dev"}) o[k] = flt(0);
  o["bw_samples"] = 0;
  for (const char* k : {"iops_min", "iops_max"}) o[k] = 0;
  for (const char* k : {"iops_mean", "iops_stddev"}) o[k] = flt(0);
  o["iops_samples"] = 0;
  return o;
}

// fio's latency_ns / latency_us / latency_ms shares (io_u_mark_latency,
// of each I/O's clat), binned from each histogram bin's value.
void latency_shares(Json& job, const Direction& a, const Direction& b) {
  static const uint64_t nu[10] = {2, 4, 10, 20, 50, 100, 250, 500, 750, 1000};
  static const uint64_t m[11] = {2, 4, 10, 20, 50, 100, 250, 500, 750, 1000, 2000};
  uint64_t ns[10] = {}, us[10] = {}, ms[12] = {};
  for (const Direction* d : {&a, &b}) {
    const auto& bins = d->latency.clat.hist.bins();
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
  Json& lat_ns = job["latency_ns"] = Json::object();
  for (unsigned k = 0; k < 10; ++k) lat_ns[std::to_string(nu[k])] = share(ns[k]);
  Json& lat_us = job["latency_us"] = Json::object();
  for (unsigned k = 0; k < 10; ++k) lat_us[std::to_string(nu[k])] = share(us[k]);
  Json& lat_ms = job["latency_ms"] = Json::object();
  for (unsigned k = 0; k < 11; ++k) lat_ms[std::to_string(m[k])] = share(ms[k]);
  lat_ms[">=2000"] = share(ms[11]);
}

}  // namespace

// fio's stat_calc_dist: shares in percent, a non-empty bucket at least 0.1.
std::array<double, models::IoDepthCounts::kBuckets> depth_shares(
    const std::array<uint64_t, models::IoDepthCounts::kBuckets>& map, uint64_t total) {
  std::array<double, models::IoDepthCounts::kBuckets> out{};
  for (unsigned i = 0; i < out.size(); ++i) {
    if (!total) continue;
    out[i] = 100.0 * double(map[i]) / double(total);
    if (out[i] < 0.1 && map[i]) out[i] = 0.1;
  }
  return out;
}

// fio's iodepth_level, iodepth_submit, iodepth_complete (stat.c show_thread_status_json).
void io_depths_json(Json& job, const models::IoDepthCounts& d) {
  uint64_t total = 0;
  for (uint64_t c : d.depth) total += c;
  const auto level = depth_shares(d.depth, total);
  Json& l = job["iodepth_level"] = Json::object();
  for (unsigned i = 0; i < 7; ++i) l[(i < 6 ? "" : ">=") + std::to_string(1u << i)] = flt(level[i]);
  auto calls = [&](const char* key, const std::array<uint64_t, 7>& map, uint64_t n) {
    const auto share = depth_shares(map, n);
    Json& o = job[key] = Json::object();
    for (unsigned i = 0; i < 7; ++i)
      o[i == 0 ? std::string("0") : i < 6 ? std::to_string(1u << (i + 1)) : ">=" + std::to_string(1u << i)] =
          flt(share[i]);
  };
  calls("iodepth_submit", d.submit, d.submit_calls);
  calls("iodepth_complete", d.complete, d.complete_calls);
}

namespace {
// The job's iodepth and latency_target options.
void job_settings(FioJsonJob& j, const Config& c) {
  j.iodepth = uint32_t(c.integer("iodepth"));
  j.latency_target_ns = uint64_t(c.time_ns("latency_target"));
  j.latency_window_us = uint64_t(c.time_ns("latency_window") / 1000);
  j.latency_percentile = c.real("latency_percentile");
}
}  // namespace

std::vector<FioJsonJob> fio_json_jobs(const RunResults& r, const Config& config, const FioJobs* fio) {
  std::vector<FioJsonJob> out;
  const unsigned vcpus = unsigned(r.vcpus.size());
  if (fio && fio->group_reporting) {  // one entry per reporting group, named after its first job
    for (unsigned v = 0; v < vcpus; ++v) {
      const FioJob& job = fio->jobs[v < fio->vcpu_job.size() ? fio->vcpu_job[v] : 0];
      if (out.empty() || out.back().group != job.group) {
        FioJsonJob j;
        j.name = job.name;
        j.options = job.options;
        job_settings(j, job.config);
        j.group = job.group;
        out.push_back(std::move(j));
      }
      out.back().vcpus.push_back(v);
    }
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
      job_settings(j, job.config);
      j.group = job.group;
    } else {
      j.name = "nvmesim";
      j.options = flat;
      job_settings(j, config);
    }
    j.vcpus.push_back(v);
    out.push_back(std::move(j));
  }
  return out;
}

report::Json fio_json_plus_jobs(const RunResults& r, const Config& config, const FioJobs* fio,
                                int groupid, const std::vector<std::pair<std::string, std::string>>& extra_options) {
  Json jobs = Json::array();
  for (FioJsonJob job : fio_json_jobs(r, config, fio)) {
    job.options.insert(job.options.end(), extra_options.begin(), extra_options.end());
    Direction rd, wr;
    double runtime_ns = 0, guest_ns = 0, exit_ns = 0;
    for (unsigned v : job.vcpus) {
      const VcpuFigures& f = r.vcpus[v];
      const std::string group = "vcpu" + std::to_string(v) + ".";
      rd.ios += r.stats.at(group + "read_ios");
      rd.bytes += r.stats.at(group + "read_bytes");
      rd.latency.merge(f.read);
      wr.ios += r.stats.at(group + "write_ios");
      wr.bytes += r.stats.at(group + "write_bytes");
      wr.latency.merge(f.write);
      runtime_ns = std::max(runtime_ns, f.sim_time_ns);
      guest_ns += r.figure("utilization.vcpu.guest_ns", v);
      exit_ns += r.figure("utilization.vcpu.exit_ns", v);
    }
    const double span = runtime_ns * double(job.vcpus.size());
    Json j;
    j["jobname"] = job.name;
    j["groupid"] = groupid + job.group;
    j["error"] = r.count("io_errors") ? 5 : 0;  // EIO, as fio reports a failed I/O
    if (!job.options.empty()) {
      Json& options = j["job options"] = Json::object();
      for (const auto& [k, v] : job.options) options[k] = v;
    }
    j["read"] = direction(rd, runtime_ns);
    j["write"] = direction(wr, runtime_ns);
    j["trim"] = direction(Direction{}, runtime_ns);
    j["sync"] = {{"total_ios", 0}, {"lat_ns", lat_object(nullptr)}};
    j["job_runtime"] = uint64_t(std::ceil(runtime_ns / 1e6));
    j["usr_cpu"] = flt(span > 0 ? 100.0 * guest_ns / span : 0);
    j["sys_cpu"] = flt(span > 0 ? 100.0 * exit_ns / span : 0);
    for (const char* k : {"ctx", "majf", "minf"}) j[k] = 0;
    models::IoDepthCounts depths;
    for (unsigned v : job.vcpus) depths.merge(r.vcpus[v].depths);
    io_depths_json(j, depths);
    latency_shares(j, rd, wr);
    // fio's ts->latency_depth: td->latency_qd, the latency_target search's
    // depth (iodepth without one); the job's first clone's.
    const uint64_t* qd = job.vcpus.empty() ? nullptr
                                           : r.stats.find("vcpu" + std::to_string(job.vcpus[0]) + ".latency_target_depth");
    j["latency_depth"] = qd ? *qd : uint64_t(job.iodepth);
    j["latency_target"] = job.latency_target_ns;  // fio: ns (stat.c, ts->latency_target)
    j["latency_percentile"] = flt(job.latency_percentile);
    j["latency_window"] = job.latency_window_us;  // fio: us
    jobs.push_back(std::move(j));
  }
  return jobs;
}

report::JsonStyle fio_json_style() {
  report::JsonStyle fio_style;  // fio's layout: `"key" : value`, every value on its own line
  fio_style.key_separator = " : ";
  fio_style.inline_max = 0;
  return fio_style;
}

void write_fio_json_plus_doc(const FioJobs* fio, const std::vector<std::string>& job_texts,
                             const std::string& nvmesim_text, std::ostream& o) {
  Json doc;
  doc["fio version"] = std::string("nvmesim-") + NVMESIM_VERSION;
  doc["timestamp"] = 0;
  doc["timestamp_ms"] = 0;
  doc["time"] = "Thu Jan  1 00:00:00 1970";
  if (fio && !fio->global_options.empty()) {
    Json& global = doc["global options"] = Json::object();
    for (const auto& [k, v] : fio->global_options) global[k] = v;
  }
  Json& jobs = doc["jobs"] = Json::array();
  for (const std::string& text : job_texts) jobs.push_back(report::raw(text));
  doc["nvmesim"] = report::raw(nvmesim_text);
  o << report::dump(doc, fio_json_style()) << "\n";
}

void write_fio_json_plus(const RunResults& r, const Config& config, const FioJobs* fio,
                         std::ostream& o) {
  std::vector<std::string> texts;
  for (const Json& job : fio_json_plus_jobs(r, config, fio, 0, {}))
    texts.push_back(report::dump(job, fio_json_style(), 2));
  // nvmesim's own document, in its own layout, one level in.
  write_fio_json_plus_doc(fio, texts, report::dump(results_json(r), {}, 1), o);
}

}  // namespace nvmesim::platform
