#include "nvmesim/platform/sweep/sweep_plot.h"
#include "nvmesim/models/nvme/nvme_controller.h"
#include "nvmesim/models/virtio/virtio_blk_model.h"
#include "nvmesim/platform/config/params.h"
#include "nvmesim/platform/report/metric_labels.h"
#include "nvmesim/platform/report/results.h"
#include "nvmesim/platform/config/user_text.h"
#include "nvmesim/firmware/pcie/tlp.h"

#include <algorithm>
#include <cmath>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <iostream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <sys/wait.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

namespace nvmesim::platform::sweep {

namespace {

// The value of CSV column `name` for a record ("" when absent).
std::string column_value(const std::string& name, const std::vector<std::string>& axis_names,
                         const Record& r, const std::vector<std::pair<std::string, std::string>>& flat) {
  if (std::find(axis_names.begin(), axis_names.end(), name) != axis_names.end())
    for (const auto& [n, v] : r.point)
      if (n == name) return v;
  if (name == "seed") return std::to_string(r.seed);
  if (name == "status") return r.status;
  if (name == "error") return r.error;
  for (const auto& [k, v] : flat)
    if (k == name) return v;
  return "";
}

// "2000cyc" -> 2000 and "cyc"; false if it does not start with a number.
bool split_number(const std::string& s, double& value, std::string& unit) {
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  value = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || errno == ERANGE) return false;
  unit = end;
  return unit.find_first_of("0123456789") == std::string::npos;
}

}  // namespace

std::string gp_quote(const std::string& s) {  // gnuplot single quotes: '' is a quote
  std::string o = "'";
  for (char c : s) o += c == '\'' ? std::string("''") : std::string(1, c);
  return o + "'";
}

// gnuplot double quotes: backslash escapes, "\n" a new line (titles with a subtitle).
std::string gp_dquote(const std::string& s) {
  std::string o = "\"";
  for (char c : s) {
    if (c == '\n') o += "\\n";
    else if (c == '"' || c == '\\') o += std::string("\\") + c;
    else o += c;
  }
  return o + "\"";
}

