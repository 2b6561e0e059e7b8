// nvmesim scenario --list | NAME [--output-format=normal|json] [--number_ios=N]
//                                [--set PARAM=VALUE]... [--calibrate=PARAM]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <sstream>
#include <nlohmann/json.hpp>

#include "nvmesim/platform/cli/options.h"
#include "nvmesim/platform/cli/interrupt.h"
#include "nvmesim/platform/report/json_out.h"
#include "nvmesim/platform/config/param_requires.h"
#include "nvmesim/platform/config/params.h"
#include "nvmesim/platform/config/system_params.h"
#include "nvmesim/platform/system/run.h"
#include "nvmesim/platform/scenario/scenarios.h"
#include "nvmesim/platform/config/user_text.h"

namespace nvmesim::platform {

namespace {

struct Figure {
  std::string label;
  double reported, simulated, ratio_reported, ratio_simulated, error;
  bool stalled;  // the run stalled (the watchdog fired): simulated counts as 0
};

double metric(const Scenario& s, const RunSummary& r) {
  const double bw_bytes = r.figure("bw_bytes");
  return s.metric == "iops" ? r.figure("iops") : s.metric == "mib_s" ? bw_bytes / 1048576.0 : bw_bytes / 1e6;
}

using Settings = std::vector<std::pair<std::string, std::string>>;

// Layers, later wins: the scenario's common settings and the runner's
// watchdog, the user's --set what-ifs, the run's own settings (so the runs
// still differ as defined), the calibrated value, then --number_ios.
Config layered(const Scenario& s, const Settings& what_if, const Settings& extra,
               const std::string& calibrated_value, uint64_t number_ios) {
  Config c;
  for (const auto& [k, v] : s.common) c.set(k, v);
  c.set("sim.stall_timeout", "1s");  // a slow calibration probe is not a stall
  for (const auto& [k, v] : what_if) c.set(k, v);
  for (const auto& [k, v] : extra) c.set(k, v);
  c.set(s.calibrated, calibrated_value);
  c.set("number_ios", std::to_string(number_ios));
  // All the model would refuse, found before the calibration runs.
  c.validate_all();
  check_param_requirements(c);
  check_system_params(load_system_params(c, {}), c);
  return c;
}

bool simulate(const Scenario& s, const Settings& what_if, const Settings& extra,
              const std::string& calibrated_value, uint64_t number_ios, double& value,
              std::string& error, bool* stalled = nullptr) {
  Config c;
  try {
    c = layered(s, what_if, extra, calibrated_value, number_ios);
  } catch (const ConfigError& e) {
    error = std::string("scenario ") + s.name + ": " + e.what();
    return false;
  }
  RunSummary r{};
  std::string json;
  if (!run_in_child(c, false, r, json, error) || interrupt::received()) {
    if (interrupt::received()) error = std::string("interrupted by ") + interrupt::signal_name(interrupt::received());
    return false;
  }
  if (!r.ok) {
    error = "scenario " + s.name + ": the run failed bring-up";
    return false;
  }
  // A run that stalls (a calibration probe far too slow) counts as no throughput.
  value = r.stalled ? 0.0 : metric(s, r);
  if (stalled) *stalled = r.stalled;
  return true;
}

// The metric falls as the calibrated cost rises: bisect on a log scale.
// Where the metric jumps (a convoy that forms or breaks as the cost moves
// by a few ns) the bisection can end beside the jump, far from the target:
// when it misses by more than the 5% the report flags, the probe that came
// closest is taken instead.
bool calibrate(const Scenario& s, const Settings& what_if, uint64_t number_ios, double& value_ns,
               double& achieved, bool& stalled, std::string& error) {
  double lo = s.calibrate_lo_ns, hi = s.calibrate_hi_ns;
  const double target = s.runs.front().reported;
  double best_ns = 0, best = 0;
  bool best_stalled = false;
  for (int i = 0; i < 14; ++i) {
    const double mid = std::sqrt(lo * hi);
    double m = 0;
    bool probe_stalled = false;
    if (!simulate(s, what_if, s.runs.front().settings, time_value_text(mid), number_ios, m, error, &probe_stalled))
      return false;
    if (i == 0 || std::abs(m - target) < std::abs(best - target)) {
      best_ns = mid;
      best = m;
      best_stalled = probe_stalled;
    }
    if (m > target)
      lo = mid;
    else
      hi = mid;
  }
  value_ns = std::sqrt(lo * hi);
  if (!simulate(s, what_if, s.runs.front().settings, time_value_text(value_ns), number_ios, achieved, error,
                &stalled))
    return false;
  if (std::abs(achieved - target) > 0.05 * target && std::abs(best - target) < std::abs(achieved - target)) {
    value_ns = best_ns;
    achieved = best;
    stalled = best_stalled;
  }
  return true;
}

std::string num(double v, int d) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", d, v);
  return b;
}

// After the report: 0, or 128 + the signal that cut the runs short.
std::string interrupted_line(size_t simulated, size_t runs) {
  return std::string("INTERRUPTED by ") + interrupt::signal_name(interrupt::received()) + ": " +
         std::to_string(simulated) + " of " + std::to_string(runs) + " runs simulated";
}

int finish_interrupted(size_t simulated, size_t runs, std::ostream& err) {
  if (!interrupt::received()) return 0;
  err << "nvmesim scenario: " << interrupted_line(simulated, runs) << "\n";
  return interrupt::exit_code();
}

}  // namespace

