#include "nvmesim/platform/report/fio_text.h"
#include "nvmesim/platform/fio/fio_json.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <map>
#include <ostream>
#include <vector>

namespace nvmesim::platform::fio_text {

std::string num2str(uint64_t num, int maxlen, bool pow2, const char* unit) {
  static const char* si[] = {"", "k", "M", "G", "T", "P", "E"};
  static const char* iec[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
  const uint64_t thousand = pow2 ? 1024 : 1000;
  const char** prefix = pow2 ? iec : si;
  unsigned post = 0;
  bool divided = false, carry = false;
  uint64_t modulo = 0;
  while (post < 7 && std::to_string(num).size() > size_t(maxlen)) {
    modulo = num % thousand;
    num /= thousand;
    carry = modulo >= thousand / 2;
    divided = true;
    ++post;
  }
  if (post >= 7) post = 0;
  char b[64];
  if (!divided) {
    std::snprintf(b, sizeof b, "%" PRIu64 "%s%s", num, prefix[post], unit);
    return b;
  }
  const int room = maxlen - int(std::to_string(num).size());
  if (room <= 1) {  // no room for a decimal
    std::snprintf(b, sizeof b, "%" PRIu64 "%s%s", num + (carry ? 1 : 0), prefix[post], unit);
    return b;
  }
  char frac[32];
  std::snprintf(frac, sizeof frac, "%.*f", room - 1, double(modulo) / double(thousand));
  if (frac[0] == '1') ++num;  // the fraction rounded up to a whole one
  std::snprintf(b, sizeof b, "%" PRIu64 ".%s%s%s", num, frac + 2, prefix[post], unit);
  return b;
}

void latency_line(std::ostream& o, const char* name, const models::LatencyStat& l) {
  uint64_t min = l.hist.min(), max = l.hist.max();
  double mean = l.hist.mean(), dev = l.stddev();
  const char* base = "(nsec)";
  // stat.h nsec_to_msec, nsec_to_usec: scale when the values are large and spread.
  if (min > 2000000 && max > 99999999ull && dev > 1000000.0) {
    min /= 1000000, max /= 1000000, mean /= 1e6, dev /= 1e6;
    base = "(msec)";
  } else if (min > 2000 && max > 99999 && dev > 1000.0) {
    min /= 1000, max /= 1000, mean /= 1e3, dev /= 1e3;
    base = "(usec)";
  }
  char b[256];
  std::snprintf(b, sizeof b, "    %s %s: min=%s, max=%s, avg=%5.02f, stdev=%5.02f\n", name, base,
                num2str(min, 6, false, "").c_str(), num2str(max, 6, false, "").c_str(), mean, dev);
  o << b;
}

void percentiles(std::ostream& o, const char* name, const models::LatencyHistogram& h) {
  if (!h.count()) return;
  const auto& ps = models::LatencyHistogram::fio_percentiles();
  std::vector<uint64_t> v;
  for (double p : ps) v.push_back(h.percentile(p));
  const uint64_t minv = *std::min_element(v.begin(), v.end()), maxv = *std::max_element(v.begin(), v.end());
  unsigned scale_down = 0;
  uint64_t divisor = 1;
  const char* unit = "nsec";
  if (minv > 2000000 && maxv > 99999999ull) {
    scale_down = 2, divisor = 1000000, unit = "msec";
  } else if (minv > 2000 && maxv > 99999) {
    scale_down = 1, divisor = 1000, unit = "usec";
  }
  const unsigned precision = 2;
  const int width = std::max(5, int(std::log10(double(maxv / divisor)) + 1));
  const unsigned per_line = (80 - 7) / (precision + 10 + unsigned(width));
  o << "    " << name << " percentiles (" << unit << "):\n     |";
  char b[64];
  for (size_t j = 0; j < v.size(); ++j) {
    if (j != 0 && j % per_line == 0) o << "     |";
    uint64_t x = v[j];
    for (unsigned i = 0; i < scale_down; ++i) x = (x + 999) / 1000;
    const bool last = j + 1 == v.size();
    std::snprintf(b, sizeof b, " %*.*fth=[%*" PRIu64 "]%c", precision + 3, precision, ps[j], width, x,
                  last ? '\n' : ',');
    o << b;
    if (last) break;
    if (j % per_line == per_line - 1) o << "\n";
  }
}

void group_status(std::ostream& o, const RunResults& r) {
  // vCPUs by reporting group: the job file's sections, else one group.
  std::map<int, std::vector<unsigned>> groups;
  if (r.sections.empty()) {
    for (unsigned v = 0; v < r.vcpus.size(); ++v) groups[0].push_back(v);
  } else {
    for (const JobSection& s : r.sections)
      for (unsigned v : s.vcpus) groups[s.group].push_back(v);
  }
  for (const auto& [g, vcpus] : groups) {
    o << "\nRun status group " << g << " (all jobs):\n";
    for (unsigned d = 0; d < 2; ++d) {
      uint64_t bytes = 0;
      double run_min = 0, run_max = 0, bw_min = 0, bw_max = 0;
      bool any = false;
      for (unsigned v : vcpus) {
        const VcpuFigures& f = r.vcpus[v];
        // The job's own counts (its vcpu<N> statistics group).
        const std::string group = "vcpu" + std::to_string(v) + (d ? ".write_" : ".read_");
        const uint64_t ios = r.stats.at(group + "ios"), dir_bytes = r.stats.at(group + "bytes");
        if (!ios) continue;
        // fio's stat.c: a job's runtime in whole milliseconds, rounded up
        // (backend.c update_runtime), and its bandwidth io_bytes * 1000 /
        // that runtime, so one job's min-max equals the group's bw.
        const double run_ms = std::ceil(f.sim_time_ns / 1e6);
        const double bw = run_ms > 0 ? double(dir_bytes * 1000 / uint64_t(run_ms)) : 0;
        if (!any || run_ms < run_min) run_min = run_ms;
        if (!any || run_ms > run_max) run_max = run_ms;
        if (!any || bw < bw_min) bw_min = bw;
        if (!any || bw > bw_max) bw_max = bw;
        bytes += dir_bytes;
        any = true;
      }
      if (!any) continue;
      // fio: the group's bandwidth is its bytes over its longest job's
      // runtime in whole milliseconds (the figures the line prints agree).
      const uint64_t agg = run_max > 0 ? uint64_t(double(bytes) * 1000.0 / run_max) : 0;
      char b[512];
      std::snprintf(b, sizeof b, "%s: bw=%s (%s), %s-%s (%s-%s), io=%s (%s), run=%.0f-%.0fmsec\n",
                    d ? "  WRITE" : "   READ", num2str(agg, 4, true, "B/s").c_str(), num2str(agg, 4, false, "B/s").c_str(),
                    num2str(uint64_t(bw_min), 4, true, "B/s").c_str(), num2str(uint64_t(bw_max), 4, true, "B/s").c_str(),
                    num2str(uint64_t(bw_min), 4, false, "B/s").c_str(), num2str(uint64_t(bw_max), 4, false, "B/s").c_str(),
                    num2str(bytes, 4, true, "B").c_str(), num2str(bytes, 4, false, "B").c_str(), run_min, run_max);
      o << b;
    }
  }
}

}  // namespace nvmesim::platform::fio_text

namespace nvmesim::platform::fio_text {

namespace {

// fio's IOPS with k = 1000, and the bandwidth in MiB/s and MB/s.
std::string human_count(double v) {
  char buf[32];
  if (v >= 1e6)
    std::snprintf(buf, sizeof buf, "%.2fM", v / 1e6);
  else if (v >= 1e3)
    std::snprintf(buf, sizeof buf, "%.1fk", v / 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.0f", v);
  return buf;
}

std::string human_bw(double bytes_per_s) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1fMiB/s (%.1fMB/s)", bytes_per_s / 1048576.0, bytes_per_s / 1e6);
  return buf;
}

uint64_t stat_or_zero(const stats::GroupValues& stats, const std::string& path) {
  const uint64_t* v = stats.find(path);
  return v ? *v : 0;
}

}  // namespace

void direction_blocks(std::ostream& o, const DirectionCounts& counts, double sim_time_ns, const DirectionLatency& read,
                      const DirectionLatency& write) {
  // fio's layout (stat.c show_ddir_status): per direction slat, clat, lat,
  // then clat's percentiles, in fio's units.
  for (const DirectionLatency* d : {&read, &write}) {
    const std::string name = d == &read ? "read" : "write";
    const unsigned k = d == &read ? 0 : 1;
    const uint64_t ios = counts.ios[k];
    if (!ios) continue;
    // derived_figures.cpp per_second: the same arithmetic, so the figures agree.
    auto per_second = [&](double v) { return sim_time_ns > 0 ? v / (sim_time_ns / 1e9) : 0; };
    char b[64];
    std::snprintf(b, sizeof b, "%.1f", sim_time_ns / 1000.0);
    o << "  " << name << ": IOPS=" << human_count(per_second(double(ios))) << ", BW="
      << human_bw(per_second(double(counts.bytes[k]))) << " (" << ios << " I/Os in " << b << " us simulated)\n";
    if (!d->lat.hist.count()) continue;
    latency_line(o, "slat", d->slat);
    latency_line(o, "clat", d->clat);
    latency_line(o, " lat", d->lat);
    percentiles(o, "clat", d->clat.hist);
  }
}

void io_depths(std::ostream& o, const models::IoDepthCounts& depths) {
  uint64_t total = 0;
  for (uint64_t c : depths.depth) total += c;
  const auto level = depth_shares(depths.depth, total);
  const auto submit = depth_shares(depths.submit, depths.submit_calls);
  const auto complete = depth_shares(depths.complete, depths.complete_calls);
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "  IO depths    : 1=%3.1f%%, 2=%3.1f%%, 4=%3.1f%%, 8=%3.1f%%, 16=%3.1f%%, 32=%3.1f%%, >=64=%3.1f%%\n",
                level[0], level[1], level[2], level[3], level[4], level[5], level[6]);
  o << buf;
  for (int k = 0; k < 2; ++k) {
    const auto& v = k ? complete : submit;
    std::snprintf(buf, sizeof buf,
                  "     %s  : 0=%3.1f%%, 4=%3.1f%%, 8=%3.1f%%, 16=%3.1f%%, 32=%3.1f%%, 64=%3.1f%%, >=64=%3.1f%%\n",
                  k ? "complete" : "submit  ", v[0], v[1], v[2], v[3], v[4], v[5], v[6]);
    o << buf;
  }
}

void job_blocks(std::ostream& o, const RunResults& r) {
  // Each block: the jobs (vCPUs) it covers, its name and group.
  struct Block {
    std::string name;
    int group;
    std::vector<unsigned> vcpus;
  };
  std::vector<Block> blocks;
  for (const JobSection& s : r.sections) {
    if (r.group_reporting) {
      auto it = std::find_if(blocks.begin(), blocks.end(), [&](const Block& b) { return b.group == s.group; });
      if (it == blocks.end()) it = blocks.insert(blocks.end(), Block{s.name, s.group, {}});
      it->vcpus.insert(it->vcpus.end(), s.vcpus.begin(), s.vcpus.end());
    } else {
      for (unsigned v : s.vcpus) blocks.push_back(Block{s.name, s.group, {v}});
    }
  }
  for (const Block& b : blocks) {
    o << b.name << ": (groupid=" << b.group << ", jobs=" << b.vcpus.size() << "): vcpu";
    for (size_t k = 0; k < b.vcpus.size(); ++k) o << (k ? "," : "") << b.vcpus[k];
    o << "\n";
    // A group's counts, latencies and depths over its jobs; its time, as
    // fio's group, that of its longest job.
    DirectionCounts counts;
    DirectionLatency read, write;
    models::IoDepthCounts depths;
    double sim_time_ns = 0;
    for (unsigned v : b.vcpus) {
      const std::string vcpu = "vcpu" + std::to_string(v) + ".";
      for (unsigned k = 0; k < 2; ++k) {
        counts.ios[k] += stat_or_zero(r.stats, vcpu + (k ? "write_ios" : "read_ios"));
        counts.bytes[k] += stat_or_zero(r.stats, vcpu + (k ? "write_bytes" : "read_bytes"));
      }
      const VcpuFigures& f = r.vcpus.at(v);
      read.merge(f.read);
      write.merge(f.write);
      depths.merge(f.depths);
      sim_time_ns = std::max(sim_time_ns, f.sim_time_ns);
    }
    direction_blocks(o, counts, sim_time_ns, read, write);
    io_depths(o, depths);
  }
}

}  // namespace nvmesim::platform::fio_text
