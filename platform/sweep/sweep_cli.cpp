#include "nvmesim/platform/sweep/sweep_cli.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

#include "nvmesim/platform/cli/cli.h"
#include "nvmesim/platform/cli/options.h"
#include "nvmesim/platform/sweep/sweep_emit.h"
#include "nvmesim/platform/sweep/sweep_grid.h"
#include "nvmesim/platform/sweep/sweep_merge.h"
#include "nvmesim/platform/sweep/sweep_output.h"
#include "nvmesim/platform/sweep/sweep_plot.h"
#include "nvmesim/platform/cli/interrupt.h"
#include "nvmesim/platform/config/input_file.h"
#include "nvmesim/platform/config/param_requires.h"
#include "nvmesim/platform/config/system_params.h"
#include "nvmesim/platform/sweep/sweep_runner.h"
#include "nvmesim/platform/config/user_text.h"

namespace nvmesim::platform {

using namespace sweep;

std::string sweep_help_text() {
  return "Usage:\n"
         "  nvmesim sweep --grid NAME=V1,V2,... [--grid NAME=START:STOP:STEP]... --out DIR\n"
         "                [--sweep-file FILE] [--jobs N] [--seed S] [--resume]\n"
         "                [--plot y=METRIC,x=COLUMN[,series=COLUMN]]... [--emit slurm|parallel]\n"
         "                [nvmesim options fixed for every point...]\n"
         "  nvmesim sweep --merge DIR [DIR...] --out DIR [--grid ...] [--seed S] [--plot ...]\n"
         "\n"
         "Runs every point of the grid (all combinations of the --grid values; the\n"
         "first axis is the outermost loop) as its own nvmesim process with the fixed\n"
         "options, --NAME=VALUE per axis, --output-format=json, --single-run and the\n"
         "point's seed. --output, --vcd and --timeline are refused (every point would\n"
         "write the one file): results go to --out DIR, traces come from one point's run.\n"
         "--repeat is refused too: a point is one seed; sweep seeds with --grid seed=...\n"
         "\n"
         "  --grid NAME=...      a parameter (see --list-params) and its values: a list,\n"
         "                       or START:STOP:STEP with one unit (2000cyc:10000cyc:2000cyc)\n"
         "  --sweep-file FILE    axes, one per line (NAME = VALUES); lines starting with\n"
         "                       '--' are fixed options; '#' starts a comment\n"
         "  --out DIR            results.csv, results.jsonl, sweep.json, points/<id>.*\n"
         "  --jobs N             parallel points (default: all cores)\n"
         "  --seed S             sweep seed (default 1); point seed = FNV-1a 64 of\n"
         "                       \"S\\nNAME=VALUE\\n...\" (axes in order) >> 1\n"
         "  --resume             keep the points already in DIR with status ok (the others\n"
         "                       run again); refused when DIR's sweep had other fixed options\n"
         "  --plot y=..,x=..[,series=..][,logx=auto|on|off]  DIR/plot-<y>-vs-<x>.svg and\n"
         "                       .png (gnuplot): labels and units from docs/metrics.md, log2 x\n"
         "                       for powers of two (auto), a panel per further grid axis\n"
         "  --plot cdf[,series=AXIS]  DIR/plot-lat-cdf[-by-AXIS].svg and .png: each point's\n"
         "                       fio lat (min, percentiles 1..99.99, max) as a CDF over a log\n"
         "                       latency axis; with series a curve per value of AXIS and a\n"
         "                       panel per combination of the other varying axes\n"
         "  --emit slurm         write DIR/sweep.slurm (sbatch array) and DIR/points.txt\n"
         "  --emit parallel      write DIR/parallel.txt (parallel --will-cite < it)\n"
         "  --merge DIR          join the results of sweeps or emitted jobs into --out\n"
         "                       (refused when their fixed options differ)\n"
         "\n"
         "CSV columns: the axes, seed, status (ok, failed, missing, or the run's outcome\n"
         "when it ended otherwise: stalled, io_errors, ...; error: its headline), error, then every\n"
         "value of the run's JSON with dotted names (per_io.exits, config.iodepth, ...).\n"
         "A parameter is swept by one axis and not also fixed (in any spelling).\n"
         "Exit status: 0 all points ok, 1 a point failed, 2 usage error (also a bad\n"
         "sweep.json), 128+N interrupted by signal N (130 SIGINT, 143 SIGTERM, 129 SIGHUP;\n"
         "the finished points are kept for --resume).\n";
}

namespace {

// --out DIR (or a folder in it): a file there, or a folder that cannot be
// made, is the user's to fix (exit 2), found before any point runs.
void make_out_dir(const std::string& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) == 0 && !S_ISDIR(st.st_mode))
    throw UsageError("--out: " + quoted(dir) + " is not a directory");
  try {
    make_dirs(dir);
  } catch (const std::runtime_error& e) {
    throw UsageError(std::string("--out: ") + e.what());
  }
}

