#include "nvmesim/platform/cli/interrupt.h"
#include "nvmesim/platform/validate/published.h"

#include <cmath>
#include <stdexcept>

#include "nvmesim/platform/config/params.h"
#include "nvmesim/platform/config/presets.h"
#include "nvmesim/platform/config/user_text.h"

namespace nvmesim::platform {

namespace {

double ratio(double value, double base) { return base > 0 ? value / base : 0; }

std::string where(const PublishedSource& s) { return "source " + s.id + " (line " + std::to_string(s.line) + ")"; }

std::vector<const PublishedRow*> baseline_rows(const PublishedSource& s) {
  std::vector<const PublishedRow*> out;
  for (const PublishedRow& r : s.rows)
    if (r.baseline) out.push_back(&r);
  return out;
}

// The figure a cost is fitted to over the baseline rows: IOPS summed, or
// the latency spread p99 - p50 averaged.
double reference_figure(const Calibration& c, const std::vector<const PublishedRow*>& rows) {
  double sum = 0;
  for (const PublishedRow* r : rows) sum += c.target == Calibration::Target::Iops ? r->iops : r->lat_p99_ns - r->lat_p50_ns;
  return c.target == Calibration::Target::Iops ? sum : sum / double(rows.size());
}

}  // namespace

std::vector<PublishedPoint> published_points(const PublishedRow& row, const PublishedRow& baseline,
                                             const ModelFigures& model, const ModelFigures& model_baseline) {
  std::vector<PublishedPoint> points;
  const bool stalled = model.stalled || model_baseline.stalled;
  if (!row.baseline && !std::isnan(row.iops)) {
    PublishedPoint p{"iops_ratio", ratio(row.iops, baseline.iops), ratio(model.iops, model_baseline.iops)};
    p.in_band = !stalled && iops_ratio_in_band(p.model, p.reference);
    points.push_back(p);
  }
  const std::pair<const char*, double> counts[] = {{"mmio_per_io", row.mmio_per_io},
                                                   {"sq_mmio_per_io", row.sq_mmio_per_io},
                                                   {"cq_mmio_per_io", row.cq_mmio_per_io}};
  const double model_counts[] = {model.sq_mmio + model.cq_mmio, model.sq_mmio, model.cq_mmio};
  for (size_t k = 0; k < 3; ++k)
    if (!std::isnan(counts[k].second)) {
      PublishedPoint p{counts[k].first, counts[k].second, model_counts[k]};
      p.in_band = per_io_in_band(p.model, p.reference);
      points.push_back(p);
    }
  if (row.line != baseline.line) {
    const char* names[] = {"lat_mean_ratio", "lat_p50_ratio", "lat_p99_ratio"};
    const double reference[] = {row.lat_mean_ns, row.lat_p50_ns, row.lat_p99_ns};
    const double reference_base[] = {baseline.lat_mean_ns, baseline.lat_p50_ns, baseline.lat_p99_ns};
    const double modelled[] = {model.lat_mean_ns, model.lat_p50_ns, model.lat_p99_ns};
    const double modelled_base[] = {model_baseline.lat_mean_ns, model_baseline.lat_p50_ns, model_baseline.lat_p99_ns};
    for (size_t k = 0; k < 3; ++k)
      if (!std::isnan(reference[k])) {
        PublishedPoint p{names[k], ratio(reference[k], reference_base[k]), ratio(modelled[k], modelled_base[k])};
        p.in_band = !stalled && latency_ratio_in_band(p.model, p.reference);
        points.push_back(p);
      }
  }
  return points;
}

unsigned published_point_count(const PublishedSource& source) {
  unsigned n = 0;
  for (const PublishedRow& r : source.rows)
    n += unsigned(published_points(r, source.reference_baseline(), {}, {}).size());
  return n;
}

std::vector<std::string> source_presets(const PublishedSetup& setup, const PublishedSource& source) {
  std::vector<std::string> out;
  if (!source.presets.empty()) out.push_back(source.presets);
  out.insert(out.end(), setup.presets.begin(), setup.presets.end());
  return out;
}

void check_fit_one(const std::string& value) {
  if (value == "exit") return;
  const ParamSpec* spec = ParamRegistry::builtin().find(value);
  if (!spec || spec->kind != ParamKind::Time)
    throw ConfigError("--fit-one: " + quoted(value) +
                      " is not one of exit (each source's doorbell exit) or a time parameter (see --list-params)");
}

std::string fit_one_param(const std::string& fit_one, const PublishedSource& source) {
  if (fit_one != "exit") return fit_one;
  // QEMU attaches the doorbells' ioeventfds only with ioeventfd=on; then a
  // doorbell write is signalled in the kernel, else it exits to QEMU.
  return source.reference_baseline().ioeventfd ? "hv.exit_ioeventfd" : "hv.exit_mmio";
}

std::vector<Calibration> source_calibrations(const PublishedSetup& setup, const PublishedSource& source) {
  std::vector<Calibration> out;
  if (setup.no_calibrate) return out;
  if (!setup.fit_one.empty()) {
    check_fit_one(setup.fit_one);
    out.push_back(parse_calibration(fit_one_param(setup.fit_one, source)));
  } else if (!setup.calibrations.empty()) {
    out = setup.calibrations;
  } else {
    try {
      for (const std::string& c : source.calibrate.empty() ? std::vector<std::string>{"hv.exit_mmio"} : source.calibrate)
        out.push_back(parse_calibration(c));
      check_calibration_params(out, {});
    } catch (const ConfigError& e) {
      throw ConfigError(where(source) + ": column calibrate: " + e.what());
    }
  }
  for (const Calibration& c : out) {
    if (!c.rows.empty())
      throw ConfigError("--calibrate: " + c.param + "@" + c.rows +
                        ": @ROWS selects rows of the TCG reference; a published source fits on its baseline rows");
    if (c.target == Calibration::Target::Spread)
      for (const PublishedRow* r : baseline_rows(source))
        if (std::isnan(r->lat_p50_ns) || std::isnan(r->lat_p99_ns))
          throw ConfigError("--calibrate: " + c.param + ":spread needs lat_p50_ns and lat_p99_ns (" + where(source) +
                            ", baseline line " + std::to_string(r->line) + ")");
  }
  check_calibration_params(out, setup.what_if);
  return out;
}

Config published_row_config(const std::vector<std::string>& presets, const PublishedSetup& setup,
                            const std::vector<Calibration>& calibrations, const PublishedRow& row) {
  Config c;
  for (const std::string& p : presets) apply_preset(p, c);
  if (presets.empty()) c.set("preset", "none");  // the source's own mechanisms only
  c.set("sim.stall_timeout", "1s");  // a slow calibration probe is not a stall
  for (const auto& [k, v] : setup.what_if) c.set(k, v);
  set_run_columns(c, row);
  if (row.iothread == "on") {
    c.set("hv.device_thread", "iothread");
    // Without the nvme queues' poll handlers an iothread only sleeps on their eventfds.
    if (row.polling != "on") c.set("hv.poll_max_ns", "0ns");
  }
  // Jinhao Fan's irqfd patches: the completion's MSI is an eventfd write.
  if (row.irqfd == "on") c.set("hv.msi", "irqfd");
  finish_row_config(c, calibrations, setup.number_ios);
  return c;
}

void check_published_setup(const PublishedSetup& setup, const std::vector<PublishedSource>& sources) {
  for (const auto& [k, v] : setup.what_if)
    for (const char* row_key : {"rw", "bs", "iodepth", "numjobs", "nvme.dbbuf", "number_ios", "runtime"})
      if (k == row_key) throw ConfigError("--set: " + k + " is set by each row of the figures (or --number_ios)");
  {  // The presets and what-ifs alone (their errors are no row's)
    Config probe;
    for (const std::string& p : setup.presets) apply_preset(p, probe);
    for (const auto& [k, v] : setup.what_if) probe.set(k, v);
  }
  for (const PublishedSource& s : sources) {
    if (!s.presets.empty()) try {
        Config probe;
        apply_preset(s.presets, probe);
      } catch (const ConfigError& e) {
        throw ConfigError(where(s) + ": column preset: " + e.what());
      }
    const std::vector<Calibration> calibrations = source_calibrations(setup, s);
    for (const PublishedRow& r : s.rows) try {
        published_row_config(source_presets(setup, s), setup, calibrations, r);
      } catch (const ConfigError& e) {
        throw ConfigError("source " + s.id + ", line " + std::to_string(r.line) + " (" + r.description() + "): " + e.what());
      }
  }
}

PublishedResult validate_published(const PublishedSetup& setup, const std::vector<PublishedSource>& sources) {
  check_published_setup(setup, sources);
  PublishedResult result;
  result.fit_one = setup.fit_one;
  for (const PublishedSource& s : sources) try {
    PublishedSourceResult out;
    out.source = &s;
    out.presets = source_presets(setup, s);
    out.calibrations = source_calibrations(setup, s);
    auto run = [&](const PublishedRow& r) {
      return run_model(published_row_config(out.presets, setup, out.calibrations, r), "source " + s.id + ": " + r.description());
    };
    // One cost: one fit. Two: each with the other fixed, six times over.
    // With as many baseline rows as costs, cost k is fitted on baseline row
    // k alone (two figures pin two costs); otherwise each on all of them.
    const std::vector<const PublishedRow*> baselines = baseline_rows(s);
    const bool paired = out.calibrations.size() > 1 && out.calibrations.size() == baselines.size();
    const int rounds = out.calibrations.size() > 1 ? 6 : 1;
    for (int round = 0; round < rounds; ++round)
      for (size_t k = 0; k < out.calibrations.size(); ++k) {
        Calibration& c = out.calibrations[k];
        const std::vector<const PublishedRow*> rows =
            paired ? std::vector<const PublishedRow*>{baselines[k]} : baselines;
        c.matched_rows = unsigned(rows.size());
        bisect_calibration(c, reference_figure(c, rows), [&] {
          double sum = 0;
          for (const PublishedRow* r : rows) {
            const ModelFigures m = run(*r);
            sum += c.target == Calibration::Target::Iops ? m.iops : m.lat_p99_ns - m.lat_p50_ns;
          }
          return c.target == Calibration::Target::Iops ? sum : sum / double(rows.size());
        });
      }
    const PublishedRow& baseline = s.reference_baseline();
    for (const PublishedRow& r : s.rows) out.rows.push_back({r, run(r), {}});
    ModelFigures model_baseline;
    for (const PublishedRowResult& r : out.rows)
      if (r.row.line == baseline.line) model_baseline = r.model;
    for (PublishedRowResult& r : out.rows) {
      r.points = published_points(r.row, baseline, r.model, model_baseline);
      for (const PublishedPoint& p : r.points) {
        ++out.points;
        out.in_band += p.in_band;
      }
    }
    result.points += out.points;
    result.in_band += out.in_band;
    result.sources.push_back(std::move(out));
  } catch (const ValidateInterrupted&) {
    result.interrupted = interrupt::received();  // the source under way is not judged
    break;
  }
  return result;
}

}  // namespace nvmesim::platform
