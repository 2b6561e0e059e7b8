// fio's workload options that are more than one number, parsed as fio 3.33
// parses them (options.c): bssplit, bsrange, random_distribution, and the
// per-direction values of rate and rate_iops ("read,write"). Plain C++,
// header-only, so the configuration layer (no SystemC) checks the text with
// the same code the job's generator (models/guest/workload.*) runs.
//
// Each parse_* returns "" or what is wrong with the text (one phrase).
#pragma once

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

namespace nvmesim::models::fio_opt {

// fio's size suffixes (kb_base=1024): k, m, g, t (also KiB, kb, ...); a bare number is bytes.
inline bool parse_bytes(const std::string& text, uint64_t& out) {
  std::string s;
  for (char c : text)
    if (!std::isspace(static_cast<unsigned char>(c))) s += char(std::tolower(static_cast<unsigned char>(c)));
  if (s.empty() || !std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  errno = 0;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  if (errno) return false;
  std::string unit(end);
  if (!unit.empty() && unit.back() == 'b') unit.pop_back();  // 4kb, 4kib
  if (!unit.empty() && unit.back() == 'i') unit.pop_back();
  uint64_t mult = 1;
  if (unit.empty()) mult = 1;
  else if (unit == "k") mult = 1ull << 10;
  else if (unit == "m") mult = 1ull << 20;
  else if (unit == "g") mult = 1ull << 30;
  else if (unit == "t") mult = 1ull << 40;
  else return false;
  if (v > UINT64_MAX / mult) return false;
  out = v * mult;
  return true;
}

inline std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t at = 0;
  for (;;) {
    const size_t e = s.find(sep, at);
    out.push_back(s.substr(at, e == std::string::npos ? std::string::npos : e - at));
    if (e == std::string::npos) return out;
    at = e + 1;
  }
}

inline std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

// ---- bssplit: "bs/perc:bs/perc..." (a ',' separates read's list from
// write's; one list applies to both). Entries without a percentage, or with
// 0% (fio's split_parse_ddir), share what the others leave equally
// (bssplit_ddir); fio then sorts each list by
// percentage, the order its selection (io_u.c get_next_buflen) walks.
struct BsSplit {
  uint64_t bs;
  uint32_t perc;
};
using BsSplitList = std::vector<BsSplit>;

inline std::string parse_bssplit_one(const std::string& text, BsSplitList& out) {
  out.clear();
  unsigned missing = 0, sum = 0;
  std::vector<int> percs;
  for (const std::string& item : split(text, ':')) {
    const std::string e = trim(item);
    if (e.empty()) continue;
    const size_t slash = e.find('/');
    uint64_t bs = 0;
    if (!parse_bytes(e.substr(0, slash), bs) || bs == 0) return "'" + e + "' has no block size";
    int perc = -1;
    if (slash != std::string::npos) {
      const std::string p = trim(e.substr(slash + 1));
      char* end = nullptr;
      const long v = std::strtol(p.c_str(), &end, 10);
      if (p.empty() || *end || v < 0 || v > 100) return "'" + e + "': the percentage is not 0..100";
      perc = int(v);
      sum += unsigned(v);
    }
    // fio (options.c split_parse_ddir) reads a 0% share as unspecified: it
    // gets its part of what the other entries leave.
    if (perc <= 0) {
      perc = -1;
      ++missing;
    }
    out.push_back({bs, 0});
    percs.push_back(perc);
  }
  if (out.empty()) return "no block size";
  if (out.size() > 64) return "more than 64 block sizes (fio's BSSPLIT_MAX)";
  if (sum > 100) return "percentages add to more than 100";
  const unsigned share = missing == 1 && out.size() == 1 ? 100 : missing ? (100 - sum) / missing : 0;
  for (size_t i = 0; i < out.size(); ++i) out[i].perc = percs[i] < 0 ? share : unsigned(percs[i]);
  std::stable_sort(out.begin(), out.end(), [](const BsSplit& a, const BsSplit& b) { return a.perc < b.perc; });
  return "";
}

// dirs[0] read, dirs[1] write.
inline std::string parse_bssplit(const std::string& text, BsSplitList dirs[2]) {
  dirs[0].clear();
  dirs[1].clear();
  if (trim(text).empty()) return "";
  const std::vector<std::string> parts = split(text, ',');
  if (parts.size() > 3) return "more than read,write,trim lists";
  for (size_t d = 0; d < 2 && d < parts.size(); ++d)
    if (!trim(parts[d]).empty())
      if (std::string e = parse_bssplit_one(parts[d], dirs[d]); !e.empty()) return e;
  if (parts.size() == 1) dirs[1] = dirs[0];
  return "";
}

// ---- bsrange: "min-max" (a ',' separates read's from write's).
struct BsRange {
  uint64_t min = 0, max = 0;  // 0: not set
};
inline std::string parse_bsrange(const std::string& text, BsRange dirs[2]) {
  dirs[0] = dirs[1] = BsRange{};
  if (trim(text).empty()) return "";
  const std::vector<std::string> parts = split(text, ',');
  if (parts.size() > 3) return "more than read,write,trim ranges";
  for (size_t d = 0; d < 2 && d < parts.size(); ++d) {
    const std::string r = trim(parts[d]);
    if (r.empty()) continue;
    const size_t dash = r.find('-');
    if (dash == std::string::npos) return "'" + r + "' is not min-max";
    uint64_t lo = 0, hi = 0;
    if (!parse_bytes(r.substr(0, dash), lo) || !parse_bytes(r.substr(dash + 1), hi) || !lo || !hi)
      return "'" + r + "' is not min-max (sizes)";
    if (lo > hi) std::swap(lo, hi);  // fio takes them either way round
    dirs[d] = {lo, hi};
  }
  if (parts.size() == 1) dirs[1] = dirs[0];
  return "";
}

// ---- random_distribution: random | zipf[:theta] | pareto[:h] |
// normal[:dev] (alias gauss), each with an optional ":center" (0..1);
// zoned:A/S:A/S... (options.c parse_zoned_distribution: A percent of the
// accesses land in the next S percent of the region; both directions).
enum class Distribution { Random, Zipf, Pareto, Normal, Zoned };
struct ZoneSplit {
  uint32_t access_perc, size_perc;
};
struct DistributionSpec {
  Distribution kind = Distribution::Random;
  double value = 0;     // theta, h, or the deviation in percent
  double center = -1;   // -1: none (fio's rand_off from the generator)
  std::vector<ZoneSplit> zones;  // zoned: in region order
};
// zoned's "A/S:A/S...": the access percentages add up to 100 and the size
// percentages to at most 100, as options.c requires.
inline std::string parse_zones(const std::vector<std::string>& parts, std::vector<ZoneSplit>& zones) {
  if (parts.size() < 2) return "'zoned' needs access/size percentages (zoned:50/5:50/95)";
  uint32_t access = 0, size = 0;
  for (size_t i = 1; i < parts.size(); ++i) {
    const std::string& z = parts[i];
    if (z.find(',') != std::string::npos) return "per-direction zones (',') are not modelled";
    const size_t slash = z.find('/');
    char* end = nullptr;
    const unsigned long a = std::strtoul(z.c_str(), &end, 10);
    if (slash == std::string::npos || end != z.c_str() + slash || slash == 0) return "'" + z + "' is not access/size";
    const std::string s = z.substr(slash + 1);
    const unsigned long b = std::strtoul(s.c_str(), &end, 10);
    if (s.empty() || *end || a > 100 || b > 100 || !b) return "'" + z + "' is not access/size percentages";
    zones.push_back({uint32_t(a), uint32_t(b)});
    access += uint32_t(a);
    size += uint32_t(b);
  }
  if (access != 100 || size > 100)
    return "the access percentages must add up to 100 and the sizes to at most 100 (got " +
           std::to_string(access) + " and " + std::to_string(size) + ")";
  return "";
}
inline std::string parse_distribution(const std::string& text, DistributionSpec& out) {
  out = DistributionSpec{};
  const std::string t = trim(text);
  const std::vector<std::string> parts = split(t, ':');
  const std::string name = parts[0];
  if (name == "random" || name.empty()) {
    if (parts.size() > 1) return "'random' takes no value";
    return "";
  }
  if (name == "zipf") out.kind = Distribution::Zipf, out.value = 1.1;        // FIO_DEF_ZIPF
  else if (name == "pareto") out.kind = Distribution::Pareto, out.value = 0.2;  // FIO_DEF_PARETO
  else if (name == "normal" || name == "gauss") out.kind = Distribution::Normal, out.value = 0;
  else if (name == "zoned") return out.kind = Distribution::Zoned, parse_zones(parts, out.zones);
  else if (name == "zoned_abs") return "'" + name + "' is not modelled (zoned is)";
  else return "'" + name + "' is not random, zipf, pareto, normal or zoned";
  if (parts.size() > 3) return "too many ':' values";
  auto number = [](const std::string& s, double& v) {
    char* end = nullptr;
    v = std::strtod(s.c_str(), &end);
    return !s.empty() && !*end && std::isfinite(v);
  };
  if (parts.size() > 1 && !number(parts[1], out.value)) return "'" + parts[1] + "' is not a number";
  if (parts.size() > 2 && (!number(parts[2], out.center) || out.center < 0 || out.center > 1))
    return "center '" + parts[2] + "' is not 0..1";
  if (out.kind == Distribution::Zipf && (out.value == 1.0 || out.value <= 0))
    return "zipf theta must be > 0 and not 1.0";
  if (out.kind == Distribution::Pareto && (out.value <= 0 || out.value >= 1))
    return "pareto h must be in (0, 1)";
  if (out.kind == Distribution::Normal && (out.value < 0 || out.value >= 100))
    return "normal deviation must be in [0, 100)";
  return "";
}

// ---- rate / rate_iops: "R", "R,W", ",W" (one value applies to both).
// bytes: rate's sizes (k, m, g) per second; else a count per second.
inline std::string parse_rate(const std::string& text, bool bytes, uint64_t out[2]) {
  out[0] = out[1] = 0;
  if (trim(text).empty()) return "";
  const std::vector<std::string> parts = split(text, ',');
  if (parts.size() > 3) return "more than read,write,trim values";
  for (size_t d = 0; d < 2 && d < parts.size(); ++d) {
    const std::string v = trim(parts[d]);
    if (v.empty()) continue;
    if (!parse_bytes(v, out[d]) || (!bytes && v.find_first_not_of("0123456789kKmMgG") != std::string::npos))
      return "'" + v + "' is not " + std::string(bytes ? "a size per second" : "a count per second");
  }
  if (parts.size() == 1) out[1] = out[0];
  return "";
}

// The checks the configuration runs on the text parameters.
inline std::string check_bssplit(const std::string& t) { BsSplitList d[2]; return parse_bssplit(t, d); }
inline std::string check_bsrange(const std::string& t) { BsRange d[2]; return parse_bsrange(t, d); }
inline std::string check_distribution(const std::string& t) { DistributionSpec d; return parse_distribution(t, d); }
inline std::string check_rate(const std::string& t) { uint64_t d[2]; return parse_rate(t, true, d); }
inline std::string check_rate_iops(const std::string& t) { uint64_t d[2]; return parse_rate(t, false, d); }

}  // namespace nvmesim::models::fio_opt