struct Args {
  std::vector<Axis> axes;
  std::vector<std::string> fixed, merge, emit;
  std::vector<PlotSpec> plots;
  std::string out;
  unsigned jobs = 0;
  uint64_t seed = 1;
  bool seed_given = false, resume = false, help = false;
};

// "--output" as typed ("--output=x" -> "--output").
std::string option_name(const cli::po::option& o) {
  std::string t = o.original_tokens.empty() ? o.string_key : o.original_tokens.front();
  if (const size_t eq = t.find('='); eq != std::string::npos) t.erase(eq);
  return t;
}

uint64_t parse_uint(const std::string& option, const std::string& v, uint64_t max) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long n = std::strtoull(v.c_str(), &end, 10);
  if (v.empty() || *end || v[0] == '-' || errno == ERANGE || n > max)
    throw UsageError(option + ": " + quoted(v) + " is not an integer in 0.." + std::to_string(max));
  return n;
}

Args parse(int argc, const char* const* argv) {
  namespace po = cli::po;
  po::options_description desc;
  desc.add_options()("help,h", "")("resume", "")("grid", po::value<std::string>(), "")(
      "sweep-file", po::value<std::string>(), "")("out", po::value<std::string>(), "")(
      "jobs", po::value<std::string>(), "")("seed", po::value<std::string>(), "")(
      "plot", po::value<std::string>(), "")("emit", po::value<std::string>(), "")(
      "merge", po::value<std::vector<std::string>>()->multitoken(), "")(
      "word", po::value<std::vector<std::string>>(), "");
  cli::ParseRules rules;
  rules.positional = "word";
  rules.keep_unknown = true;  // every other option is fixed for each point's run
  std::vector<po::option> options;
  try {
    options = cli::parse_options(argc, argv, desc, rules);
  } catch (const cli::UsageError& e) {
    throw UsageError(e.what());
  }
  Args a;
  // The options in command-line order: axes from --grid and --sweep-file keep
  // their order, and the fixed options theirs.
  for (const po::option& o : options) {
    const std::string& name = o.string_key;
    if (o.unregistered || name == "word") {
      if (o.unregistered && (name == "output" || name == "output-format" || name == "--output" ||
                             name == "--output-format"))
        throw UsageError(option_name(o) + ": the sweep sets it (results go to --out DIR)");
      // Every point would write the one file (and the last one finishing win).
      if (o.unregistered && (name == "vcd" || name == "timeline" || name == "--vcd" || name == "--timeline"))
        throw UsageError(option_name(o) + ": every point would write this one file; trace one point with "
                         "nvmesim " + option_name(o) + " FILE and that point's options");
      for (const std::string& t : o.original_tokens) a.fixed.push_back(t);
      continue;
    }
    const std::string value = cli::value_of(o);
    if (name != "help" && name != "resume" && name != "merge" && value.empty())
      throw UsageError("--" + name + ": empty value");
    if (name == "help") a.help = true;
    else if (name == "resume") a.resume = true;
    else if (name == "grid") a.axes.push_back(parse_grid_arg(value));
    else if (name == "sweep-file") load_sweep_file(value, a.axes, a.fixed);
    else if (name == "out") a.out = value;
    else if (name == "jobs") {
      a.jobs = unsigned(parse_uint("--jobs", value, 4096));
      if (!a.jobs) throw UsageError("--jobs: must be at least 1");
    } else if (name == "seed") {
      a.seed = parse_uint("--seed", value, uint64_t(INT64_MAX));
      a.seed_given = true;
    } else if (name == "plot") a.plots.push_back(parse_plot_arg(value));
    else if (name == "emit") {
      if (value != "slurm" && value != "parallel")
        throw UsageError("--emit: " + quoted(value) + " is not one of slurm, parallel");
      a.emit.push_back(value);
    } else if (name == "merge") {
      if (o.value.empty()) throw UsageError("--merge: missing value");
      for (const std::string& dir : o.value) {
        if (dir.empty()) throw UsageError("--merge: empty value");
        a.merge.push_back(dir);
      }
    }
  }
  return a;
}

