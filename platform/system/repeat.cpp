#include "nvmesim/platform/system/repeat.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>
#include <nlohmann/json.hpp>

#include "nvmesim/platform/cli/interrupt.h"
#include "nvmesim/platform/config/device_backend.h"
#include "nvmesim/platform/config/params.h"
#include "nvmesim/platform/config/presets.h"
#include "nvmesim/platform/config/user_text.h"
#include "nvmesim/platform/fio/fio_job.h"
#include "nvmesim/platform/report/derived_figures.h"
#include "nvmesim/platform/report/json_out.h"
#include "nvmesim/platform/report/seed_interval.h"
#include "nvmesim/platform/system/run.h"

namespace nvmesim::platform {

namespace {

constexpr uint64_t kMaxSeed = 9223372036854775807ull;  // the seed parameter's range (models/guest/vcpu_params.h)

// A document's figures in document order: the derived figures of the run
// (docs/metrics.md) and the latency sections; NaN where the document has null.
using Figures = std::vector<std::pair<std::string, double>>;

bool is_interval_figure(const std::string& path) {
  static const std::set<std::string> run_figures = [] {
    std::set<std::string> s;
    for (const figures::Figure& f : figures::all())
      if (f.over == figures::Over::Run && f.in_json && f.format != figures::Format::Flag) s.insert(f.key);
    return s;
  }();
  for (const char* lat : {"lat_ns.", "slat_ns.", "clat_ns.", "driver_lat_ns."})
    if (path.rfind(lat, 0) == 0) return true;
  return run_figures.count(path) > 0;
}

void collect(const report::Json& v, const std::string& path, Figures& out) {
  if (v.is_object()) {
    for (const auto& [key, value] : v.items()) collect(value, path.empty() ? key : path + "." + key, out);
    return;
  }
  if ((v.is_number() || v.is_null()) && is_interval_figure(path))
    out.emplace_back(path, v.is_number() ? v.get<double>() : std::nan(""));
}

// The figures of one seed's document as the child wrote it: the intervals
// are computed from the very numbers the report shows per seed.
Figures document_figures(const std::string& json_text) {
  Figures f;
  collect(report::Json::parse(json_text), "", f);
  return f;
}

// One seed: its run (or the comparison's two), as the children returned them.
struct Seed {
  uint64_t seed = 0;
  RunSummary s[2]{};
  std::string json[2];
  std::map<std::string, double> values[2];
};

// The text report's figures (the comparison's rows), with their keys in the
// documents.
enum class Style { Count, Fixed3, Percent };
struct KeyFigure {
  const char *key, *label;
  Style style;
};
const KeyFigure kKeyFigures[] = {
    {"iops", "IOPS", Style::Count},
    {"lat_ns.mean", "latency mean (ns)", Style::Count},
    {"lat_ns.percentile.50.000000", "latency p50 (ns)", Style::Count},
    {"lat_ns.percentile.99.000000", "latency p99 (ns)", Style::Count},
    {"per_io.sq_mmio", "SQ doorbell exits per I/O", Style::Fixed3},
    {"per_io.cq_mmio", "CQ doorbell exits per I/O", Style::Fixed3},
    {"per_io.exits", "doorbell exits per I/O", Style::Fixed3},
    {"eventidx.sq_hit_rate", "SQ EventIdx hit rate", Style::Percent},
    {"eventidx.cq_hit_rate", "CQ EventIdx hit rate", Style::Percent},
};

// 259099.4 -> "259,099".
std::string with_commas(double v) {
  char b[64];
  std::snprintf(b, sizeof b, "%.0f", v);
  std::string digits = b, sign;
  if (!digits.empty() && digits[0] == '-') sign = "-", digits.erase(0, 1);
  for (size_t at = digits.size(); at > 3; at -= 3) digits.insert(at - 3, ",");
  return sign + digits;
}

std::string cell(double v, Style style) {
  if (std::isnan(v)) return "n/a";
  char b[64];
  switch (style) {
    case Style::Count: return with_commas(v);
    case Style::Fixed3: std::snprintf(b, sizeof b, "%.3f", v); break;
    case Style::Percent: std::snprintf(b, sizeof b, "%.1f%%", v * 100); break;
  }
  return b;
}

// A half-width that its figure's format would round to 0 gets two
// significant digits: a small spread is not shown as none.
std::string width_cell(double w, Style style) {
  const std::string c = cell(w, style);
  if (!(w > 0) || c.find_first_of("123456789") != std::string::npos) return c;
  const double x = style == Style::Percent ? w * 100 : w;
  const int decimals = std::min(15, 1 - int(std::floor(std::log10(x))));
  char b[64];
  std::snprintf(b, sizeof b, "%.*f%s", decimals, x, style == Style::Percent ? "%" : "");
  return b;
}

// "IOPS   259,099 ± 1,234 (95%, 5 seeds)  min 257,880  max 260,311".
std::string interval_line(const std::string& label, const report::SeedInterval& i, Style style) {
  char left[64];
  std::snprintf(left, sizeof left, "  %-28s ", label.c_str());
  std::string s = left;
  if (i.n == 0) return s + "n/a\n";
  s += cell(i.mean, style);
  if (i.n >= 2)
    s += " ± " + width_cell(i.half_width, style) + " (95%, " + std::to_string(i.n) + " seeds)  min " + cell(i.min, style) +
         "  max " + cell(i.max, style);
  else
    s += " (1 seed: no interval)";
  return s + "\n";
}

report::Json interval_json(const report::SeedInterval& i) {
  report::Json j;
  j["mean"] = report::fixed(i.mean, 6);
  j["half_width"] = report::fixed(i.half_width, 6);
  j["min"] = report::fixed(i.min, 6);
  j["max"] = report::fixed(i.max, 6);
  j["n"] = i.n;
  return j;
}

// The defined values of `key` over seed values (an undefined one, null in its
// document, is left out: n says how many there were).
std::vector<double> values_of(const std::vector<const Seed*>& seeds, int run, const std::string& key) {
  std::vector<double> v;
  for (const Seed* s : seeds) {
    const auto it = s->values[run].find(key);
    if (it != s->values[run].end() && !std::isnan(it->second)) v.push_back(it->second);
  }
  return v;
}

// spec / off per seed, where off is above 0 (the comparison's ratio column).
std::vector<double> ratios_of(const std::vector<const Seed*>& seeds, const std::string& key) {
  std::vector<double> v;
  for (const Seed* s : seeds) {
    const auto off = s->values[0].find(key), spec = s->values[1].find(key);
    if (off == s->values[0].end() || spec == s->values[1].end()) continue;
    if (off->second > 0 && spec->second >= 0) v.push_back(spec->second / off->second);
  }
  return v;
}

// The parameters the user set that the header does not show (the seed is
// the header's).
std::string other_settings(const Config& c, bool comparison) {
  // The backend shown is the device's (device_backend.h).
  static const char* const shown_in_header[] = {"rw", "bs", "iodepth", "numjobs", "number_ios",
                                                "hv.exit_mmio", "hv.cpu_ghz", "seed", "preset"};
  const std::string backend = backend_value_param(c, "backend");
  std::string out;
  for (const ParamSpec& spec : c.registry().all()) {
    if (!c.is_set(spec.name) || c.from_preset(spec.name) || (spec.name == "nvme.dbbuf" && !comparison)) continue;
    bool in_header = spec.name == backend;
    for (const char* h : shown_in_header) in_header = in_header || spec.name == h;
    if (!in_header) out += (out.empty() ? "" : " ") + spec.name + "=" + c.text(spec.name);
  }
  return out;
}

// The exit status a finished run asks for (run_one's rules), 0 when it is ok.
int run_failure(const RunSummary& s, bool fail_on_stall) {
  if (!s.ok) return 4;
  if (s.stalled && fail_on_stall) return 3;
  if (s.figure("io_errors") || s.figure("verify.errors")) return 4;
  return 0;
}

const char* run_outcome(const RunSummary& s) {
  return !s.ok                                                    ? "bringup_failed"
         : s.stalled                                              ? "stalled"
         : s.device_needs_reset                                   ? "device_needs_reset"
         : s.figure("io_errors") || s.figure("verify.errors") ? "io_errors"
                                                                  : "ok";
}

}  // namespace

std::string parse_repeat(const std::string& text, unsigned& n) {
  const std::string bad = "--repeat: " + quoted(text) + " is not an integer in " + std::to_string(kRepeatMin) +
                          ".." + std::to_string(kRepeatMax);
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  if (text.empty() || *end || text[0] == '-' || text[0] == '+' || text[0] == ' ' || errno == ERANGE ||
      v < kRepeatMin || v > kRepeatMax)
    return bad;
  n = unsigned(v);
  return "";
}

std::string repeat_problem(const Config& config, const RunOptions& options) {
  if (!options.vcd_file.empty() || !options.timeline_file.empty())
    return std::string("--repeat: a trace (") + (options.vcd_file.empty() ? "--timeline" : "--vcd") +
           ") follows one run; trace one seed without --repeat";
  if (options.fio && options.fio->logs)
    return "--repeat: fio's logs (write_lat_log, write_bw_log, write_iops_log) follow one run; log one seed "
           "without --repeat";
  if (options.output_format == "json+")
    return "--repeat: --output-format=json+ is fio's layout of one run; use --output-format=json";
  // Every job's seed goes up by one per repeat, as the run's.
  auto past_last = [&](const Config& c) { return uint64_t(c.integer("seed")) > kMaxSeed - (options.repeat - 1); };
  bool past = past_last(config);
  if (options.fio)
    for (const FioJob& job : options.fio->jobs) past = past || past_last(job.config);
  if (past)
    return "--repeat: " + std::to_string(options.repeat) + " seeds from seed=" + config.text("seed") +
           " pass the largest seed (" + std::to_string(kMaxSeed) + ")";
  return "";
}

RepeatOutcome run_repeat(const Config& base, const RunOptions& options, std::ostream& out) {
  const bool comparison = options.default_experiment;
  const char* const modes[2] = {"off", "spec"};
  const int runs = comparison ? 2 : 1;
  const uint64_t seed0 = uint64_t(base.integer("seed"));
  std::vector<Seed> finished;
  int sig = 0;          // the signal that cut a run short or stopped the repeat
  std::string failure;  // the failed seed's headline
  int failed_code = 0;
  const char* failed_outcome = "";
  for (unsigned k = 0; k < options.repeat && !interrupt::received(); ++k) {
    Seed s;
    s.seed = seed0 + k;
    bool whole = true;
    for (int m = 0; m < runs && whole; ++m) {
      if (interrupt::received()) {
        whole = false;
        break;
      }
      Config c = base;
      c.set("seed", std::to_string(s.seed));
      if (comparison) c.set("nvme.dbbuf", modes[m]);
      // A job file's sections each have their seed: each goes up with the run's.
      std::shared_ptr<FioJobs> jobs;
      if (options.fio) {
        jobs = std::make_shared<FioJobs>(*options.fio);
        jobs->config = c;
        for (FioJob& job : jobs->jobs) job.config.set("seed", std::to_string(uint64_t(job.config.integer("seed")) + k));
      }
      set_progress_label("seed=" + std::to_string(s.seed) + (comparison ? std::string(" dbbuf=") + modes[m] : ""));
      ChildRun request;
      request.host_stats = options.host_stats;
      request.fio = jobs.get();
      request.json_level = comparison ? 3 : 2;  // at "runs"."off"[k], or "runs"[k]
      std::vector<std::string> no_jobs;
      std::string error;
      const int child = run_in_child(c, request, s.s[m], s.json[m], no_jobs, error);
      if (child != 0) {
        if (interrupt::received()) {  // the child died of it before it could answer
          whole = false;
          break;
        }
        if (child == 2) return {2, false};  // refused; the child printed the one-line error
        std::cerr << "nvmesim: error: --repeat: seed " << s.seed << ": " << error << "\n";
        return {1, false};
      }
      // A signal to the child alone cut its run short: as if this process had it.
      if (s.s[m].interrupted) {
        sig = s.s[m].interrupt_signal ? s.s[m].interrupt_signal : SIGTERM;
        whole = false;
        break;
      }
      if (const int code = run_failure(s.s[m], options.fail_on_stall)) {
        failed_code = code;
        failed_outcome = run_outcome(s.s[m]);
        failure = "seed=" + std::to_string(s.seed) + (comparison ? std::string(" dbbuf=") + modes[m] : "") + ": " +
                  s.s[m].headline + "; --repeat stopped at this seed";
        whole = false;
        break;
      }
      for (const auto& [key, value] : document_figures(s.json[m])) s.values[m][key] = value;
    }
    if (!whole) break;
    finished.push_back(std::move(s));
  }
  set_progress_label("");
  if (!sig && !failed_code && finished.size() < options.repeat) sig = interrupt::received() ? interrupt::received() : SIGTERM;
  const int code = sig ? 128 + sig : failed_code;

  std::vector<const Seed*> seeds;
  for (const Seed& s : finished) seeds.push_back(&s);
  // The key list: the first finished seed's documents (every seed has the same layout).
  std::vector<std::string> keys[2];
  if (!finished.empty())
    for (int m = 0; m < runs; ++m)
      for (const auto& [key, value] : document_figures(finished.front().json[m])) keys[m].push_back(key);

  // The first lines: what stopped the repeat, and what went wrong in a seed.
  std::string headline;
  if (sig)
    headline = std::string("INTERRUPTED by ") + interrupt::signal_name(sig) + ": " + std::to_string(finished.size()) +
               " of " + std::to_string(options.repeat) +
               " seeds finished; the intervals cover those (a seed cut short is left out)";
  if (!failure.empty()) headline += (headline.empty() ? "" : "\n") + failure;
  for (const Seed& s : finished)
    for (int m = 0; m < runs; ++m)
      if (s.s[m].headline[0])
        headline += (headline.empty() ? "" : "\n") + std::string("seed=") + std::to_string(s.seed) +
                    (comparison ? std::string(" dbbuf=") + modes[m] : "") + ": " + s.s[m].headline;

  if (options.output_format != "normal") {
    const char* outcome = "ok";
    for (const Seed& s : finished)
      for (int m = 0; m < runs; ++m)
        if (std::string(run_outcome(s.s[m])) != "ok" && std::string(outcome) == "ok") outcome = run_outcome(s.s[m]);
    if (failed_code) outcome = failed_outcome;
    if (sig) outcome = "interrupted";
    report::Json doc;
    doc["experiment"] = comparison ? "default: doorbell buffer off vs spec, over seeds" : "one run, over seeds";
    doc["outcome"] = outcome;
    doc["headline"] = headline;
    if (sig) doc["interrupted"] = interrupt::signal_name(sig);
    doc["repeat"] = options.repeat;
    report::Json seed_list = report::Json::array();
    for (const Seed& s : finished) seed_list.push_back(s.seed);
    doc["seeds"] = seed_list;
    // Each seed's document as its child process wrote it.
    auto documents = [&](int m) {
      report::Json a = report::Json::array();
      for (const Seed& s : finished) a.push_back(report::raw(s.json[m]));
      return a;
    };
    auto intervals = [&](int m) {
      report::Json j = report::Json::object();
      for (const std::string& key : keys[m]) j[key] = interval_json(report::seed_interval(values_of(seeds, m, key)));
      return j;
    };
    if (comparison) {
      doc["runs"] = {{"off", documents(0)}, {"spec", documents(1)}};
      report::Json& in = doc["intervals"] = report::Json::object();
      in["off"] = intervals(0);
      in["spec"] = intervals(1);
      report::Json& ratio = in["ratio_spec_to_off"] = report::Json::object();
      for (const KeyFigure& f : kKeyFigures) ratio[f.key] = interval_json(report::seed_interval(ratios_of(seeds, f.key)));
    } else {
      doc["runs"] = documents(0);
      doc["intervals"] = intervals(0);
    }
    out << report::dump(doc) << "\n";
    return {code, true};
  }

  if (!headline.empty()) out << headline << "\n";
  const uint64_t last = seed0 + options.repeat - 1;
  out << (comparison ? "nvmesim default experiment" : "nvmesim one run") << " over " << options.repeat
      << " seeds (seed=" << seed0 << ".." << last << "): rw=" << base.text("rw") << " bs=" << base.text("bs")
      << " iodepth=" << base.text("iodepth") << " numjobs=" << base.text("numjobs")
      << " backend=" << base.text(backend_value_param(base, "backend")) << " number_ios=" << base.text("number_ios")
      << (comparison ? "" : " nvme.dbbuf=" + base.text("nvme.dbbuf")) << ", MMIO doorbell exit "
      << base.text("hv.exit_mmio") << " at " << base.text("hv.cpu_ghz") << " GHz\n";
  out << model_line(base);  // the presets the run is built on
  if (const std::string more = other_settings(base, comparison); !more.empty()) out << "also set: " << more << "\n";
  out << "mean ± half-width of the 95% Student-t interval over all seed values, min, max\n";
  auto block = [&](const std::string& title, auto values, bool ratio) {
    out << "\n";
    if (!title.empty()) out << title << "\n";
    for (const KeyFigure& f : kKeyFigures)
      out << interval_line(f.label, report::seed_interval(values(f.key)), ratio ? Style::Fixed3 : f.style);
  };
  if (comparison) {
    block("dbbuf=off:", [&](const char* key) { return values_of(seeds, 0, key); }, false);
    block("dbbuf=spec:", [&](const char* key) { return values_of(seeds, 1, key); }, false);
    block("spec/off, per seed:", [&](const char* key) { return ratios_of(seeds, key); }, true);
  } else {
    block("", [&](const char* key) { return values_of(seeds, 0, key); }, false);
  }
  for (const Seed& s : finished)
    for (int m = 0; m < runs; ++m)
      if (s.s[m].stalled)
        out << "seed=" << s.seed << (comparison ? std::string(" dbbuf=") + modes[m] : "")
            << ": the run stalled (see --output-format=json)\n";
  out << "\nEach seed's figures, and every figure's interval: --output-format=json.\n";
  return {code, true};
}

}  // namespace nvmesim::platform