PlotSpec parse_plot_arg(const std::string& arg) {
  PlotSpec p;
  size_t start = 0;
  if (arg == "cdf" || arg.rfind("cdf,", 0) == 0) {
    p.cdf = true;
    for (start = 4; start < arg.size() + 1 && arg.size() > 3;) {
      const size_t comma = arg.find(',', start);
      const std::string item = arg.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      if (item.rfind("series=", 0) != 0 || item.size() == 7)
        throw UsageError("--plot: cdf takes only series=COLUMN, got " + quoted(item));
      p.series = item.substr(7);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    return p;
  }
  for (;;) {
    const size_t comma = arg.find(',', start);
    const std::string item = arg.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const size_t eq = item.find('=');
    const std::string key = item.substr(0, eq), value = eq == std::string::npos ? "" : item.substr(eq + 1);
    if (eq == std::string::npos || value.empty())
      throw UsageError("--plot: " + quoted(item) + " is not key=value (keys y, x, series, logx)");
    if (key == "y") p.y = value;
    else if (key == "x") p.x = value;
    else if (key == "series") p.series = value;
    else if (key == "logx") {
      if (value != "auto" && value != "on" && value != "off")
        throw UsageError("--plot: logx=" + quoted(value) + " is not one of auto, on, off");
      p.logx = value;
    } else throw UsageError("--plot: unknown key " + quoted(key) + " (keys y, x, series, logx)");
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (p.y.empty() || p.x.empty()) throw UsageError("--plot: needs y=METRIC and x=COLUMN, got " + quoted(arg));
  return p;
}

std::string plot_basename(const PlotSpec& spec) {
  std::string s = spec.cdf ? "plot-lat-cdf" + (spec.series.empty() ? "" : "-by-" + spec.series)
                           : "plot-" + spec.y + "-vs-" + spec.x;
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') c = '_';
  return s;
}

namespace {

// "utilization.vcpu.3.busy" -> "utilization.vcpu.#.busy": array indexes
// depend on numjobs, so names are compared with them blanked.
std::string without_indexes(const std::string& name) {
  std::string out;
  size_t start = 0;
  for (;;) {
    const size_t dot = name.find('.', start);
    const std::string part = name.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    const bool index = !part.empty() && part.find_first_not_of("0123456789") == std::string::npos &&
                       start > 0 && out.rfind("lat_ns.percentile", 0) != 0;
    out += (start ? "." : "") + (index ? std::string("#") : part);
    if (dot == std::string::npos) return out;
    start = dot + 1;
  }
}

// The metric columns a run's JSON can have: those of a sample run's JSON
// (one vCPU, one device thread, host figures on, a PCIe link with the
// purposes of both devices), indexes blanked. Its "stats" stay an empty
// object, as a run's tree is not known before it runs.
const std::vector<std::string>& known_metric_columns() {
  static const std::vector<std::string> names = [] {
    RunResults sample;
    sample.config = Config().effective();
    sample.vcpus.resize(1);
    sample.host_threads = {"mainloop"};
    sample.has_host = true;
    // pcie.mode=link: the device's "pcie" group, with every purpose.
    std::vector<std::string> purposes = models::NvmeControllerModel::link_purposes();
    for (const auto& v : models::VirtioBlkModel::link_purposes())
      if (std::find(purposes.begin(), purposes.end(), v) == purposes.end()) purposes.push_back(v);
    stats::GroupValues pcie;
    pcie.name = "pcie";
    for (const char* name : {"upstream_busy", "downstream_busy", "upstream_queueing", "downstream_queueing",
                             "read_round_trips", "read_time"})
      pcie.stats.push_back({name, stats::Unit::Count, "", {{"", 0}}});
    stats::GroupValues tlp;
    tlp.name = "tlp";
    for (const char* name : {"tlps", "wire_bytes"}) {
      stats::StatValue v{name, stats::Unit::Count, "", {}};
      for (const auto& purpose : purposes)
        for (unsigned k = 0; k < fw::pcie::kTlpKinds; ++k)
          v.entries.emplace_back(purpose + "_" + fw::pcie::tlp_kind_name(fw::pcie::TlpKind(k)), 0);
      tlp.stats.push_back(v);
    }
    pcie.groups.push_back(tlp);
    stats::GroupValues nvme;
    nvme.name = "nvme";
    nvme.groups.push_back(pcie);
    sample.stats.groups.push_back(nvme);
    report::Json doc = results_json(sample);
    doc["stats"] = report::stats_json(stats::GroupValues{});
    std::vector<std::pair<std::string, std::string>> flat;
    flatten(parse_json(report::dump(doc)), "", flat);
    std::vector<std::string> out;
    for (const auto& kv : flat) out.push_back(without_indexes(kv.first));
    return out;
  }();
  return names;
}

}  // namespace

void check_plot_columns(const PlotSpec& spec, const std::vector<std::string>& axis_names) {
  const auto& known = known_metric_columns();
  if (spec.cdf) {  // curves per series value: a grid axis
    if (!spec.series.empty() && std::find(axis_names.begin(), axis_names.end(), spec.series) == axis_names.end())
      throw UsageError("--plot: cdf,series=" + shown(spec.series) + " is not a grid axis");
    return;
  }
  for (const auto& [key, name] : {std::pair{"y", &spec.y}, std::pair{"x", &spec.x}, std::pair{"series", &spec.series}}) {
    if (name->empty() && std::string(key) == "series") continue;
    const bool found = std::find(axis_names.begin(), axis_names.end(), *name) != axis_names.end() ||
                       *name == "seed" || *name == "status" || *name == "error" ||
                       std::find(known.begin(), known.end(), without_indexes(*name)) != known.end();
    if (!found)
      throw UsageError("--plot: " + std::string(key) + "=" + shown(*name) +
                       " is not a column of the results (a grid parameter, seed, or a run's JSON "
                       "key such as iops, per_io.exits, lat_ns.mean, config.bs)");
  }
}

std::vector<std::string> write_plot(const std::string& dir, const PlotSpec& spec,
                                    const std::vector<std::string>& axis_names,
                                    const std::vector<Record>& records, const std::vector<std::string>& fixed) {
  if (spec.cdf) return write_cdf_plot(dir, spec, axis_names, records, fixed);
  // Grid axes other than x and series: one panel per combination of their
  // values (an axis with one value goes to the subtitle instead).
  std::vector<std::string> others;
  for (const std::string& a : axis_names)
    if (a != spec.x && a != spec.series) others.push_back(a);
  struct Row { std::string x, series, panel; double y; };
  std::vector<Row> rows;
  for (const Record& r : records) {
    if (r.status != "ok") continue;
    std::vector<std::pair<std::string, std::string>> flat;
    flatten(r.results, "", flat);
    double y;
    std::string unit;
    const std::string ytext = column_value(spec.y, axis_names, r, flat);
    if (!split_number(ytext, y, unit) || !unit.empty()) continue;
    Row row{column_value(spec.x, axis_names, r, flat),
            spec.series.empty() ? "" : column_value(spec.series, axis_names, r, flat), "", y};
    rows.push_back(row);
  }
  const std::string what = "--plot y=" + spec.y + ",x=" + spec.x;
  if (rows.empty()) throw std::runtime_error(what + ": no successful point has a number for " + spec.y);
  // Which other axes vary among the drawn points.
  std::vector<std::string> varying, constant;
  {
    size_t k = 0;
    std::vector<std::vector<std::string>> values(others.size());
    for (const Record& r : records) {
      if (r.status != "ok") continue;
      for (size_t a = 0; a < others.size(); ++a)
        for (const auto& [n, v] : r.point)
          if (n == others[a] && std::find(values[a].begin(), values[a].end(), v) == values[a].end())
            values[a].push_back(v);
    }
    for (size_t a = 0; a < others.size(); ++a)
      (values[a].size() > 1 ? varying : constant).push_back(others[a] + "=" + (values[a].empty() ? "" : values[a][0]));
    // Panel of each drawn row, in record order.
    for (const Record& r : records) {
      if (r.status != "ok") continue;
      std::vector<std::pair<std::string, std::string>> flat;
      flatten(r.results, "", flat);
      double y;
      std::string unit;
      if (!split_number(column_value(spec.y, axis_names, r, flat), y, unit) || !unit.empty()) continue;
      std::string panel;
      for (const std::string& a : others)
        for (const std::string& v : varying)
          if (v.rfind(a + "=", 0) == 0)
            for (const auto& [n, val] : r.point)
              if (n == a) panel += (panel.empty() ? "" : ", ") + a + "=" + val;
      rows[k++].panel = panel;
    }
  }
  std::vector<std::string> panels;
  for (const Row& r : rows)
    if (std::find(panels.begin(), panels.end(), r.panel) == panels.end()) panels.push_back(r.panel);
  constexpr size_t kMaxPanels = 12;
  if (panels.size() > kMaxPanels)
    throw std::runtime_error(what + ": the other grid axes give " + std::to_string(panels.size()) +
                             " panels (at most " + std::to_string(kMaxPanels) +
                             "): put one of them in series= or plot a smaller grid");

  // Numeric x axis when every x is a number with the same unit.
  bool numeric = true;
  std::string x_unit;
  for (size_t k = 0; k < rows.size() && numeric; ++k) {
    double v;
    std::string unit;
    numeric = split_number(rows[k].x, v, unit) && (k == 0 || unit == x_unit);
    if (k == 0) x_unit = unit;
  }
  // Log x when the values are powers of two spanning at least 1..8 (iodepth
  // 1, 4, 16, 64), or when asked.
  bool logx = false;
  if (numeric && spec.logx != "off") {
    double lo = 0, hi = 0;
    bool powers = true;
    for (size_t k = 0; k < rows.size(); ++k) {
      double v;
      std::string unit;
      split_number(rows[k].x, v, unit);
      if (!(v > 0)) powers = false;
      else {
        int exp = 0;
        powers = powers && std::frexp(v, &exp) == 0.5;
        lo = k ? std::min(lo, v) : v;
        hi = k ? std::max(hi, v) : v;
      }
    }
    logx = spec.logx == "on" ? lo > 0 : powers && hi >= 8 * lo;
    if (spec.logx == "on" && !(lo > 0))
      throw std::runtime_error(what + ": logx=on needs x values above 0");
  } else if (!numeric && spec.logx == "on") {
    throw std::runtime_error(what + ": logx=on needs numeric x values");
  }
  std::vector<std::string> series, categories;
  double ymin = rows[0].y, ymax = rows[0].y;
  for (const Row& r : rows) {
    if (std::find(series.begin(), series.end(), r.series) == series.end()) series.push_back(r.series);
    if (std::find(categories.begin(), categories.end(), r.x) == categories.end()) categories.push_back(r.x);
    ymin = std::min(ymin, r.y);
    ymax = std::max(ymax, r.y);
  }
  // Pad the y range so that a series on the border (1.0 with the doorbell
  // buffer off) is drawn inside the frame.
  const double pad = ymax > ymin ? 0.06 * (ymax - ymin) : (ymax != 0 ? 0.06 * std::fabs(ymax) : 1.0);

  const std::string base = dir + "/" + plot_basename(spec);
  std::string data;
  for (const std::string& panel : panels)
    for (const std::string& s : series) {
      std::vector<std::pair<double, const Row*>> pts;
      for (const Row& r : rows) {
        if (r.series != s || r.panel != panel) continue;
        double x;
        std::string unit;
        if (numeric) split_number(r.x, x, unit);
        else x = double(std::find(categories.begin(), categories.end(), r.x) - categories.begin());
        pts.emplace_back(x, &r);
      }
      std::stable_sort(pts.begin(), pts.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      char buf[128];
      for (const auto& [x, r] : pts) {
        std::snprintf(buf, sizeof buf, "%.17g\t%.17g\t", x, r->y);
        data += buf + r->x + "\n";
      }
      data += "\n\n";  // gnuplot: a new data set (index)
    }
  write_file_atomic(base + ".dat", data);

  const MetricLabel ylab = metric_label(spec.y), xlab = metric_label(spec.x);
  auto axis_label = [](const MetricLabel& l, const std::string& unit) {
    return unit.empty() ? l.label : l.label + " [" + unit + "]";
  };
  const std::string xlabel = axis_label(xlab, numeric && !x_unit.empty() ? x_unit : xlab.unit);
  const std::string ylabel = axis_label(ylab, ylab.unit);
  // Subtitle: what every point of the plot shares.
  std::string subtitle;
  for (const std::string& c : constant) subtitle += (subtitle.empty() ? "" : "  ") + c;
  for (const std::string& f : fixed) subtitle += (subtitle.empty() ? "" : "  ") + f;
  if (subtitle.size() > 110) subtitle = subtitle.substr(0, 107) + "...";
  const std::string title = ylab.label + (ylab.label != spec.y ? " (" + spec.y + ")" : "") + " vs " +
                            xlab.label + (xlab.label != spec.x ? " (" + spec.x + ")" : "");

  std::string gp = "# Written by nvmesim sweep --plot; run: gnuplot " + plot_basename(spec) + ".gp\n";
  gp += "set datafile separator \"\\t\"\n";
  gp += "set xlabel " + gp_quote(xlabel) + "\nset ylabel " + gp_quote(ylabel) + "\n";
  gp += "set grid\nset pointsize 1.2\n";
  gp += panels.size() > 1 ? "set key below horizontal\n" : "set key outside right top\n";
  char yr[96];
  std::snprintf(yr, sizeof yr, "set yrange [%.17g:%.17g]\n", ymin - pad, ymax + pad);
  gp += yr;
  if (logx) {
    // Ticks at the grid's values only (1 4 16 64, not every power between).
    std::vector<double> xs;
    for (const Row& r : rows) {
      double v;
      std::string unit;
      split_number(r.x, v, unit);
      if (std::find(xs.begin(), xs.end(), v) == xs.end()) xs.push_back(v);
    }
    std::sort(xs.begin(), xs.end());
    gp += "set logscale x 2\nset offsets graph 0.05, graph 0.05, 0, 0\n";
    if (xs.size() <= 12) {
      std::string tics;
      char b[40];
      for (double v : xs) {
        std::snprintf(b, sizeof b, "%s%.17g", tics.empty() ? "" : ", ", v);
        tics += b;
      }
      gp += "set xtics (" + tics + ")\n";
    }
  }
  if (!numeric) gp += "set xrange [-0.5:" + std::to_string(categories.size()) + "-0.5]\n";
  const size_t cols = panels.size() <= 1 ? 1 : panels.size() <= 4 ? 2 : 3;
  const size_t lines = (panels.size() + cols - 1) / cols;
  std::string body;
  if (panels.size() > 1) {
    body += "set multiplot layout " + std::to_string(lines) + "," + std::to_string(cols) + " title " +
            gp_dquote(title + (subtitle.empty() ? "" : "\n" + subtitle)) + "\n";
  } else {
    body += "set title " + gp_dquote(title + (subtitle.empty() ? "" : "\n" + subtitle)) + "\n";
  }
  size_t index = 0;
  for (size_t p = 0; p < panels.size(); ++p) {
    if (panels.size() > 1) body += "set title " + gp_quote(panels[p]) + "\n";
    std::string plot = "plot ";
    for (size_t k = 0; k < series.size(); ++k, ++index) {
      const std::string t = spec.series.empty() ? ylab.label : spec.series + "=" + series[k];
      plot += (k ? ", " : "") + gp_quote(base + ".dat") + " index " + std::to_string(index) + " using 1:2" +
              (numeric ? "" : ":xtic(3)") + " with linespoints lw 2 title " + gp_quote(t);
    }
    body += plot + "\n";
  }
  return render_plot(base, gp, body, panels.size(), what);
}

std::vector<std::string> render_plot(const std::string& base, std::string gp, std::string body, size_t panels,
                                     const std::string& what) {
  const size_t cols = panels <= 1 ? 1 : panels <= 4 ? 2 : 3, lines = (panels + cols - 1) / cols;
  if (panels > 1) body += "unset multiplot\n";
  const std::string size =
      panels > 1 ? std::to_string(560 * cols) + "," + std::to_string(400 * lines + 80) : std::string("900,560");
  gp += "set terminal svg size " + size + " noenhanced\nset output " + gp_quote(base + ".svg") + "\n" + body;
  gp += "set terminal pngcairo size " + size + " noenhanced\nset output " + gp_quote(base + ".png") + "\n" + body;
  gp += "unset output\n";
  write_file_atomic(base + ".gp", gp);
  run_gnuplot(base + ".gp", base + ".log", what);
  return {base + ".svg", base + ".png"};
}

void run_gnuplot(const std::string& script, const std::string& log, const std::string& what) {
  std::cout.flush();
  std::cerr.flush();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(what + ": fork failed");
  if (pid == 0) {
    const int in = ::open("/dev/null", O_RDONLY);
    const int fe = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (in < 0 || fe < 0) _exit(126);
    ::dup2(in, 0);
    ::dup2(fe, 1);
    ::dup2(fe, 2);
    ::execlp("gnuplot", "gnuplot", script.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  std::string log_text;
  read_file(log, log_text);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
    throw std::runtime_error(what + ": gnuplot not found (apt-get install gnuplot-nox)");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error(what + ": gnuplot failed: " + first_line(log_text));
}

}  // namespace nvmesim::platform::sweep
