#include "platform/sweep_plot.h"
#include "platform/params.h"
#include "platform/results.h"
#include "platform/user_text.h"

#include <algorithm>
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

std::string gp_quote(const std::string& s) {  // gnuplot single quotes: '' is a quote
  std::string o = "'";
  for (char c : s) o += c == '\'' ? std::string("''") : std::string(1, c);
  return o + "'";
}

}  // namespace

PlotSpec parse_plot_arg(const std::string& arg) {
  PlotSpec p;
  size_t start = 0;
  for (;;) {
    const size_t comma = arg.find(',', start);
    const std::string item = arg.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const size_t eq = item.find('=');
    const std::string key = item.substr(0, eq), value = eq == std::string::npos ? "" : item.substr(eq + 1);
    if (eq == std::string::npos || value.empty())
      throw UsageError("--plot: " + quoted(item) + " is not key=value (keys y, x, series)");
    if (key == "y") p.y = value;
    else if (key == "x") p.x = value;
    else if (key == "series") p.series = value;
    else throw UsageError("--plot: unknown key " + quoted(key) + " (keys y, x, series)");
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (p.y.empty() || p.x.empty()) throw UsageError("--plot: needs y=METRIC and x=COLUMN, got " + quoted(arg));
  return p;
}

std::string plot_basename(const PlotSpec& spec) {
  std::string s = "plot-" + spec.y + "-vs-" + spec.x;
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
// (one vCPU, one device thread, host figures on), indexes blanked.
const std::vector<std::string>& known_metric_columns() {
  static const std::vector<std::string> names = [] {
    RunResults sample;
    sample.config = Config().effective();
    sample.vcpus.resize(1);
    sample.device_threads.resize(1);
    sample.has_host = true;
    std::ostringstream json;
    write_json(sample, json);
    std::vector<std::pair<std::string, std::string>> flat;
    flatten(parse_json(json.str()), "", flat);
    std::vector<std::string> out;
    for (const auto& kv : flat) out.push_back(without_indexes(kv.first));
    return out;
  }();
  return names;
}

}  // namespace

void check_plot_columns(const PlotSpec& spec, const std::vector<std::string>& axis_names) {
  const auto& known = known_metric_columns();
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
                                    const std::vector<Record>& records) {
  struct Row { std::string x, series; double y; };
  std::vector<Row> rows;
  for (const Record& r : records) {
    if (r.status != "ok") continue;
    std::vector<std::pair<std::string, std::string>> flat;
    flatten(r.results, "", flat);
    double y;
    std::string unit;
    const std::string ytext = column_value(spec.y, axis_names, r, flat);
    if (!split_number(ytext, y, unit) || !unit.empty()) continue;
    rows.push_back({column_value(spec.x, axis_names, r, flat),
                    spec.series.empty() ? "" : column_value(spec.series, axis_names, r, flat), y});
  }
  const std::string what = "--plot y=" + spec.y + ",x=" + spec.x;
  if (rows.empty()) throw std::runtime_error(what + ": no successful point has a number for " + spec.y);

  // Numeric x axis when every x is a number with the same unit.
  bool numeric = true;
  std::string x_unit;
  for (size_t k = 0; k < rows.size() && numeric; ++k) {
    double v;
    std::string unit;
    numeric = split_number(rows[k].x, v, unit) && (k == 0 || unit == x_unit);
    if (k == 0) x_unit = unit;
  }
  std::vector<std::string> series, categories;
  for (const Row& r : rows) {
    if (std::find(series.begin(), series.end(), r.series) == series.end()) series.push_back(r.series);
    if (std::find(categories.begin(), categories.end(), r.x) == categories.end()) categories.push_back(r.x);
  }

  const std::string base = dir + "/" + plot_basename(spec);
  std::string data;
  for (const std::string& s : series) {
    std::vector<std::pair<double, const Row*>> pts;
    for (const Row& r : rows) {
      if (r.series != s) continue;
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

  const std::string xlabel = spec.x + (numeric && !x_unit.empty() ? " (" + x_unit + ")" : "");
  std::string gp = "# Written by nvmesim sweep --plot; run: gnuplot " + plot_basename(spec) + ".gp\n";
  gp += "set datafile separator \"\\t\"\n";
  gp += "set title " + gp_quote(spec.y + " vs " + spec.x) + "\n";
  gp += "set xlabel " + gp_quote(xlabel) + "\nset ylabel " + gp_quote(spec.y) + "\n";
  gp += "set grid\nset key outside right top\n";
  if (!numeric) gp += "set xrange [-0.5:" + std::to_string(categories.size()) + "-0.5]\n";
  std::string plot = "plot ";
  for (size_t k = 0; k < series.size(); ++k) {
    const std::string title = spec.series.empty() ? spec.y : spec.series + "=" + series[k];
    plot += (k ? ", " : "") + gp_quote(base + ".dat") + " index " + std::to_string(k) + " using 1:2" +
            (numeric ? "" : ":xtic(3)") + " with linespoints title " + gp_quote(title);
  }
  gp += "set terminal svg size 800,500 noenhanced\nset output " + gp_quote(base + ".svg") + "\n" + plot + "\n";
  gp += "set terminal pngcairo size 800,500 noenhanced\nset output " + gp_quote(base + ".png") + "\n" + plot + "\n";
  gp += "unset output\n";
  write_file_atomic(base + ".gp", gp);

  const std::string log = base + ".log";
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
    const std::string script = base + ".gp";
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
  return {base + ".svg", base + ".png"};
}

}  // namespace nvmesim::platform::sweep
