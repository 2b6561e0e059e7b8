#include "nvmesim/platform/report/fio_text.h"

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
        const double run_ms = f.sim_time_ns / 1e6, bw = f.sim_time_ns > 0 ? dir_bytes * 1e9 / f.sim_time_ns : 0;
        if (!any || run_ms < run_min) run_min = run_ms;
        if (!any || run_ms > run_max) run_max = run_ms;
        if (!any || bw < bw_min) bw_min = bw;
        if (!any || bw > bw_max) bw_max = bw;
        bytes += dir_bytes;
        any = true;
      }
      if (!any) continue;
      // fio: whole milliseconds, and the group's bandwidth is its bytes over
      // its longest job's runtime in them (the figures the line prints agree).
      run_min = std::ceil(run_min);
      run_max = std::ceil(run_max);
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
