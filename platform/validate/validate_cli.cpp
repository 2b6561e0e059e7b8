// nvmesim validate REFERENCE.csv|FIGURES.csv [--preset NAME[,NAME]] [--calibrate PARAM[@ROWS]]... [--fit-one COST]
//                                [--set PARAM=VALUE]... [--timing FILE] [--number_ios N]
//                                [--output-format normal|json]
#include "nvmesim/platform/cli/options.h"
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <ostream>

#include "nvmesim/platform/cli/interrupt.h"
#include "nvmesim/platform/config/params.h"
#include "nvmesim/platform/config/presets.h"
#include "nvmesim/platform/config/user_text.h"
#include "nvmesim/platform/validate/cost_ranges.h"
#include "nvmesim/platform/validate/csv_table.h"
#include "nvmesim/platform/validate/published.h"
#include "nvmesim/platform/validate/published_report.h"
#include "nvmesim/platform/validate/validate.h"

namespace nvmesim::platform {

namespace po = boost::program_options;

namespace {

const char* kHelp =
    "Usage: nvmesim validate REFERENCE.csv|FIGURES.csv [options]\n"
    "Runs the model at every row of a real system's reference (validation/qemu/results.csv,\n"
    "columns in validation/qemu/README.md) and prints reference beside model per row:\n"
    "SQ and CQ MMIO doorbell writes per I/O, MSI-X interrupts per I/O, and IOPS as a ratio\n"
    "to the row's iodepth=1 row. A row is in band when both doorbell figures are within\n"
    "+-0.15 of the reference (or inside the row's measured min..max) and the IOPS ratio is\n"
    "within +-25%. The last line is the share of rows in band. clat p50/p99 are printed\n"
    "beside, not banded.\n"
    "A table of published figures (validation/published/figures.csv, columns in\n"
    "validation/published/README.md; recognised by its source and baseline columns) is\n"
    "judged per source: its presets (column preset) come before --preset, at most two costs\n"
    "are fitted on its baseline rows' IOPS (--fit-one's one, else --calibrate, else its\n"
    "calibrate column, else hv.exit_mmio), and each published figure is a point: IOPS and\n"
    "latency as ratios to the baseline row within +-25%, MMIO doorbell writes per I/O within\n"
    "+-0.15. The last lines are the share of points in band per source (with its fitted\n"
    "costs) and overall. Each fitted cost is printed with its physical range (table in\n"
    "validation/published/README.md), flagged \"outside its physical range\" when it leaves\n"
    "it (\"no range documented\" where there is none).\n"
    "\n"
    "Options:\n"
    "  --preset NAME[,NAME]      presets applied to every row first (--list-presets of\n"
    "                            nvmesim shows them), e.g. qemu-7.2 or qemu-7.2,haswell-ep\n"
    "  --calibrate PARAM[:TARGET][@ROWS]\n"
    "                            fit a time cost on the reference's iodepth=1 rows; TARGET\n"
    "                            iops (default): the model's IOPS summed over them equals\n"
    "                            the reference's; spread: the model's clat p99 - p50\n"
    "                            equals that of the reference's clat (mean over the rows);\n"
    "                            ROWS narrows them (KEY=VALUE,... over rw, numjobs, dbbuf,\n"
    "                            ioeventfd); at most two; default: the presets' own choice\n"
    "  --no-calibrate            fit nothing\n"
    "  --fit-one COST            published figures: fit exactly one cost per source on its\n"
    "                            baseline rows' IOPS, in place of its calibrate column (as a\n"
    "                            user with one measurement would); COST is exit (the\n"
    "                            source's doorbell exit: hv.exit_ioeventfd when its baseline\n"
    "                            runs with ioeventfd on, else hv.exit_mmio) or a time\n"
    "                            parameter (--list-params), e.g. hv.dispatch_cost\n"
    "  --set PARAM=VALUE         a what-if for every row (after the presets)\n"
    "  --timing FILE             the device thread's timing measured in the real system at\n"
    "                            iodepth 1 (validation/qemu/trace_timing.py --csv): each row\n"
    "                            gets hv.dispatch_stall_share, hv.dispatch_stall_max and,\n"
    "                            when the file has them, nvme.cmd_cost and nvme.cqe_cost\n"
    "                            from the line of its numjobs and dbbuf\n"
    "  --number_ios N            I/Os per job in each model run (default 10000)\n"
    "  --output-format F         normal (default) or json\n"
    "Exit status: 0 the runs completed (whatever the share), 1 a model run failed,\n"
    "2 a bad option or reference file (every row's configuration is checked before\n"
    "anything runs), 128+N interrupted by signal N (130 SIGINT, 143 SIGTERM, 129 SIGHUP):\n"
    "the rows judged so far, then INTERRUPTED.\n";

double round_to(double v, int decimals) {
  if (std::isnan(v)) return v;
  const double k = std::pow(10.0, decimals);
  return std::round(v * k) / k;
}

nlohmann::ordered_json number_or_null(double v, int decimals) {
  if (std::isnan(v)) return nullptr;
  return round_to(v, decimals);
}

std::string fixed(double v, int decimals) {
  if (std::isnan(v)) return "-";
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", decimals, v);
  return b;
}

void write_json(const ValidateSetup& setup, const ValidateResult& result, std::ostream& out) {
  using J = nlohmann::ordered_json;
  J root;
  root["presets"] = setup.presets;
  J cal = J::array();
  for (const Calibration& c : result.calibrations)
    cal.push_back({{"parameter", c.param},
                   {"target", c.target == Calibration::Target::Iops ? "iops" : "spread"},
                   {"rows", c.rows.empty() ? "iodepth=1" : "iodepth=1," + c.rows},
                   {"value_ns", round_to(c.value_ns, 1)},
                   {"matched_rows", c.matched_rows},
                   {"reference", round_to(c.reference_iops, 1)},
                   {"model", round_to(c.model_iops, 1)},
                   {"converged", c.converged},
                   {"range_note", range_note(c.param, c.value_ns)}});
  root["calibration"] = cal;
  if (!setup.timing.empty()) {
    J timing = J::array();
    for (const TimingRow& t : setup.timing) {
      J line = {{"numjobs", t.numjobs}, {"dbbuf", t.dbbuf ? "on" : "off"}};
      for (const MeasuredParam& m : measured_params(t))
        line[m.is_time ? m.name + "_ns" : m.name] = round_to(m.value, m.is_time ? 0 : 4);
      timing.push_back(line);
    }
    root["measured"] = {{"file", setup.timing_file}, {"iodepth", 1}, {"lines", timing}};
  }
  J rows = J::array();
  for (const RowResult& r : result.rows) {
    const ReferenceRow& ref = r.reference;
    J row;
    row["config"] = {{"rw", ref.rw},           {"bs", ref.bs},
                     {"iodepth", ref.iodepth}, {"numjobs", ref.numjobs},
                     {"dbbuf", ref.dbbuf ? "on" : "off"}, {"ioeventfd", ref.ioeventfd ? "on" : "off"}};
    row["reference"] = {{"per_io.sq_mmio", number_or_null(ref.sq_mmio, 4)},
                        {"per_io.sq_mmio_min", number_or_null(ref.sq_mmio_min, 4)},
                        {"per_io.sq_mmio_max", number_or_null(ref.sq_mmio_max, 4)},
                        {"per_io.cq_mmio", number_or_null(ref.cq_mmio, 4)},
                        {"per_io.cq_mmio_min", number_or_null(ref.cq_mmio_min, 4)},
                        {"per_io.cq_mmio_max", number_or_null(ref.cq_mmio_max, 4)},
                        {"per_io.interrupts", number_or_null(ref.irq, 4)},
                        {"iops", number_or_null(ref.iops, 1)},
                        {"iops_ratio", round_to(r.reference_ratio, 4)},
                        {"clat_p50_ns", number_or_null(ref.clat_p50_ns, 0)},
                        {"clat_p99_ns", number_or_null(ref.clat_p99_ns, 0)}};
    row["model"] = {{"per_io.sq_mmio", round_to(r.model.sq_mmio, 4)},
                    {"per_io.cq_mmio", round_to(r.model.cq_mmio, 4)},
                    {"per_io.interrupts", round_to(r.model.irq, 4)},
                    {"iops", round_to(r.model.iops, 1)},
                    {"iops_ratio", round_to(r.model.iops_ratio, 4)},
                    {"clat_p50_ns", number_or_null(r.model.clat_p50_ns, 0)},
                    {"clat_p99_ns", number_or_null(r.model.clat_p99_ns, 0)},
                    {"stalled", r.stalled}};
    row["in_band"] = r.in_band;
    row["in_band_by_metric"] = {{"per_io.sq_mmio", r.sq_in_band},
                                {"per_io.cq_mmio", r.cq_in_band},
                                {"iops_ratio", r.iops_in_band}};
    rows.push_back(row);
  }
  root["rows"] = rows;
  root["in_band_share"] = round_to(result.in_band_share(), 4);
  if (result.interrupted) {
    root["interrupted"] = interrupt::signal_name(result.interrupted);
    root["during_calibration"] = result.during_calibration;
  }
  out << root.dump(2) << "\n";
}

// The last line of an interrupted validate: what was judged, and by which signal.
std::string interrupted_line(int sig, bool during_calibration, size_t judged, size_t rows, const char* what) {
  std::string t = std::string("INTERRUPTED by ") + interrupt::signal_name(sig) + ": ";
  if (during_calibration) return t + "during the calibration, no " + what + " judged\n";
  return t + std::to_string(judged) + " of " + std::to_string(rows) + " " + what + "s judged\n";
}

void write_text(const std::string& file, const ValidateSetup& setup, const std::vector<ReferenceRow>& rows,
                const ValidateResult& result, std::ostream& out) {
  const ReferenceRow& first = rows.front();
  out << "nvmesim validate: " << file << ", " << rows.size() << " rows";
  if (!first.qemu_version.empty()) out << ", QEMU " << first.qemu_version;
  if (!first.linux_version.empty()) out << ", Linux " << first.linux_version;
  if (!first.accel.empty()) out << ", accel " << first.accel;
  out << "\npresets: ";
  if (setup.presets.empty()) out << "(none: the platform's defaults)";
  for (size_t i = 0; i < setup.presets.size(); ++i) out << (i ? ", " : "") << setup.presets[i];
  out << "\n";
  if (result.calibrations.empty()) out << "calibrated: nothing\n";
  for (const Calibration& c : result.calibrations)
    out << "calibrated on " << c.matched_rows << " iodepth=1 row(s)" << (c.rows.empty() ? "" : " with " + c.rows)
        << ": " << c.param << " = " << fixed(c.value_ns, 1) << " ns (reference " << fixed(c.reference_iops, 0)
        << (c.target == Calibration::Target::Iops ? " IOPS, model " : " ns latency p99 - p50, model ")
        << fixed(c.model_iops, 0) << (c.converged ? ")" : "; NOT converged)") << "; "
        << range_note(c.param, c.value_ns) << "\n";
  for (const TimingRow& t : setup.timing) {
    out << "measured at iodepth=1 (" << setup.timing_file << " line " << t.line << "), numjobs=" << t.numjobs
        << " dbbuf=" << (t.dbbuf ? "on" : "off") << ":";
    const char* sep = " ";
    for (const MeasuredParam& m : measured_params(t)) {
      out << sep << m.name << " = " << (m.is_time ? format_time_ns(m.value) : fixed(m.value, 4));
      sep = ", ";
    }
    out << "\n";
  }
  out << "band: doorbell writes per I/O within +-0.15 or the row's min..max; IOPS ratio to the\n"
         "row's iodepth=1 row within +-25%; * marks a figure out of band; irq/IO and clat p50/p99\n"
         "(the model's fio clat, clat_ns in docs/metrics.md) are reported beside, not banded\n\n";
  char line[400];
  std::snprintf(line, sizeof line, "%-9s %5s %4s %5s %5s | %14s | %14s | %13s | %14s | %15s | %15s | %s\n", "rw",
                "depth", "jobs", "dbbuf", "ioefd", "SQ mmio/IO", "CQ mmio/IO", "irq/IO", "IOPS ratio",
                "clat p50 (us)", "clat p99 (us)", "band");
  out << line;
  std::snprintf(line, sizeof line, "%-9s %5s %4s %5s %5s | %6s %7s | %6s %7s | %6s %6s | %6s %7s | %7s %7s | %7s %7s |\n",
                "", "", "", "", "", "real", "model", "real", "model", "real", "model", "real", "model", "real",
                "model", "real", "model");
  out << line;
  for (const RowResult& r : result.rows) {
    const ReferenceRow& ref = r.reference;
    auto mark = [](bool ok) { return ok ? " " : "*"; };
    std::snprintf(line, sizeof line,
                  "%-9s %5u %4u %5s %5s | %6s %6s%s | %6s %6s%s | %6s %6s | %6s %6s%s | %7s %7s | %7s %7s | %s\n",
                  ref.rw.c_str(),
                  ref.iodepth, ref.numjobs, ref.dbbuf ? "on" : "off", ref.ioeventfd ? "on" : "off",
                  fixed(ref.sq_mmio, 3).c_str(), fixed(r.model.sq_mmio, 3).c_str(), mark(r.sq_in_band),
                  fixed(ref.cq_mmio, 3).c_str(), fixed(r.model.cq_mmio, 3).c_str(), mark(r.cq_in_band),
                  fixed(ref.irq, 3).c_str(), fixed(r.model.irq, 3).c_str(), fixed(r.reference_ratio, 2).c_str(),
                  r.stalled ? "stall" : fixed(r.model.iops_ratio, 2).c_str(), mark(r.iops_in_band),
                  fixed(ref.clat_p50_ns / 1000, 1).c_str(), fixed(r.model.clat_p50_ns / 1000, 1).c_str(),
                  fixed(ref.clat_p99_ns / 1000, 1).c_str(), fixed(r.model.clat_p99_ns / 1000, 1).c_str(),
                  r.in_band ? "in" : "OUT");
    out << line;
  }
  char share[128];
  std::snprintf(share, sizeof share, "in band: %u of %zu rows (%.1f%%)\n", result.in_band, result.rows.size(),
                100 * result.in_band_share());
  out << "\n" << share;
  if (result.interrupted)
    out << interrupted_line(result.interrupted, result.during_calibration, result.rows.size(), rows.size(), "row");
}

}  // namespace

int run_validate_command(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  auto refuse = [&](const std::string& message) {
    err << "nvmesim validate: error: " << message << "\n";
    return 2;
  };
  po::options_description desc;
  desc.add_options()("help,h", "")("preset", po::value<std::vector<std::string>>(), "")(
      "calibrate", po::value<std::vector<std::string>>(), "")("no-calibrate", "")("fit-one", po::value<std::vector<std::string>>(), "")(
      "set", po::value<std::vector<std::string>>(), "")("timing", po::value<std::vector<std::string>>(), "")("number_ios", po::value<std::string>(), "")(
      "output-format", po::value<std::string>(), "")("reference", po::value<std::vector<std::string>>(), "");
  po::variables_map vm;
  try {
    cli::ParseRules rules;
    rules.positional = "reference";
    vm = cli::to_variables(cli::parse_options(argc, argv, desc, rules), desc);
  } catch (const cli::UsageError& e) {
    return refuse(e.what());
  }
  if (vm.count("help")) {
    out << kHelp;
    return 0;
  }
  if (!vm.count("reference")) return refuse("no reference file (e.g. validation/qemu/results.csv)");
  const auto files = vm["reference"].as<std::vector<std::string>>();
  if (files.size() > 1) return refuse("one reference file, not " + std::to_string(files.size()));
  const std::string format = vm.count("output-format") ? vm["output-format"].as<std::string>() : "normal";
  if (format != "normal" && format != "json")
    return refuse("--output-format: " + quoted(format) + " is not one of normal, json");

  ValidateSetup setup;
  if (vm.count("preset"))
    for (const std::string& p : vm["preset"].as<std::vector<std::string>>()) setup.presets.push_back(p);
  if (vm.count("number_ios")) {
    const std::string t = vm["number_ios"].as<std::string>();
    char* end = nullptr;
    const unsigned long long n = std::strtoull(t.c_str(), &end, 10);
    if (t.empty() || *end || n < 100 || n > 10000000)
      return refuse("--number_ios: " + quoted(t) + " is out of range (100..10000000)");
    setup.number_ios = n;
  }
  if (vm.count("set"))
    for (const std::string& kv : vm["set"].as<std::vector<std::string>>()) {
      const auto eq = kv.find('=');
      if (eq == std::string::npos || eq == 0) return refuse("--set: " + quoted(kv) + " is not PARAM=VALUE");
      setup.what_if.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
    }
  std::vector<std::string> calibrate;
  if (vm.count("calibrate")) calibrate = vm["calibrate"].as<std::vector<std::string>>();
  if (vm.count("no-calibrate") && !calibrate.empty()) return refuse("--no-calibrate: conflicts with --calibrate");
  std::string fit_one;
  if (vm.count("fit-one")) {
    const auto values = vm["fit-one"].as<std::vector<std::string>>();
    if (values.size() > 1) return refuse("--fit-one: one cost per source, given " + std::to_string(values.size()) + " times");
    if (!calibrate.empty()) return refuse("--fit-one: conflicts with --calibrate");
    if (vm.count("no-calibrate")) return refuse("--fit-one: conflicts with --no-calibrate");
    fit_one = values.front();
    try {
      check_fit_one(fit_one);
    } catch (const ConfigError& e) {
      return refuse(e.what());
    }
  }
  std::vector<Calibration> explicit_calibrations;
  try {
    for (const std::string& c : calibrate) explicit_calibrations.push_back(parse_calibration(c));
  } catch (const ConfigError& e) {
    return refuse(e.what());
  }
  const std::string& file = files.front();
  bool published = false;
  try {
    published = is_published_header(read_csv_header(file));
  } catch (const ConfigError& e) {
    return refuse(e.what());
  }
  if (published) {
    if (vm.count("timing"))
      return refuse("--timing: applies to the real-system reference (validation/qemu/results.csv), not to published figures");
    PublishedSetup pub;
    pub.presets = setup.presets;
    pub.what_if = setup.what_if;
    pub.number_ios = setup.number_ios;
    pub.calibrations = explicit_calibrations;
    pub.no_calibrate = vm.count("no-calibrate") > 0;
    pub.fit_one = fit_one;
    std::vector<PublishedSource> sources;
    try {
      sources = read_published_csv(file);
      check_published_setup(pub, sources);
    } catch (const ConfigError& e) {
      return refuse(e.what());
    }
    PublishedResult result;
    try {
      result = validate_published(pub, sources);
    } catch (const std::exception& e) {
      err << "nvmesim validate: error: " << e.what() << "\n";
      return 1;
    }
    if (format == "json")
      write_published_json(file, pub, result, out);
    else
      write_published_text(file, result, out);
    if (result.interrupted) {
      const std::string line = interrupted_line(result.interrupted, false, result.sources.size(), sources.size(), "source");
      if (format != "json") out << line;
      err << "nvmesim validate: " << line;
      return interrupt::exit_code();
    }
    return 0;
  }

  if (!fit_one.empty())
    return refuse("--fit-one: applies to published figures (validation/published/figures.csv), not to the "
                  "real-system reference");
  setup.calibrations = explicit_calibrations;
  if (calibrate.empty() && !vm.count("no-calibrate"))
    try {
      for (const std::string& p : setup.presets)
        for (const std::string& c : preset_calibrations(p)) setup.calibrations.push_back(parse_calibration(c));
    } catch (const ConfigError& e) {
      return refuse(e.what());
    }

  std::vector<ReferenceRow> rows;
  try {
    if (vm.count("timing")) {
      const auto timing = vm["timing"].as<std::vector<std::string>>();
      if (timing.size() > 1) return refuse("--timing: one file, not " + std::to_string(timing.size()));
      setup.timing_file = timing.front();
      setup.timing = read_timing_csv(setup.timing_file);
    }
    rows = read_reference_csv(file);
    check_setup(setup, rows);
  } catch (const ConfigError& e) {
    return refuse(e.what());
  }
  ValidateResult result;
  try {
    result = validate(setup, rows);
  } catch (const std::exception& e) {
    err << "nvmesim validate: error: " << e.what() << "\n";
    return 1;
  }
  if (format == "json")
    write_json(setup, result, out);
  else
    write_text(file, setup, rows, result, out);
  if (result.interrupted) {
    err << "nvmesim validate: "
        << interrupted_line(result.interrupted, result.during_calibration, result.rows.size(), rows.size(), "row");
    return interrupt::exit_code();
  }
  return 0;
}

}  // namespace nvmesim::platform