int run_scenario_command(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  std::string name, format = "normal";
  uint64_t number_ios = 0;
  bool list = false;
  Settings what_if;
  std::string calibrate_param;
  namespace po = cli::po;
  po::options_description desc;
  desc.add_options()("help,h", "")("list", "")("output-format", po::value<std::string>(), "")(
      "number_ios", po::value<std::string>(), "")("calibrate", po::value<std::string>(), "")(
      "set", po::value<std::string>(), "")("name", po::value<std::string>(), "");
  cli::ParseRules rules;
  rules.positional = "name";
  std::vector<po::option> options;
  try {
    options = cli::parse_options(argc, argv, desc, rules);
  } catch (const cli::UsageError& e) {
    err << "nvmesim scenario: error: " << e.what() << "\n";
    return 2;
  }
  for (const po::option& o : options) {
    const std::string& key = o.string_key;
    const std::string value = cli::value_of(o);
    if (key == "list") {
      list = true;
    } else if (key == "help") {
      out << "Usage: nvmesim scenario --list\n"
             "       nvmesim scenario NAME [--output-format=normal|json] [--number_ios=N]\n"
             "                             [--set PARAM=VALUE]... [--calibrate=PARAM]\n"
             "Rebuilds a published experiment: calibrates one cost on the baseline's\n"
             "reported figure, predicts the others, and prints reported and simulated figures\n"
             "with their improvement ratios and the ratios' relative error.\n"
             "--set changes a parameter in every run of the scenario (a what-if: the\n"
             "calibration is redone with it); the runs' own settings still apply on top.\n"
             "--calibrate fits another time parameter on the baseline instead of the\n"
             "scenario's own choice: bisection within its range (at most 10 ns..10 ms),\n"
             "so the baseline's figure must fall as the parameter rises; a fit that misses\n"
             "the baseline by more than 5% is flagged.\n"
             "--number_ios (default 20000) is per job.\n"
             "Exit status: 0 done, 1 a run failed, 2 a bad option, 128+N interrupted by\n"
             "signal N (130 SIGINT, 143 SIGTERM, 129 SIGHUP): the runs simulated so far,\n"
             "then INTERRUPTED.\n";
      return 0;
    } else if (key == "output-format") {
      format = value;
      if (format != "normal" && format != "json") {
        err << "nvmesim scenario: error: --output-format: " << platform::quoted(format)
            << " is not one of normal, json\n";
        return 2;
      }
    } else if (key == "number_ios") {
      try {
        number_ios = std::stoull(value);
      } catch (...) {
        number_ios = 0;
      }
      if (number_ios < 100 || number_ios > 100000000) {
        err << "nvmesim scenario: error: --number_ios: " << platform::quoted(value)
            << " is out of range (100..100000000)\n";
        return 2;
      }
    } else if (key == "calibrate") {
      calibrate_param = value;
      if (calibrate_param.empty()) {
        err << "nvmesim scenario: error: --calibrate: needs a time parameter (see --list-params)\n";
        return 2;
      }
    } else if (key == "set") {
      const std::string& kv = value;
      const auto eq = kv.find('=');
      if (eq == std::string::npos || eq == 0) {
        err << "nvmesim scenario: error: --set: " << platform::quoted(kv) << " is not PARAM=VALUE\n";
        return 2;
      }
      const std::string k = kv.substr(0, eq), v = kv.substr(eq + 1);
      if (k == "number_ios") {
        err << "nvmesim scenario: error: --set: number_ios is set with --number_ios\n";
        return 2;
      }
      // A repeated key: the last one wins, as on nvmesim's command line.
      const auto same = std::find_if(what_if.begin(), what_if.end(),
                                     [&](const auto& kv2) { return kv2.first == k; });
      if (same != what_if.end()) what_if.erase(same);
      what_if.emplace_back(k, v);
    } else if (key == "name") {
      if (!name.empty()) {
        err << "nvmesim scenario: error: unexpected argument " << platform::quoted(value) << " (see --help)\n";
        return 2;
      }
      name = value;
    }
  }
  if (list) {
    for (const Scenario& s : scenarios()) out << s.name << ": " << s.title << "\n";
    return 0;
  }
  const Scenario* sc = nullptr;
  std::string names;
  for (const Scenario& s : scenarios()) {
    if (s.name == name) sc = &s;
    names += (names.empty() ? "" : ", ") + s.name;
  }
  if (!sc) {
    err << "nvmesim scenario: error: " << (name.empty() ? std::string("no scenario named")
                                                        : platform::quoted(name) + " is not a scenario")
        << " (one of " << names << "; see --list)\n";
    return 2;
  }
  Scenario chosen = *sc;
  if (!calibrate_param.empty()) {
    const ParamSpec* spec = ParamRegistry::builtin().find(calibrate_param);
    if (!spec || spec->kind != ParamKind::Time) {
      err << "nvmesim scenario: error: --calibrate: " << platform::quoted(calibrate_param)
          << " is not a time parameter (see --list-params)\n";
      return 2;
    }
    chosen.calibrated = calibrate_param;
    chosen.calibrate_lo_ns = std::max(10.0, spec->min);
    chosen.calibrate_hi_ns = std::min(1e7, spec->max);
    chosen.calibration_note = "chosen with --calibrate, instead of " + sc->calibrated +
                              ", which keeps its default";
  }
  sc = &chosen;
  if (!number_ios) number_ios = 20000;
  for (const auto& [k, v] : what_if) {
    if (k == sc->calibrated) {
      err << "nvmesim scenario: error: --set: " << k << " is the parameter scenario " << sc->name
          << " calibrates; it cannot be set\n";
      return 2;
    }
  }
  // The what-ifs are checked together, in the scenario's own context (its
  // clock for cycles, its sizes), with every run's settings on top.
  for (const ScenarioRun& run : sc->runs) {
    try {
      layered(*sc, what_if, run.settings, time_value_text(sc->calibrate_lo_ns), number_ios);
    } catch (const ConfigError& e) {
      err << "nvmesim scenario: error: --set: " << e.what() << "\n";
      return 2;
    }
  }

  double calibrated_ns = 0, baseline = 0;
  bool baseline_stalled = false;
  std::string error;
  if (!calibrate(*sc, what_if, number_ios, calibrated_ns, baseline, baseline_stalled, error)) {
    if (const int sig = interrupt::received()) {
      // Nothing is fitted yet, so no figure can be stated: say so.
      const std::string line = std::string("INTERRUPTED by ") + interrupt::signal_name(sig) +
                               " during the calibration of " + sc->calibrated + ": no run simulated";
      if (format == "json") {
        report::Json doc;
        doc["scenario"] = sc->name;
        doc["interrupted"] = interrupt::signal_name(sig);
        doc["during_calibration"] = true;
        doc["figures"] = report::Json::array();
        out << report::dump(doc) << "\n";
      } else {
        out << "scenario " << sc->name << ": " << sc->title << "\n  " << line << "\n";
      }
      err << "nvmesim scenario: " << line << "\n";
      return interrupt::exit_code();
    }
    err << "nvmesim scenario: error: " << error << "\n";
    return 1;
  }
  if (baseline_stalled || baseline <= 0) {
    err << "nvmesim scenario: error: scenario " << sc->name << ": the baseline run stalls at "
        << sc->calibrated << " = " << time_value_text(calibrated_ns)
        << ", so there is no ratio to predict (run it alone to see the watchdog's report)\n";
    return 1;
  }
  const double target = sc->runs.front().reported;
  const bool converged = std::abs(baseline - target) <= 0.05 * target;
  std::vector<Figure> figures;
  for (size_t i = 0; i < sc->runs.size(); ++i) {
    const ScenarioRun& run = sc->runs[i];
    double m = baseline;
    bool stalled = false;
    if (i && !simulate(*sc, what_if, run.settings, time_value_text(calibrated_ns), number_ios, m, error,
                       &stalled)) {
      if (interrupt::received()) break;  // the runs so far are reported, marked interrupted
      err << "nvmesim scenario: error: " << error << "\n";
      return 1;
    }
    Figure f;
    f.label = run.label;
    f.reported = run.reported;
    f.simulated = m;
    f.ratio_reported = run.reported / sc->runs.front().reported;
    f.ratio_simulated = m / baseline;
    f.error = (f.ratio_simulated - f.ratio_reported) / f.ratio_reported;
    f.stalled = stalled;
    figures.push_back(f);
  }

  if (format == "json") {
    using report::Json;
    auto number = [](double v, int decimals) { return report::raw(num(v, decimals)); };
    Json doc;
    doc["scenario"] = sc->name;
    doc["title"] = sc->title;
    doc["metric"] = sc->metric;
    doc["calibration"] = {{"parameter", sc->calibrated},
                          {"value_ns", number(calibrated_ns, 3)},
                          {"baseline_reported", number(sc->runs.front().reported, 3)},
                          {"baseline_simulated", number(baseline, 3)},
                          {"converged", converged},
                          {"note", sc->calibration_note}};
    Json& what_if_json = doc["what_if"] = Json::object();
    for (const auto& [k, v] : what_if) what_if_json[k] = v;
    Json& figures_json = doc["figures"] = Json::array();
    for (const Figure& f : figures)
      figures_json.push_back({{"label", f.label},
                              {"reported", number(f.reported, 3)},
                              {"simulated", number(f.simulated, 3)},
                              {"ratio_reported", number(f.ratio_reported, 6)},
                              {"ratio_simulated", number(f.ratio_simulated, 6)},
                              {"error", number(f.error, 6)},
                              {"stalled", f.stalled}});
    for (size_t i = 1; i < figures.size(); ++i)
      if (!sc->runs[i].gap.empty()) {
        figures_json[i]["in_band"] = !figures[i].stalled && std::abs(figures[i].error) <= 0.25;
        figures_json[i]["gap"] = sc->runs[i].gap;
      }
    if (const int sig = interrupt::received()) {
      doc["interrupted"] = interrupt::signal_name(sig);
      doc["during_calibration"] = false;
    }
    out << report::dump(doc) << "\n";
    return finish_interrupted(figures.size(), sc->runs.size(), err);
  }
  out << "scenario " << sc->name << ": " << sc->title << "\n  source: " << sc->source << "\n";
  for (const auto& [k, why] : sc->cost_sources) out << "  " << k << ": " << why << "\n";
  for (const auto& [k, v] : what_if) out << "  what-if (--set): " << k << "=" << v << "\n";
  if (!converged)
    out << "  warning: the calibration reached " << num(baseline, 1) << ", not the reported "
        << num(sc->runs.front().reported, 1) << " (the baseline may not fall as " << sc->calibrated
        << " rises, or its range is too narrow)\n";
  out << "  calibrated on the baseline: " << sc->calibrated << " = " << num(calibrated_ns, 1)
      << " ns (" << sc->calibration_note << ")\n\n";
  char line[256];
  const bool mib = sc->metric == "mib_s";
  std::snprintf(line, sizeof line, "  %-34s %12s %12s %9s %9s %8s\n", "run",
                sc->metric == "iops" ? "reported" : mib ? "rep. MiB/s" : "rep. MB/s",
                sc->metric == "iops" ? "simulated" : mib ? "sim. MiB/s" : "sim. MB/s", "ratio rep", "ratio sim",
                "error");
  out << line;
  for (const Figure& f : figures) {
    char simulated[32];
    std::snprintf(simulated, sizeof simulated, f.stalled ? "stalled" : "%.0f", f.simulated);
    std::snprintf(line, sizeof line, "  %-34s %12.0f %12s %9.2f %9.2f %7.1f%%\n",
                  f.label.c_str(), f.reported, simulated, f.ratio_reported, f.ratio_simulated,
                  100 * f.error);
    out << line;
  }
  out << "  (error: relative error of the simulated improvement ratio; the band is +-25%)\n";
  for (size_t i = 1; i < figures.size(); ++i) {
    const std::string& gap = sc->runs[i].gap;
    if (gap.empty()) continue;
    const Figure& f = figures[i];
    if (!f.stalled && std::abs(f.error) <= 0.25)
      out << "  " << f.label << ": within +-25%; " << gap << "\n";
    else
      out << "  " << f.label << ": outside +-25% (" << (f.stalled ? std::string("stalled") : num(100 * f.error, 1) + "%")
          << "): " << gap << "\n";
  }
  if (interrupt::received()) out << "  " << interrupted_line(figures.size(), sc->runs.size()) << "\n";
  return finish_interrupted(figures.size(), sc->runs.size(), err);
}

}  // namespace nvmesim::platform