// The fixed options must make a valid run on their own.
void check_fixed(const std::vector<std::string>& fixed) {
  // A point is one run of one seed (its own); seeds are an axis (--grid
  // seed=1,2,3), whose rows the CSV keeps apart.
  for (const std::string& f : fixed)
    if (f == "--repeat" || f.rfind("--repeat=", 0) == 0 || f.rfind("--repeat ", 0) == 0)
      throw UsageError("--repeat: a sweep runs each point once with its own seed; sweep seed values as an axis "
                       "(--grid seed=1,2,3)");
  std::vector<const char*> argv{"nvmesim", "--single-run"};  // as every point runs
  for (const std::string& f : fixed) argv.push_back(f.c_str());
  const CliResult r = parse_command_line(int(argv.size()), argv.data());
  if (r.action == CliResult::Error) throw UsageError(r.message);
  if (r.action != CliResult::Run)
    throw UsageError(quoted(fixed.front()) + " is not an option of a run (see nvmesim sweep --help)");
}

// A signal before any point ran: nothing to keep, exit 128 + the signal.
struct Interrupted : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Every point's values with the fixed options must make a valid run, checked
// before the first point runs, without simulating: the fixed options'
// configuration with the point's values set, then the cross-field checks
// (as parse_command_line does; it is called per point only with --job,
// whose sections each take the values). The first bad point is named.
void check_points(const std::vector<std::string>& fixed, const std::vector<Point>& points) {
  std::vector<const char*> argv{"nvmesim", "--single-run"};
  for (const std::string& f : fixed) argv.push_back(f.c_str());
  const CliResult base = parse_command_line(int(argv.size()), argv.data());
  for (const Point& p : points) {
    if (interrupt::received()) throw Interrupted("while checking the points, before any ran");
    std::string error;
    if (base.options.fio) {
      const std::vector<std::string> args = point_argv("nvmesim", fixed, p);
      std::vector<const char*> point_args;
      for (const std::string& a : args) point_args.push_back(a.c_str());
      const CliResult r = parse_command_line(int(point_args.size()), point_args.data());
      if (r.action == CliResult::Error) error = r.message;
    } else {
      try {
        Config c = base.config;
        for (const auto& [name, value] : p.values) c.set(name, value);
        c.validate_all();
        check_param_requirements(c);
        check_system_params(load_system_params(c, {}), c);  // what the model refuses
      } catch (const ConfigError& e) {
        error = e.what();
      }
    }
    if (!error.empty()) throw UsageError("--grid: point " + shown(point_label(p.values)) + ": " + error);
  }
}

std::vector<std::string> axis_names(const std::vector<Axis>& axes) {
  std::vector<std::string> n;
  for (const Axis& a : axes) n.push_back(a.name);
  return n;
}

