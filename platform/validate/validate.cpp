#include "nvmesim/platform/validate/validate.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "nvmesim/platform/cli/interrupt.h"
#include "nvmesim/platform/config/param_requires.h"
#include "nvmesim/platform/config/params.h"
#include "nvmesim/platform/config/presets.h"
#include "nvmesim/platform/config/system_params.h"
#include "nvmesim/platform/config/user_text.h"
#include "nvmesim/platform/system/run.h"

namespace nvmesim::platform {

bool doorbell_in_band(double model, double reference, double reference_min, double reference_max) {
  if (std::abs(model - reference) <= kDoorbellBand + 1e-12) return true;
  return !std::isnan(reference_min) && !std::isnan(reference_max) && model >= reference_min &&
         model <= reference_max;
}

bool iops_ratio_in_band(double model_ratio, double reference_ratio) {
  return reference_ratio > 0 && std::abs(model_ratio / reference_ratio - 1) <= kIopsRatioBand + 1e-12;
}

bool per_io_in_band(double model, double reference) {
  return std::abs(model - reference) <= kDoorbellBand + 1e-12;
}

bool latency_ratio_in_band(double model_ratio, double reference_ratio) {
  return reference_ratio > 0 && std::abs(model_ratio / reference_ratio - 1) <= kLatencyRatioBand + 1e-12;
}

namespace {

// A number of the run's JSON (written as a literal), NaN when absent.
double json_number(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : std::nan("");
}

}  // namespace

ModelFigures run_model(const Config& config, const std::string& label) {
  auto check_signal = [&] {
    if (const int sig = interrupt::received())
      throw ValidateInterrupted(std::string("interrupted by ") + interrupt::signal_name(sig) + " at " + label);
  };
  check_signal();
  RunSummary s{};
  std::string json, error;
  const bool ran = run_in_child(config, false, s, json, error);
  check_signal();  // a drained or killed child says nothing about the model
  if (!ran) throw std::runtime_error("validate: " + label + ": " + error);
  if (!s.ok) throw std::runtime_error("validate: " + label + ": the model failed bring-up");
  ModelFigures f;
  f.stalled = s.stalled;
  f.sq_mmio = s.figure("per_io.sq_mmio");
  f.cq_mmio = s.figure("per_io.cq_mmio");
  f.irq = s.figure("per_io.interrupts");
  f.iops = s.stalled ? 0 : s.figure("iops");
  const nlohmann::json run = nlohmann::json::parse(json, nullptr, false);
  const nlohmann::json none = nlohmann::json::object();
  const nlohmann::json& lat = run.is_object() && run.contains("lat_ns") ? run["lat_ns"] : none;
  const nlohmann::json& percentile = lat.contains("percentile") ? lat["percentile"] : none;
  f.lat_mean_ns = json_number(lat, "mean");
  f.lat_p50_ns = json_number(percentile, "50.000000");
  f.lat_p99_ns = json_number(percentile, "99.000000");
  const nlohmann::json& clat = run.is_object() && run.contains("clat_ns") ? run["clat_ns"] : none;
  const nlohmann::json& clat_percentile = clat.contains("percentile") ? clat["percentile"] : none;
  f.clat_p50_ns = json_number(clat_percentile, "50.000000");
  f.clat_p99_ns = json_number(clat_percentile, "99.000000");
  return f;
}

void bisect_calibration(Calibration& c, double reference, const std::function<double()>& model_figure) {
  const bool rising = c.target == Calibration::Target::Spread;
  c.reference_iops = reference;
  double lo = c.lo_ns, hi = c.hi_ns;
  for (int i = 0; i < 16; ++i) {
    c.value_ns = std::sqrt(lo * hi);
    const bool above = model_figure() > reference;
    if (above != rising)
      lo = c.value_ns;
    else
      hi = c.value_ns;
  }
  c.value_ns = std::sqrt(lo * hi);
  c.model_iops = model_figure();
  c.converged = std::abs(c.model_iops - reference) <= 0.05 * reference;
}

Calibration parse_calibration(const std::string& text) {
  Calibration cal;
  const auto at = text.find('@');
  cal.param = text.substr(0, at);
  if (at != std::string::npos) cal.rows = text.substr(at + 1);
  if (const auto colon = cal.param.find(':'); colon != std::string::npos) {
    const std::string target = cal.param.substr(colon + 1);
    cal.param.erase(colon);
    if (target == "spread")
      cal.target = Calibration::Target::Spread;
    else if (target != "iops")
      throw ConfigError("--calibrate: target " + quoted(target) + " is not one of iops, spread");
  }
  if (const ParamSpec* spec = ParamRegistry::builtin().find(cal.param)) {
    cal.lo_ns = std::max(10.0, spec->min);
    cal.hi_ns = std::min(1e7, spec->max);
  }
  return cal;
}

void check_calibration_params(const std::vector<Calibration>& calibrations,
                              const std::vector<std::pair<std::string, std::string>>& what_if) {
  if (calibrations.size() > 2) throw ConfigError("--calibrate: at most two costs");
  for (size_t i = 0; i < calibrations.size(); ++i) {
    const Calibration& c = calibrations[i];
    const ParamSpec* spec = ParamRegistry::builtin().find(c.param);
    if (!spec || spec->kind != ParamKind::Time)
      throw ConfigError("--calibrate: '" + c.param + "' is not a time parameter (see --list-params)");
    for (size_t j = 0; j < i; ++j)
      if (calibrations[j].param == c.param) throw ConfigError("--calibrate: " + c.param + " is given twice");
    for (const auto& [k, v] : what_if)
      if (k == c.param) throw ConfigError("--set: " + k + " is calibrated; it cannot be set");
  }
}

namespace {

// The row a row's IOPS ratio is taken to: same everything, iodepth 1.
const ReferenceRow* qd1_row_of(const ReferenceRow& row, const std::vector<ReferenceRow>& rows) {
  for (const ReferenceRow& r : rows)
    if (r.iodepth == 1 && r.rw == row.rw && r.bs == row.bs && r.numjobs == row.numjobs &&
        r.dbbuf == row.dbbuf && r.ioeventfd == row.ioeventfd)
      return &r;
  return nullptr;
}

// "ioeventfd=off,numjobs=1" -> does `row` match? Throws on a bad filter.
bool filter_matches(const std::string& filter, const ReferenceRow& row) {
  std::istringstream items(filter);
  std::string item;
  while (std::getline(items, item, ',')) {
    const auto eq = item.find('=');
    const std::string key = item.substr(0, eq), value = eq == std::string::npos ? "" : item.substr(eq + 1);
    if (eq == std::string::npos || value.empty())
      throw ConfigError("--calibrate: '" + item + "' is not KEY=VALUE (keys: rw, numjobs, dbbuf, ioeventfd)");
    if (key == "rw") {
      if (row.rw != value) return false;
    } else if (key == "numjobs") {
      if (std::to_string(row.numjobs) != value) return false;
    } else if (key == "dbbuf" || key == "ioeventfd") {
      if (value != "on" && value != "off")
        throw ConfigError("--calibrate: " + key + "='" + value + "' is not one of on, off");
      if ((key == "dbbuf" ? row.dbbuf : row.ioeventfd) != (value == "on")) return false;
    } else {
      throw ConfigError("--calibrate: '" + key + "' is not one of rw, numjobs, dbbuf, ioeventfd");
    }
  }
  return true;
}

std::vector<const ReferenceRow*> calibration_rows(const Calibration& c,
                                                  const std::vector<ReferenceRow>& rows) {
  std::vector<const ReferenceRow*> out;
  for (const ReferenceRow& r : rows)
    if (r.iodepth == 1 && filter_matches(c.rows, r)) out.push_back(&r);
  return out;
}

RowFigures run_row(const ValidateSetup& setup, const ReferenceRow& row, bool& stalled,
                   double* spread_ns = nullptr) {
  const ModelFigures m = run_model(row_config(setup, row), row.label());
  stalled = m.stalled;
  RowFigures f;
  f.sq_mmio = m.sq_mmio;
  f.cq_mmio = m.cq_mmio;
  f.irq = m.irq;
  f.iops = m.iops;
  f.clat_p50_ns = m.clat_p50_ns;
  f.clat_p99_ns = m.clat_p99_ns;
  if (spread_ns) *spread_ns = m.clat_p99_ns - m.clat_p50_ns;
  return f;
}

// The fitted figure over `rows`: IOPS summed, or the mean latency spread.
double model_figure(const ValidateSetup& setup, const Calibration& c,
                    const std::vector<const ReferenceRow*>& rows) {
  double sum = 0;
  bool stalled = false;
  for (const ReferenceRow* r : rows) {
    double spread = 0;
    const double iops = run_row(setup, *r, stalled, &spread).iops;
    sum += c.target == Calibration::Target::Iops ? iops : spread;
  }
  return c.target == Calibration::Target::Iops ? sum : sum / double(rows.size());
}

double reference_figure(const Calibration& c, const std::vector<const ReferenceRow*>& rows) {
  double sum = 0;
  for (const ReferenceRow* r : rows)
    sum += c.target == Calibration::Target::Iops ? r->iops : r->clat_p99_ns - r->clat_p50_ns;
  return c.target == Calibration::Target::Iops ? sum : sum / double(rows.size());
}

void calibrate(ValidateSetup& setup, size_t k, const std::vector<ReferenceRow>& rows) {
  Calibration& c = setup.calibrations[k];
  const std::vector<const ReferenceRow*> matched = calibration_rows(c, rows);
  c.matched_rows = unsigned(matched.size());
  bisect_calibration(c, reference_figure(c, matched), [&] { return model_figure(setup, c, matched); });
}

}  // namespace

Config row_config(const ValidateSetup& setup, const ReferenceRow& row) {
  Config c;
  for (const std::string& p : setup.presets) apply_preset(p, c);
  if (setup.presets.empty()) c.set("preset", "none");  // the source's own mechanisms only
  c.set("sim.stall_timeout", "1s");  // a slow calibration probe is not a stall
  for (const auto& [k, v] : setup.what_if) c.set(k, v);
  if (const TimingRow* t = timing_for(setup.timing, row))
    for (const MeasuredParam& m : measured_params(*t)) c.set(m.name, m.config_text());
  set_run_columns(c, row);
  finish_row_config(c, setup.calibrations, setup.number_ios);
  return c;
}

void set_run_columns(Config& c, const RunColumns& row) {
  c.set("rw", row.rw);
  c.set("bs", std::to_string(row.bs));
  c.set("iodepth", std::to_string(row.iodepth));
  c.set("numjobs", std::to_string(row.numjobs));
  c.set("nvme.dbbuf", row.dbbuf ? "spec" : "off");
  // ioeventfd=off keeps the presets' (or the default) notification path.
  if (row.ioeventfd) c.set("hv.notify", "ioeventfd");
}

void finish_row_config(Config& c, const std::vector<Calibration>& calibrations, uint64_t number_ios) {
  for (const Calibration& cal : calibrations)
    if (cal.value_ns > 0) c.set(cal.param, time_value_text(cal.value_ns));
  c.set("runtime", "0s");
  c.set("number_ios", std::to_string(number_ios));
  // What the model would refuse (more jobs than I/O queues, a setting
  // that needs another) is refused here, before any
  // run: check_setup builds every row's configuration up front.
  c.validate_all();
  check_param_requirements(c);
  check_system_params(load_system_params(c, {}), c);
}

void check_setup(const ValidateSetup& setup, const std::vector<ReferenceRow>& rows) {
  check_calibration_params(setup.calibrations, setup.what_if);
  for (const Calibration& c : setup.calibrations) {
    const auto matched = calibration_rows(c, rows);
    if (matched.empty())
      throw ConfigError("--calibrate: " + c.param + (c.rows.empty() ? "" : "@" + c.rows) +
                        ": no iodepth=1 row of the reference matches");
    if (c.target == Calibration::Target::Spread)
      for (const ReferenceRow* r : matched)
        if (std::isnan(r->clat_p50_ns) || std::isnan(r->clat_p99_ns))
          throw ConfigError("--calibrate: " + c.param + ":spread needs clat_p50_ns and clat_p99_ns (reference line " +
                            std::to_string(r->line) + ")");
  }
  for (const auto& [k, v] : setup.what_if)
    for (const char* row_key : {"rw", "bs", "iodepth", "numjobs", "nvme.dbbuf", "number_ios", "runtime"})
      if (k == row_key)
        throw ConfigError("--set: " + k + " is set by each row of the reference (or --number_ios)");
  for (const auto& [k, v] : setup.what_if)
    for (const TimingRow& t : setup.timing)
      for (const MeasuredParam& m : measured_params(t))
        if (k == m.name)
          throw ConfigError("--set: " + k + " is measured (--timing " + setup.timing_file + "); it cannot be set");
  {  // The presets and what-ifs alone (their errors are no row's)
    Config probe;
    for (const std::string& p : setup.presets) apply_preset(p, probe);
    for (const auto& [k, v] : setup.what_if) probe.set(k, v);
  }
  for (const ReferenceRow& r : rows) {
    if (!setup.timing.empty() && !timing_for(setup.timing, r))
      throw ConfigError("--timing: " + setup.timing_file + " has no line for numjobs=" + std::to_string(r.numjobs) +
                        " dbbuf=" + (r.dbbuf ? "on" : "off") + " (reference line " + std::to_string(r.line) + ")");
    if (!qd1_row_of(r, rows))
      throw ConfigError("reference line " + std::to_string(r.line) + ": " + r.label() +
                        " has no iodepth=1 row to take its IOPS ratio to");
    try {
      row_config(setup, r);  // every row's configuration is valid for the model
    } catch (const ConfigError& e) {
      throw ConfigError("reference line " + std::to_string(r.line) + ": " + r.label() + ": " + e.what());
    }
  }
}

ValidateResult validate(ValidateSetup setup, const std::vector<ReferenceRow>& rows) {
  check_setup(setup, rows);
  // One cost: one fit. Two: fit each with the other fixed, twice over, so
  // each ends fitted with the other's final value.
  const int rounds = setup.calibrations.size() > 1 ? 2 : 1;
  ValidateResult result;
  try {
    for (int round = 0; round < rounds; ++round)
      for (size_t k = 0; k < setup.calibrations.size(); ++k) calibrate(setup, k, rows);
  } catch (const ValidateInterrupted&) {
    result.calibrations = setup.calibrations;
    result.interrupted = interrupt::received();
    result.during_calibration = true;
    return result;  // no row is judged with a cost half fitted
  }

  result.calibrations = setup.calibrations;
  std::map<const ReferenceRow*, double> qd1_model_iops;
  std::vector<const ReferenceRow*> ran;
  for (const ReferenceRow& row : rows) {
    RowResult r;
    r.reference = row;
    try {
      r.model = run_row(setup, row, r.stalled);
    } catch (const ValidateInterrupted&) {
      result.interrupted = interrupt::received();
      break;
    }
    if (row.iodepth == 1) qd1_model_iops[&row] = r.model.iops;
    result.rows.push_back(r);
    ran.push_back(&row);
  }
  // Interrupted: a row is judged only when its iodepth=1 row ran too (the
  // IOPS ratio's base); a row listed before its iodepth=1 row is dropped.
  if (result.interrupted) {
    std::vector<RowResult> judged;
    std::vector<const ReferenceRow*> judged_rows;
    for (size_t i = 0; i < ran.size(); ++i)
      if (qd1_model_iops.count(qd1_row_of(*ran[i], rows))) {
        judged.push_back(result.rows[i]);
        judged_rows.push_back(ran[i]);
      }
    result.rows = judged;
    ran = judged_rows;
  }
  for (size_t i = 0; i < result.rows.size(); ++i) {
    RowResult& r = result.rows[i];
    const ReferenceRow& row = *ran[i];
    const ReferenceRow* qd1 = qd1_row_of(row, rows);
    r.reference_ratio = qd1->iops > 0 ? row.iops / qd1->iops : 0;
    const double base = qd1_model_iops[qd1];
    r.model.iops_ratio = base > 0 ? r.model.iops / base : 0;
    r.sq_in_band = doorbell_in_band(r.model.sq_mmio, row.sq_mmio, row.sq_mmio_min, row.sq_mmio_max);
    r.cq_in_band = doorbell_in_band(r.model.cq_mmio, row.cq_mmio, row.cq_mmio_min, row.cq_mmio_max);
    r.iops_in_band = !r.stalled && iops_ratio_in_band(r.model.iops_ratio, r.reference_ratio);
    r.in_band = r.sq_in_band && r.cq_in_band && r.iops_in_band;
    result.in_band += r.in_band;
  }
  return result;
}

}  // namespace nvmesim::platform
