#include "nvmesim/platform/validate/published_report.h"

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "nvmesim/platform/cli/interrupt.h"
#include "nvmesim/platform/validate/cost_ranges.h"

namespace nvmesim::platform {

namespace {

using J = nlohmann::ordered_json;

double round_to(double v, int decimals) {
  const double k = std::pow(10.0, decimals);
  return std::round(v * k) / k;
}

J number_or_null(double v, int decimals) {
  if (!std::isfinite(v)) return nullptr;
  return round_to(v, decimals);
}

std::string fixed(double v, int decimals) {
  if (!std::isfinite(v)) return "-";
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", decimals, v);
  return b;
}

std::string share_line(unsigned in_band, unsigned points, double share) {
  char b[128];
  std::snprintf(b, sizeof b, "in band: %u of %u points (%.1f%%)", in_band, points, 100 * share);
  return b;
}

std::string joined(const std::vector<std::string>& items, const char* separator) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : separator) + s;
  return out;
}

J range_json(const std::string& param) {
  const CostRange* r = cost_range(param);
  if (!r) return nullptr;
  return {{"lo_ns", r->lo_ns}, {"hi_ns", r->hi_ns}, {"source", r->source}};
}

J in_range_json(const Calibration& c) {
  const CostRange* r = cost_range(c.param);
  if (!r) return nullptr;
  return in_physical_range(*r, c.value_ns);
}

J calibration_json(const Calibration& c) {
  return {{"parameter", c.param},
          {"target", c.target == Calibration::Target::Iops ? "iops" : "spread"},
          {"rows", "baseline"},
          {"value_ns", round_to(c.value_ns, 1)},
          {"matched_rows", c.matched_rows},
          {"reference", round_to(c.reference_iops, 1)},
          {"model", round_to(c.model_iops, 1)},
          {"converged", c.converged},
          {"physical_range", range_json(c.param)},
          {"in_physical_range", in_range_json(c)},
          {"range_note", range_note(c.param, c.value_ns)}};
}

// The fitted costs of a source, for its summary line: "; fitted hv.exit_mmio
// = 5.71 us (within its physical range 2us..8us)"; a fit that missed its
// figure by more than 5% says NOT converged.
std::string fitted_summary(const PublishedSourceResult& sr) {
  std::string out;
  for (const Calibration& c : sr.calibrations)
    out += std::string(out.empty() ? "; fitted " : ", ") + c.param + " = " + fixed(c.value_ns / 1000, 2) + " us" +
           (c.converged ? "" : ", NOT converged") + " (" + range_note(c.param, c.value_ns) + ")";
  return out;
}

}  // namespace

void write_published_text(const std::string& file, const PublishedResult& result, std::ostream& out) {
  out << "nvmesim validate: " << file << ", " << result.sources.size() << " published source(s), " << result.points
      << " points\n";
  out << "band: IOPS and latency as ratios to the source's baseline row within +-25%; MMIO doorbell\n"
         "writes per I/O within +-0.15; * marks a point out of band; published / model\n";
  if (!result.fit_one.empty())
    out << "fitted: exactly one cost per source on its baseline rows' IOPS (--fit-one " << result.fit_one
        << (result.fit_one == "exit" ? ": hv.exit_ioeventfd where the baseline runs with ioeventfd, else hv.exit_mmio)\n"
                                     : ")\n");
  for (const PublishedSourceResult& sr : result.sources) {
    const PublishedSource& s = *sr.source;
    out << "\nsource " << s.id << ": " << (s.author.empty() ? "" : s.author + ", ") << "\"" << s.title << "\"";
    for (const std::string* part : {&s.list, &s.date}) if (!part->empty()) out << ", " << *part;
    if (!s.message_id.empty()) out << ", <" << s.message_id << ">";
    if (!s.commit.empty()) out << ", commit " << s.commit;
    out << "\n  setup: host " << (s.host_cpu.empty() ? "(not given)" : s.host_cpu) << ", accel " << s.accel
        << ", QEMU " << (s.qemu_version.empty() ? "(not given)" : s.qemu_version) << ", guest "
        << (s.guest_kernel.empty() ? "(not given)" : s.guest_kernel) << "\n";
    if (!s.assumed.empty()) out << "  not from the source (assumed): " << s.assumed << "\n";
    std::vector<std::string> command_line(sr.presets.begin() + (s.presets.empty() ? 0 : 1), sr.presets.end());
    out << "  presets: ";
    if (sr.presets.empty()) out << "(none: the platform's defaults)";
    if (!s.presets.empty()) out << s.presets << " (the source's)" << (command_line.empty() ? "" : ", then ");
    if (!command_line.empty()) out << joined(command_line, ", ") << " (command line)";
    out << "\n";
    if (sr.calibrations.empty()) out << "  calibrated: nothing\n";
    for (const Calibration& c : sr.calibrations)
      out << "  calibrated on " << c.matched_rows << " baseline row(s): " << c.param << " = " << fixed(c.value_ns, 1)
          << " ns (published " << fixed(c.reference_iops, 0)
          << (c.target == Calibration::Target::Iops ? " IOPS, model " : " ns latency p99 - p50, model ")
          << fixed(c.model_iops, 0) << (c.converged ? ")" : "; NOT converged)") << "; "
          << range_note(c.param, c.value_ns) << "\n";
    char line[512];
    std::snprintf(line, sizeof line, "  %-14s %-9s %5s %5s %5s %5s %5s %4s %9s %9s | %s\n", "row", "rw", "depth",
                  "dbbuf", "ioefd", "iothr", "poll", "base", "IOPS", "model", "points");
    out << line;
    for (const PublishedRowResult& r : sr.rows) {
      std::string points;
      for (const PublishedPoint& p : r.points)
        points += (points.empty() ? "" : "  ") + p.metric + " " + fixed(p.reference, 2) + " / " +
                  fixed(p.model, 2) + (p.in_band ? "" : "*");
      if (r.row.baseline) points += std::string(points.empty() ? "" : "  ") + "(IOPS fitted on)";
      std::snprintf(line, sizeof line, "  %-14s %-9s %5u %5s %5s %5s %5s %4s %9s %9s | %s\n",
                    r.row.label.substr(0, 14).c_str(), r.row.rw.c_str(), r.row.iodepth, r.row.dbbuf ? "on" : "off",
                    r.row.ioeventfd ? "on" : "off", r.row.iothread.empty() ? "-" : r.row.iothread.c_str(),
                    r.row.polling.empty() ? "-" : r.row.polling.c_str(), r.row.baseline ? "yes" : "",
                    fixed(r.row.iops, 0).c_str(), r.model.stalled ? "stall" : fixed(r.model.iops, 0).c_str(),
                    points.c_str());
      out << line;
    }
    out << "  " << share_line(sr.in_band, sr.points, sr.in_band_share()) << "\n";
  }
  out << "\n";
  for (const PublishedSourceResult& sr : result.sources)
    out << "source " << sr.source->id << ": " << share_line(sr.in_band, sr.points, sr.in_band_share())
        << fitted_summary(sr) << "\n";
  out << share_line(result.in_band, result.points, result.in_band_share()) << "\n";
}