std::string absolute(const std::string& path) {
  char buf[PATH_MAX];
  if (::realpath(path.c_str(), buf)) return buf;
  return path;
}

// As absolute(), for a directory that may not exist yet: relative to the
// working directory.
std::string absolute_path(const std::string& path) {
  char buf[PATH_MAX];
  if (::realpath(path.c_str(), buf)) return buf;
  if (!path.empty() && path[0] == '/') return path;
  return ::getcwd(buf, sizeof buf) ? std::string(buf) + "/" + path : path;
}

// Plots, then the exit status: 1 if a point is not ok or a plot failed.
int finish(const Args& a, const std::vector<Record>& records, std::ostream& err) {
  int rc = 0;
  for (const Record& r : records)
    if (r.status != "ok") rc = 1;
  for (const PlotSpec& p : a.plots) {
    try {
      for (const std::string& f : write_plot(a.out, p, axis_names(a.axes), records, a.fixed)) err << "sweep: wrote " << f << "\n";
    } catch (const std::runtime_error& e) {
      err << "nvmesim sweep: error: " << e.what() << "\n";
      rc = 1;
    }
  }
  return rc;
}

// Two sweeps' fixed options are the same run options: the same tokens, or
// (every token a whole --name=value, no name repeated) the same in another order.
bool same_fixed(std::vector<std::string> a, std::vector<std::string> b) {
  if (a == b) return true;
  auto whole = [](const std::vector<std::string>& v) {
    std::set<std::string> names;
    for (const std::string& t : v) {
      const size_t eq = t.find('=');
      if (t.rfind("--", 0) != 0 || eq == std::string::npos || !names.insert(t.substr(0, eq)).second) return false;
    }
    return true;
  };
  if (!whole(a) || !whole(b)) return false;
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  return a == b;
}

// Fixed options as a list for a message ("none" when there are none).
std::string fixed_text(const std::vector<std::string>& fixed) {
  std::string t;
  for (const std::string& f : fixed) t += (t.empty() ? "" : " ") + f;
  return t.empty() ? "none" : shown(t);
}

int merge(Args& a, std::ostream& err) {
  // --out among the inputs (in any spelling: ./s, s/, a symbolic link)
  // would rewrite the results the merge reads.
  struct stat out_st {};
  if (::stat(a.out.c_str(), &out_st) == 0)
    for (const std::string& dir : a.merge) {
      struct stat in_st {};
      if (::stat(dir.c_str(), &in_st) == 0 && in_st.st_dev == out_st.st_dev && in_st.st_ino == out_st.st_ino)
        throw UsageError("--merge " + shown(dir) + " and --out " + shown(a.out) +
                         ": one directory; the merge would rewrite its own input: give another --out");
    }
  std::vector<std::pair<std::string, Manifest>> manifests;
  std::vector<Record> found;
  std::string rows_without_manifest;  // a directory whose rows' fixed options are unknown
  for (const std::string& dir : a.merge) {
    Manifest m;
    bool has_manifest = false;
    try {
      has_manifest = read_manifest(dir, m);
    } catch (const UsageError& e) {
      throw UsageError(std::string("--merge: ") + e.what());
    }
    if (has_manifest) manifests.emplace_back(dir, m);
    std::vector<Record> r = collect_records(dir);
    if (r.empty() && !manifests.size()) err << "sweep: warning: no sweep output in " << dir << "\n";
    if (!has_manifest && !r.empty() && rows_without_manifest.empty()) rows_without_manifest = dir;
    found.insert(found.end(), r.begin(), r.end());
  }
  // Rows without their sweep.json cannot show that they ran with the fixed
  // options of the sweeps beside them.
  if (!rows_without_manifest.empty() && !manifests.empty())
    throw UsageError("--merge: " + quoted(rows_without_manifest) + " holds results but no sweep.json, so their fixed "
                     "options are unknown, beside " + quoted(manifests.front().first) + "'s (" +
                     fixed_text(manifests.front().second.fixed) + "): restore its sweep.json or merge it apart");
  // Rows of sweeps with other fixed options are not one sweep's points.
  for (const auto& [dir, m] : manifests)
    if (!same_fixed(m.fixed, manifests.front().second.fixed))
      throw UsageError("--merge: " + quoted(dir) + " ran with other fixed options (" + fixed_text(m.fixed) + ") than " +
                       quoted(manifests.front().first) + " (" + fixed_text(manifests.front().second.fixed) +
                       "): their rows are not one sweep's; merge sweeps of the same options");
  check_one_setting_per_parameter(a.axes, {});
  if (a.axes.empty()) {
    if (manifests.empty()) throw UsageError("--merge: no sweep.json in the directories; give the grid with --grid");
    a.axes = union_axes(manifests);
  }
  for (const PlotSpec& p : a.plots) check_plot_columns(p, axis_names(a.axes));
  if (!a.seed_given && !manifests.empty()) a.seed = manifests.front().second.seed;
  const std::vector<Point> points = expand_grid(a.axes, a.seed);
  make_out_dir(a.out);
  const std::vector<Record> records = assemble(points, found);
  write_results(a.out, axis_names(a.axes), records);
  Manifest m;
  m.seed = a.seed;
  m.axes = a.axes;
  m.fixed = manifests.empty() ? std::vector<std::string>() : manifests.front().second.fixed;
  write_manifest(a.out, m);
  size_t ok = 0;
  for (const Record& r : records) ok += r.status == "ok";
  err << "sweep: merged " << points.size() << " points from " << a.merge.size() << " directories: " << ok
      << " ok, " << (points.size() - ok) << " failed or missing; results in " << a.out << "/results.csv\n";
  return finish(a, records, err);
}

}  // namespace

