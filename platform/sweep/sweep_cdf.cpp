// `nvmesim sweep --plot cdf`: latency distributions as CDFs (sweep_plot.h).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <stdexcept>

#include "nvmesim/platform/sweep/sweep_json.h"
#include "nvmesim/platform/sweep/sweep_plot.h"

namespace nvmesim::platform::sweep {

namespace {

// One curve: fio's lat (submission to completion) of one point as
// (latency in us, cumulative fraction): min at 0, each percentile p at
// p/100, max at 1. false when the run has no latency.
bool cdf_points(const Json& results, std::vector<std::pair<double, double>>& out) {
  out.clear();
  const Json* lat = results.find("lat_ns");
  const Json* min = lat ? lat->find("min") : nullptr;
  const Json* max = lat ? lat->find("max") : nullptr;
  const Json* percentile = lat ? lat->find("percentile") : nullptr;
  if (!min || !max || !percentile || min->kind != Json::Number || max->kind != Json::Number) return false;
  out.emplace_back(std::stod(min->text) / 1000.0, 0.0);
  std::vector<std::pair<double, double>> pcts;
  for (const auto& [key, value] : percentile->fields)
    if (value.kind == Json::Number) pcts.emplace_back(std::stod(key) / 100.0, std::stod(value.text) / 1000.0);
  std::sort(pcts.begin(), pcts.end());  // by percentile
  for (const auto& [p, us] : pcts) out.emplace_back(us, p);
  out.emplace_back(std::stod(max->text) / 1000.0, 1.0);
  return out.front().first > 0;
}

}  // namespace

std::vector<std::string> write_cdf_plot(const std::string& dir, const PlotSpec& spec,
                                        const std::vector<std::string>& axis_names,
                                        const std::vector<Record>& records, const std::vector<std::string>& fixed) {
  const std::string what = "--plot cdf" + (spec.series.empty() ? "" : ",series=" + spec.series);
  // The axes whose values differ among the ok points.
  std::vector<std::string> varying;
  std::vector<std::string> constant;
  for (const std::string& a : axis_names) {
    std::vector<std::string> values;
    for (const Record& r : records)
      if (r.status == "ok")
        for (const auto& [n, v] : r.point)
          if (n == a && std::find(values.begin(), values.end(), v) == values.end()) values.push_back(v);
    if (values.size() > 1) varying.push_back(a);
    else if (values.size() == 1) constant.push_back(a + "=" + values[0]);
  }
  // A panel per combination of the varying axes but series (one panel
  // without series), a curve per point in it, labelled by the rest.
  struct Curve {
    std::string panel, label;
    std::vector<std::pair<double, double>> points;
  };
  std::vector<Curve> curves;
  std::vector<std::string> panels;
  for (const Record& r : records) {
    if (r.status != "ok") continue;
    Curve c;
    if (!cdf_points(r.results, c.points)) continue;
    for (const std::string& a : varying)
      for (const auto& [n, v] : r.point) {
        if (n != a) continue;
        std::string& part = spec.series.empty() || a == spec.series ? c.label : c.panel;
        part += (part.empty() ? "" : ", ") + a + "=" + v;
      }
    if (c.label.empty()) c.label = "lat";
    if (std::find(panels.begin(), panels.end(), c.panel) == panels.end()) panels.push_back(c.panel);
    curves.push_back(std::move(c));
  }
  if (curves.empty()) throw std::runtime_error(what + ": no successful point has a latency distribution");
  constexpr size_t kMaxPanels = 12, kMaxCurves = 16;
  if (panels.size() > kMaxPanels)
    throw std::runtime_error(what + ": the grid gives " + std::to_string(panels.size()) + " panels (at most " +
                             std::to_string(kMaxPanels) + "): plot a smaller grid");
  for (const std::string& panel : panels)
    if (std::count_if(curves.begin(), curves.end(), [&](const Curve& c) { return c.panel == panel; }) >
        long(kMaxCurves))
      throw std::runtime_error(what + ": more than " + std::to_string(kMaxCurves) +
                               " curves in one plot: give series=AXIS (a panel per value of the others)");

  const std::string base = dir + "/" + plot_basename(spec);
  std::string data;
  std::vector<std::vector<size_t>> index_of(panels.size());
  size_t index = 0;
  for (size_t p = 0; p < panels.size(); ++p)
    for (const Curve& c : curves) {
      if (c.panel != panels[p]) continue;
      char buf[96];
      for (const auto& [us, frac] : c.points) {
        std::snprintf(buf, sizeof buf, "%.17g\t%.17g\n", us, frac);
        data += buf;
      }
      data += "\n\n";  // gnuplot: a new data set (index)
      index_of[p].push_back(index++);
    }
  write_file_atomic(base + ".dat", data);

  std::string subtitle;
  for (const std::string& c : constant) subtitle += (subtitle.empty() ? "" : "  ") + c;
  for (const std::string& f : fixed) subtitle += (subtitle.empty() ? "" : "  ") + f;
  if (subtitle.size() > 110) subtitle = subtitle.substr(0, 107) + "...";
  const std::string title = "latency distribution (fio's lat: min, percentiles 1..99.99, max)";
  std::string gp = "# Written by nvmesim sweep --plot cdf; run: gnuplot " + plot_basename(spec) + ".gp\n";
  gp += "set datafile separator \"\\t\"\n";
  gp += "set xlabel 'latency [us]'\nset ylabel 'fraction of I/Os at or below'\n";
  gp += "set logscale x 10\nset yrange [0:1.02]\nset grid\n";
  gp += "set key top left\n";  // a CDF rises to the right: the top left stays empty
  const size_t cols = panels.size() <= 1 ? 1 : panels.size() <= 4 ? 2 : 3;
  const size_t lines = (panels.size() + cols - 1) / cols;
  std::string body = panels.size() > 1
                         ? "set multiplot layout " + std::to_string(lines) + "," + std::to_string(cols) + " title " +
                               gp_dquote(title + (subtitle.empty() ? "" : "\n" + subtitle)) + "\n"
                         : "set title " + gp_dquote(title + (subtitle.empty() ? "" : "\n" + subtitle)) + "\n";
  for (size_t p = 0; p < panels.size(); ++p) {
    if (panels.size() > 1) body += "set title " + gp_quote(panels[p]) + "\n";
    std::string plot = "plot ";
    size_t k = 0;
    for (const Curve& c : curves) {
      if (c.panel != panels[p]) continue;
      plot += (k ? ", " : "") + gp_quote(base + ".dat") + " index " + std::to_string(index_of[p][k]) +
              " using 1:2 with linespoints lw 2 pt 7 ps 0.6 title " + gp_quote(c.label);
      ++k;
    }
    body += plot + "\n";
  }
  return render_plot(base, gp, body, panels.size(), what);
}

}  // namespace nvmesim::platform::sweep