void write_published_json(const std::string& file, const PublishedSetup& setup, const PublishedResult& result,
                          std::ostream& out) {
  J root;
  root["format"] = "published";
  root["file"] = file;
  root["presets"] = setup.presets;
  root["fit_one"] = setup.fit_one.empty() ? J(nullptr) : J(setup.fit_one);
  J sources = J::array();
  for (const PublishedSourceResult& sr : result.sources) {
    const PublishedSource& s = *sr.source;
    J src;
    src["source"] = s.id;
    src["citation"] = {{"title", s.title}, {"author", s.author},         {"list", s.list},
                       {"date", s.date},   {"message_id", s.message_id}, {"commit", s.commit}};
    src["setup"] = {{"host_cpu", s.host_cpu},
                    {"accel", s.accel},
                    {"qemu_version", s.qemu_version},
                    {"guest_kernel", s.guest_kernel},
                    {"assumed", s.assumed}};
    src["presets"] = sr.presets;
    J cal = J::array();
    for (const Calibration& c : sr.calibrations) cal.push_back(calibration_json(c));
    src["calibration"] = cal;
    J rows = J::array();
    for (const PublishedRowResult& r : sr.rows) {
      const PublishedRow& p = r.row;
      J row;
      row["line"] = p.line;
      row["label"] = p.label;
      row["baseline"] = p.baseline;
      row["config"] = {{"rw", p.rw},           {"bs", p.bs},           {"iodepth", p.iodepth},
                       {"numjobs", p.numjobs}, {"ioengine", p.ioengine}, {"dbbuf", p.dbbuf ? "on" : "off"},
                       {"ioeventfd", p.ioeventfd ? "on" : "off"},       {"irqfd", p.irqfd},
                       {"iothread", p.iothread}, {"polling", p.polling}};
      row["published"] = {{"iops", number_or_null(p.iops, 1)},
                          {"mmio_per_io", number_or_null(p.mmio_per_io, 4)},
                          {"sq_mmio_per_io", number_or_null(p.sq_mmio_per_io, 4)},
                          {"cq_mmio_per_io", number_or_null(p.cq_mmio_per_io, 4)},
                          {"lat_mean_ns", number_or_null(p.lat_mean_ns, 0)},
                          {"lat_p50_ns", number_or_null(p.lat_p50_ns, 0)},
                          {"lat_p99_ns", number_or_null(p.lat_p99_ns, 0)}};
      row["model"] = {{"iops", round_to(r.model.iops, 1)},
                      {"per_io.sq_mmio", round_to(r.model.sq_mmio, 4)},
                      {"per_io.cq_mmio", round_to(r.model.cq_mmio, 4)},
                      {"per_io.mmio", round_to(r.model.sq_mmio + r.model.cq_mmio, 4)},
                      {"lat_mean_ns", number_or_null(r.model.lat_mean_ns, 0)},
                      {"lat_p50_ns", number_or_null(r.model.lat_p50_ns, 0)},
                      {"lat_p99_ns", number_or_null(r.model.lat_p99_ns, 0)},
                      {"stalled", r.model.stalled}};
      J points = J::array();
      for (const PublishedPoint& pt : r.points)
        points.push_back({{"metric", pt.metric},
                          {"published", number_or_null(pt.reference, 4)},
                          {"model", number_or_null(pt.model, 4)},
                          {"in_band", pt.in_band}});
      row["points"] = points;
      rows.push_back(row);
    }
    src["rows"] = rows;
    src["points"] = sr.points;
    src["in_band"] = sr.in_band;
    src["in_band_share"] = round_to(sr.in_band_share(), 4);
    sources.push_back(src);
  }
  root["sources"] = sources;
  root["points"] = result.points;
  root["in_band"] = result.in_band;
  root["in_band_share"] = round_to(result.in_band_share(), 4);
  if (result.interrupted) root["interrupted"] = interrupt::signal_name(result.interrupted);
  out << root.dump(2) << "\n";
}

}  // namespace nvmesim::platform