int run_sweep_command(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  try {
    Args a = parse(argc, argv);
    if (a.help) {
      out << sweep_help_text();
      return 0;
    }
    if (a.out.empty()) throw UsageError("--out: required (the directory for results.csv and results.jsonl)");
    if (!a.merge.empty()) {
      if (!a.emit.empty() || a.resume) throw UsageError("--merge: cannot be combined with --emit or --resume");
      return merge(a, err);
    }
    if (a.axes.empty()) throw UsageError("--grid: no grid given (--grid NAME=V1,V2,... or --sweep-file FILE)");
    const std::vector<Point> points = expand_grid(a.axes, a.seed);
    check_one_setting_per_parameter(a.axes, a.fixed);
    check_fixed(a.fixed);
    for (const PlotSpec& p : a.plots) check_plot_columns(p, axis_names(a.axes));
    // The --emit list's size first: it is cheap to work out, and checking a
    // million points' configurations to refuse their list after is not.
    // (Checked again below with the directory as it will be written.)
    if (!a.emit.empty()) check_emit_size(absolute_path(a.out), self_exe(), a.fixed, points);
    check_points(a.fixed, points);
    make_out_dir(a.out);
    make_out_dir(a.out + "/points");
    a.out = absolute(a.out);
    const std::string exe = self_exe();
    const std::string partial = a.out + "/results.jsonl.partial";
    // The sweep's own files must be regular files: a FIFO there would block
    // the read or the open for writing, deaf to signals.
    for (const std::string& own : {a.out + "/results.jsonl", partial})
      if (const std::string why = not_regular_reason(own); !why.empty())
        throw UsageError("--out: " + own + " " + why);
    std::vector<Record> found;
    if (a.resume) {
      try {
        found = read_jsonl(a.out + "/results.jsonl");
        for (Record& r : read_jsonl(partial)) found.push_back(std::move(r));
      } catch (const InputFileError& e) {
        throw UsageError(std::string("--resume: ") + e.what());
      }
      // --resume continues the sweep DIR holds: the same fixed options, or
      // its rows would be another sweep's. The rows do not carry the fixed
      // options; sweep.json does, so rows without it are refused.
      Manifest before;
      bool has_manifest = false;
      try {
        has_manifest = read_manifest(a.out, before);
      } catch (const UsageError& e) {
        throw UsageError(std::string("--resume: ") + e.what());
      }
      if (has_manifest && !same_fixed(before.fixed, a.fixed))
        throw UsageError("--resume: " + quoted(a.out) + " holds a sweep of other fixed options (" +
                         fixed_text(before.fixed) + ", now " + fixed_text(a.fixed) +
                         "): resume with the same options, or give another --out");
      if (!has_manifest && !found.empty())
        throw UsageError("--resume: " + quoted(a.out) + " holds " + std::to_string(found.size()) +
                         " results but no sweep.json, so the fixed options they ran with are unknown: "
                         "restore its sweep.json, or give another --out");
    }
    if (!a.emit.empty()) check_emit_size(a.out, exe, a.fixed, points);
    Manifest m;
    m.seed = a.seed;
    m.fixed = a.fixed;
    m.axes = a.axes;
    write_manifest(a.out, m);

    if (!a.emit.empty()) {
      for (const std::string& what : a.emit) {
        const std::string wrote = emit(what, a.out, exe, a.fixed, points);
        if (interrupt::received()) throw Interrupted("while writing the --emit list (none written)");
        err << "sweep: wrote " << wrote << " (" << points.size() << " points)\n";
      }
      return 0;
    }

    const auto t0 = std::chrono::steady_clock::now();
    std::vector<Record> previous = assemble(points, found);
    std::vector<Point> todo;
    for (size_t k = 0; k < points.size(); ++k)
      if (previous[k].status != "ok") todo.push_back(points[k]);
    // Finished points are appended here at once, so an interrupted sweep
    // can be resumed; the final files are written in grid order at the end.
    FILE* part = std::fopen(partial.c_str(), a.resume ? "a" : "w");
    if (!part) throw std::runtime_error("cannot write " + partial);
    std::vector<Record> ran;
    RunnerOptions ro;
    ro.exe = exe;
    ro.fixed = a.fixed;
    ro.dir = a.out;
    ro.jobs = a.jobs ? a.jobs : unsigned(std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN)));
    ro.total = points.size();
    if (points.size() != todo.size())
      err << "sweep: resuming: " << (points.size() - todo.size()) << " of " << points.size() << " points already done\n";
    run_points(todo, ro, err, ::isatty(2), [&](const Record& r) {
      ran.push_back(r);
      const std::string line = jsonl_line(r) + "\n";
      std::fwrite(line.data(), 1, line.size(), part);
      std::fflush(part);
    });
    std::fclose(part);
    found.insert(found.end(), ran.begin(), ran.end());
    const std::vector<Record> records = assemble(points, found);
    write_results(a.out, axis_names(a.axes), records);
    std::remove(partial.c_str());
    size_t failed = 0;
    for (const Record& r : records) failed += r.status != "ok";
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    char took[32];
    std::snprintf(took, sizeof took, "%.2f", wall);
    if (const int sig = interrupt::received()) {
      err << "sweep: interrupted by " << interrupt::signal_name(sig) << ": " << ran.size() << " of "
          << todo.size() << " points to run finished; results in " << a.out
          << "/results.csv (--resume runs the rest)\n";
      return interrupt::exit_code();
    }
    err << "sweep: " << points.size() << " points: " << todo.size() << " run, "
        << (points.size() - todo.size()) << " resumed, " << failed << " failed, in " << took << " s with "
        << ro.jobs << " jobs; results in " << a.out << "/results.csv\n";
    return finish(a, records, err);
  } catch (const UsageError& e) {
    err << "nvmesim sweep: error: " << e.what() << "\n";
    return 2;
  } catch (const Interrupted& e) {
    err << "sweep: interrupted by " << interrupt::signal_name(interrupt::received()) << " " << e.what() << "\n";
    return interrupt::exit_code();
  } catch (const std::exception& e) {
    err << "nvmesim sweep: error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace nvmesim::platform
