#include "nvmesim/platform/validate/published_csv.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "nvmesim/platform/config/params.h"
#include "nvmesim/platform/config/user_text.h"
#include "nvmesim/platform/validate/csv_table.h"

namespace nvmesim::platform {

namespace {

const std::vector<const char*> kRequired = {"source", "title", "date", "accel", "rw", "bs", "iodepth",
                                            "numjobs", "dbbuf", "ioeventfd", "baseline", "iops"};
const std::vector<const char*> kOptional = {
    "author", "list", "message_id", "commit", "host_cpu", "qemu_version", "guest_kernel", "preset",
    "calibrate", "assumed", "ioengine", "direct", "irqfd", "iothread", "polling", "label",
    "mmio_per_io", "sq_mmio_per_io", "cq_mmio_per_io", "lat_mean_ns", "lat_p50_ns", "lat_p99_ns"};
// One value per source.
const std::vector<const char*> kPerSource = {"title", "author", "list", "date", "message_id", "commit",
                                             "host_cpu", "accel", "qemu_version", "guest_kernel",
                                             "preset", "calibrate", "assumed"};
const char* const kFigures[] = {"iops", "mmio_per_io", "sq_mmio_per_io", "cq_mmio_per_io",
                                "lat_mean_ns", "lat_p50_ns", "lat_p99_ns"};

std::string on_off_or_empty(const CsvCells& row, const char* column) {
  const std::string& t = row.cell(column);
  if (!t.empty() && t != "on" && t != "off") row.fail(column, quoted(t) + " is not one of on, off (or empty)");
  return t;
}

std::vector<std::string> words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

PublishedRow read_row(const CsvCells& row) {
  PublishedRow r;
  r.line = row.line;
  r.label = row.cell("label");
  static_cast<RunColumns&>(r) = read_run_columns(row);
  r.ioengine = row.cell("ioengine");
  r.direct = row.cell("direct");
  r.irqfd = on_off_or_empty(row, "irqfd");
  r.iothread = on_off_or_empty(row, "iothread");
  r.polling = on_off_or_empty(row, "polling");
  if (r.polling == "on" && r.iothread != "on")
    row.fail("polling", "on needs iothread=on (the queues are polled by an iothread)");
  const std::string& baseline = row.cell("baseline");
  if (baseline != "yes" && baseline != "no") row.fail("baseline", quoted(baseline) + " is not one of yes, no");
  r.baseline = baseline == "yes";
  r.iops = row.number("iops", r.baseline);  // a baseline's IOPS is what the fit meets
  r.mmio_per_io = row.number("mmio_per_io", false);
  r.sq_mmio_per_io = row.number("sq_mmio_per_io", false);
  r.cq_mmio_per_io = row.number("cq_mmio_per_io", false);
  r.lat_mean_ns = row.number("lat_mean_ns", false);
  r.lat_p50_ns = row.number("lat_p50_ns", false);
  r.lat_p99_ns = row.number("lat_p99_ns", false);
  // IOPS and latencies are judged as ratios to the baseline's: a 0 (given,
  // not left empty) can be neither a fit's target nor a ratio's base.
  for (const char* f : {"iops", "lat_mean_ns", "lat_p50_ns", "lat_p99_ns"})
    if (!row.cell(f).empty() && !(row.number(f, false) > 0))
      row.fail(f, "must be above 0 (a measured rate or time; leave it empty when not published)");
  bool any = false;
  for (const char* f : kFigures) any = any || !row.cell(f).empty();
  if (!any) row.fail_line("no figure (iops, mmio_per_io, sq_mmio_per_io, cq_mmio_per_io, lat_*_ns)");
  return r;
}

}  // namespace

std::string PublishedRow::description() const {
  std::string d = (label.empty() ? "" : label + " ") + "rw=" + rw + " bs=" + std::to_string(bs) +
                  " iodepth=" + std::to_string(iodepth) + " numjobs=" + std::to_string(numjobs) +
                  " dbbuf=" + (dbbuf ? "on" : "off") + " ioeventfd=" + (ioeventfd ? "on" : "off");
  if (!irqfd.empty()) d += " irqfd=" + irqfd;
  if (!iothread.empty()) d += " iothread=" + iothread;
  if (!polling.empty()) d += " polling=" + polling;
  return d;
}

const PublishedRow& PublishedSource::reference_baseline() const {
  for (const PublishedRow& r : rows)
    if (r.baseline) return r;
  throw ConfigError("source " + id + " has no baseline row");
}

bool is_published_header(const std::vector<std::string>& columns) {
  return std::find(columns.begin(), columns.end(), "source") != columns.end() &&
         std::find(columns.begin(), columns.end(), "baseline") != columns.end();
}

std::vector<PublishedSource> read_published_csv(const std::string& path) {
  std::vector<PublishedSource> sources;
  std::map<std::string, size_t> index;                           // source id -> sources[i]
  std::map<std::string, std::map<std::string, std::string>> seen;  // id -> per-source column -> value
  std::set<std::pair<std::string, std::string>> configurations;    // id, description
  read_csv_table(path, kRequired, kOptional, [&](const CsvCells& row) {
    const std::string& id = row.cell("source");
    if (id.empty()) row.fail("source", "is empty");
    auto [at, added] = index.emplace(id, sources.size());
    if (added) {
      PublishedSource s;
      s.id = id;
      s.line = row.line;
      s.title = row.cell("title");
      s.author = row.cell("author");
      s.list = row.cell("list");
      s.date = row.cell("date");
      s.message_id = row.cell("message_id");
      s.commit = row.cell("commit");
      s.host_cpu = row.cell("host_cpu");
      s.accel = row.cell("accel");
      s.qemu_version = row.cell("qemu_version");
      s.guest_kernel = row.cell("guest_kernel");
      s.presets = row.cell("preset");
      s.calibrate = words(row.cell("calibrate"));
      s.assumed = row.cell("assumed");
      if (s.title.empty()) row.fail("title", "is empty (the source's title)");
      if (s.date.empty()) row.fail("date", "is empty (the source's date)");
      if (s.accel.empty()) row.fail("accel", "is empty (kvm)");
      if (s.calibrate.size() > 2) row.fail("calibrate", "at most two costs");
      for (const char* c : kPerSource) seen[id][c] = row.cell(c);
      sources.push_back(std::move(s));
    } else {
      for (const char* c : kPerSource)
        if (row.cell(c) != seen[id][c])
          row.fail(c, quoted(row.cell(c)) + " differs from line " + std::to_string(sources[at->second].line) +
                          " of source " + id + " (one value per source)");
    }
    PublishedRow r = read_row(row);
    if (!configurations.emplace(id, r.description()).second)
      row.fail_line("source " + id + ": the row " + r.description() + " appears twice");
    sources[at->second].rows.push_back(std::move(r));
  });
  for (const PublishedSource& s : sources) {
    const auto first = std::find_if(s.rows.begin(), s.rows.end(), [](const PublishedRow& r) { return r.baseline; });
    if (first == s.rows.end())
      throw ConfigError(path + ": source " + s.id + " (line " + std::to_string(s.line) +
                        ") has no baseline row (column baseline)");
    // A latency is a ratio to the baseline's.
    for (const PublishedRow& r : s.rows) {
      const std::pair<const char*, double> latencies[] = {
          {"lat_mean_ns", r.lat_mean_ns}, {"lat_p50_ns", r.lat_p50_ns}, {"lat_p99_ns", r.lat_p99_ns}};
      const double baseline[] = {first->lat_mean_ns, first->lat_p50_ns, first->lat_p99_ns};
      for (size_t k = 0; k < 3; ++k)
        if (!std::isnan(latencies[k].second) && std::isnan(baseline[k]))
          throw ConfigError(path + " line " + std::to_string(r.line) + ": column " + latencies[k].first +
                            ": the baseline row (line " + std::to_string(first->line) +
                            ") gives none to take its ratio to");
    }
  }
  return sources;
}

}  // namespace nvmesim::platform
