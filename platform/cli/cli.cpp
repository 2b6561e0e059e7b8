// The command-line front end (see cli.h).
#include "nvmesim/platform/cli/cli.h"
#include "nvmesim/platform/config/presets.h"

#include <memory>

#include <algorithm>
#include <cctype>
#include <sstream>
#include <vector>

#include "nvmesim/platform/cli/commands.h"
#include "nvmesim/platform/cli/options.h"

#include "nvmesim/platform/config/config_dump.h"
#include "nvmesim/platform/config/device_backend.h"
#include "nvmesim/platform/config/input_file.h"
#include "nvmesim/platform/sweep/sweep_output.h"
#include "nvmesim/platform/fio/fio_job.h"
#include "nvmesim/platform/fio/fio_logs.h"
#include "nvmesim/traces/gtkwave_save.h"
#include "nvmesim/platform/config/param_requires.h"
#include "nvmesim/platform/report/pending_file.h"
#include "nvmesim/platform/config/user_text.h"
#include "nvmesim/platform/system/repeat.h"

#ifndef NVMESIM_VERSION
#define NVMESIM_VERSION "unknown"
#endif

namespace po = boost::program_options;

namespace nvmesim::platform {

namespace {

const char* const kFioNames[] = {"rw", "bs", "iodepth", "numjobs", "runtime",
                                 "number_ios", "size", "rwmixread", "seed"};

CliResult error(std::string message) {
  CliResult r;
  r.action = CliResult::Error;
  r.message = std::move(message);
  r.exit_code = 2;
  return r;
}

// A --trace-start/--trace-stop value in picoseconds: a number with ps, ns,
// us, ms, s or cyc (at hv.cpu_ghz). Returns "" or the error message.
std::string parse_trace_time(const std::string& option, const std::string& text, double cpu_ghz,
                             uint64_t& ps) {
  const std::string bad = "--" + option + ": " + quoted(text) +
                          " is not a time (a number with ps, ns, us, ms, s or cyc)";
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    return bad;
  }
  if (used == 0 || !std::isdigit(static_cast<unsigned char>(text[0]))) return bad;
  const std::string unit = text.substr(used);
  double mult = 0;
  if (unit == "ps") mult = 1;
  else if (unit == "ns") mult = 1e3;
  else if (unit == "us") mult = 1e6;
  else if (unit == "ms") mult = 1e9;
  else if (unit == "s") mult = 1e12;
  else if (unit == "cyc") mult = 1e3 / cpu_ghz;
  else return bad;
  const double x = v * mult;
  if (!(x >= 0) || x > 1e18) return "--" + option + ": " + quoted(text) + " is out of range (0..1000000s)";
  ps = uint64_t(x + 0.5);
  return "";
}

po::options_description all_options(const ParamRegistry& registry) {
  po::options_description desc;
  desc.add_options()
      ("help,h", "")
      ("version", "")
      ("list-params", "")
      ("preset", po::value<std::string>(), "")
      ("list-presets", "")
      ("config", po::value<std::string>(), "")
      ("dump-config", po::value<std::string>(), "")
      ("output-format", po::value<std::string>(), "")
      ("output", po::value<std::string>(), "")
      ("host-stats", "")
      ("fail-on-stall", "")
      ("vcd", po::value<std::string>(), "")
      ("timeline", po::value<std::string>(), "")
      ("trace-start", po::value<std::string>(), "")
      ("trace-stop", po::value<std::string>(), "")
      ("trace-signals", po::value<std::string>(), "")
      ("job", po::value<std::string>(), "")
      ("strict", "")
      ("single-run", "")
      ("repeat", po::value<std::string>(), "");
  // fio's options that are no parameter, in a job file's spelling.
  for (const char* name : {"time_based", "write_lat_log", "write_bw_log", "write_iops_log", "log_offset"})
    desc.add_options()(name, po::value<std::string>()->implicit_value(""), "");
  for (const char* name : {"log_avg_msec", "ioengine", "io_size", "fill_device", "fill_fs", "cmd_type"})
    desc.add_options()(name, po::value<std::string>(), "");
  for (const ParamSpec& spec : registry.all()) {
    if (spec.name == "preset") continue;  // the generic --preset above sets it
    desc.add_options()(spec.name.c_str(), po::value<std::string>(), "");
    if (!spec.alias.empty()) desc.add_options()(spec.alias.c_str(), po::value<std::string>(), "");
  }
  return desc;
}

std::string pad(const std::string& s, size_t width) {
  return s.size() >= width ? s + " " : s + std::string(width - s.size(), ' ');
}

// `left` then `text` word-wrapped at `width` columns, continuation lines
// indented to the width of `left`.
std::string wrap(const std::string& left, const std::string& text, size_t width) {
  std::string out = left, word;
  size_t col = left.size();
  bool first = true;
  std::istringstream words(text);
  while (words >> word) {
    if (!first && col + 1 + word.size() > width) {
      out += "\n" + std::string(left.size(), ' ');
      col = left.size();
      first = true;
    }
    if (!first) {
      out += ' ';
      ++col;
    }
    out += word;
    col += word.size();
    first = false;
  }
  return out + "\n";
}

}  // namespace

std::string version_text() { return std::string("nvmesim ") + NVMESIM_VERSION + " (commit " + build_commit() + ")"; }

std::string help_text() {
  const ParamRegistry& reg = ParamRegistry::builtin();
  std::ostringstream o;
  o << "Usage:\n"
       "  nvmesim [options]\n"
    << cli::commands_usage_text()
    << "\n"
       "Simulates a virtualized NVMe I/O path (guest driver, hypervisor exits, PCIe,\n"
       "NVMe controller with the doorbell buffer) and reports doorbell exits,\n"
       "EventIdx hit rates and I/O latency.\n"
       "\n"
       "With no options, runs the default experiment on the KVM model (--preset\n"
       "kvm,qemu-7.2): 4 KiB random reads, iodepth 32, 1 job, null backend, doorbell\n"
       "buffer off and on side by side (with an on/off ratio column), over seeds 1..3\n"
       "(as --repeat=3: each figure as mean and 95% interval). Other options keep\n"
       "the comparison (one seed unless --repeat), run with them, as long as\n"
       "nvme.dbbuf is not set (by an option, --config, --preset) and the device is\n"
       "emulated NVMe (not virtio-blk, not hv.passthrough) and no trace is asked for\n"
       "(--vcd, --timeline: one run); set nvme.dbbuf, or give --single-run, for one\n"
       "run's full report.\n"
       "\n"
       "Generic options:\n"
       "  -h [ --help ]              print this help and exit\n"
       "  --version                  print the version and exit\n"
       "  --list-params              list every parameter: name, default, unit, range\n"
       "                             or choices, help; and exit\n"
       "  --preset NAME[,NAME]       the presets the run is built on, in order, under\n"
       "                             every other setting: exit costs (haswell-ep), the\n"
       "                             hypervisor (kvm, tcg), device mechanisms (qemu-7.2);\n"
       "                             default kvm,qemu-7.2 (the KVM model), none = the\n"
       "                             parameters' own defaults; --list-presets shows them\n"
       "  --config FILE              read parameters from an INI file, or from a run's\n"
       "                             JSON document (its config block); repeatable,\n"
       "                             later files and command-line values override\n"
       "  --dump-config FILE         write the effective configuration (every\n"
       "                             parameter, presets expanded) as INI, then run;\n"
       "                             --config FILE replays the run byte for byte\n"
       "  --output-format FORMAT     normal (default), json, or json+ (fio's json+\n"
       "                             layout with nvmesim's results under \"nvmesim\")\n"
       "  --output FILE              write the results to FILE instead of stdout\n"
       "  --host-stats               add wall time, peak RSS, I/Os per wall second and\n"
       "                             the model's SystemC process activations per I/O\n"
       "  --fail-on-stall            exit with status 3 when the run stalls (I/Os\n"
       "                             outstanding and no progress: the stall report)\n"
       "  --vcd FILE                 write a VCD waveform of the run (GTKWave; see\n"
       "                             traces/README.md)\n"
       "  --timeline FILE            write a Chrome trace-event JSON timeline (Perfetto\n"
       "                             UI); FILE.html: its self-contained HTML page\n"
       "  --trace-start TIME         traces begin at this simulated time (default 0)\n"
       "  --trace-stop TIME          traces end at this simulated time (default: the end)\n"
       "  --trace-signals LIST       comma-separated name patterns (* and ?) of the\n"
       "                             signals to trace, e.g. 'q1.*,vcpu0.*'\n"
       "  --job FILE                 read the workload from a fio job file ([global] and\n"
       "                             job sections; command-line options override it)\n"
       "  --strict                   with --job: kept; unmodelled fio options are always an error\n"
       "  --single-run               one run at nvme.dbbuf's value (default spec) even\n"
       "                             when nvme.dbbuf is not set (no comparison)\n"
       "  --repeat N                 run the experiment (the comparison or one run) for\n"
       "                             seeds seed..seed+N-1 (N 2..1000), one after another,\n"
       "                             and report each figure's mean, 95% Student-t\n"
       "                             half-width, min and max (docs/repeat.md)\n"
       "\n"
       "Workload options (fio's names):\n";
  for (const char* name : kFioNames) {
    const ParamSpec* spec = reg.find(name);
    if (!spec) continue;
    std::string left = "  --" + spec->name + " " + kind_name(spec->kind);
    std::string right = spec->help + "; " +
                        (spec->kind == ParamKind::Choice ? "one of " : "range ") +
                        format_range(*spec) + "; default " + spec->default_value;
    o << wrap(pad(left, 24), right, 79);
  }
  o << "\n"
       "Model parameters: every --component.name listed by --list-params; also\n"
       "settable in --config FILE as 'name = value' under [component].\n"
       "  e.g.  --hv.exit_mmio=2250cyc  --nvme.dbbuf off  --pcie.lanes 8\n"
       "\n"
       "Values: times need a unit: ns, us, ms, s, or cyc (CPU cycles at hv.cpu_ghz);\n"
       "sizes are bytes, or with k, m, g, t (binary; also KiB, MiB, GiB, TiB);\n"
       "booleans are on/off, true/false, yes/no, 1/0. Option names are never\n"
       "abbreviated; a repeated option: the last one wins.\n"
       "\n"
       "Config file (INI): '#', or ';' at a line's start or after a blank, starts a\n"
       "comment; keys before the first [section]\n"
       "are full names (the workload's flat names such as 'bs = 4k', or dotted\n"
       "ones); a [fio] section also holds the flat names; under [hv], 'exit_mmio =\n"
       "5100cyc' sets hv.exit_mmio.\n"
       "\n" +
           backend_params_help() +
       "\n"
       "Settings that act only with another's value (otherwise a warning, or refused):\n" +
           param_requirements_help() +
       "\n"
       "Exit status: 0 success, 1 internal error, 2 usage or configuration error,\n"
       "3 the run stalled and --fail-on-stall was given, 4 I/Os failed (completed\n"
       "with an error status or failed verification; the report's first line says so),\n"
       "or the bring-up was refused, 5 the results could not be written (standard\n"
       "output, --output, a trace or a log failed while written),\n"
       "130/143 SIGINT/SIGTERM stopped the run (the results so far are written, marked\n"
       "interrupted).\n";
  return o.str();
}

std::string list_params_text(const ParamRegistry& registry) {
  struct Row { std::string name, def, unit, range, help; };
  std::vector<Row> rows;
  rows.push_back({"NAME", "DEFAULT", "UNIT", "RANGE/CHOICES", "HELP"});
  for (const ParamSpec& s : registry.all())
    rows.push_back({s.name, s.default_value, s.unit.empty() ? "-" : s.unit, format_range(s), s.help});
  size_t w[4] = {0, 0, 0, 0};
  for (const Row& r : rows) {
    w[0] = std::max(w[0], r.name.size());
    w[1] = std::max(w[1], r.def.size());
    w[2] = std::max(w[2], r.unit.size());
    w[3] = std::max(w[3], r.range.size());
  }
  std::ostringstream o;
  for (const Row& r : rows)
    o << pad(r.name, w[0] + 2) << pad(r.def, w[1] + 2) << pad(r.unit, w[2] + 2)
      << pad(r.range, w[3] + 2) << r.help << "\n";
  return o.str();
}

namespace {

// A --config file: INI, or a run's JSON document (its "config" block).
void load_config_file(const std::string& path, Config& config) {
  const std::string what = "config file " + shown(path);
  // JSON is read up to 64 MiB, on long lines (a document with its statistics);
  // INI keeps its own limits.
  const std::string text = read_input_file_as<ConfigError>(path, what, InputLimits{size_t(64) << 20, false});
  if (looks_like_json(text)) {
    std::istringstream in(json_config_as_ini(text, path));
    config.load_ini(in, path);
    return;
  }
  if (text.size() > kInputFileMax) throw ConfigError(what + ": longer than " + std::to_string(kInputFileMax) + " bytes");
  try {
    check_line_lengths(text, what);
  } catch (const InputFileError& e) {
    throw ConfigError(e.what());
  }
  std::istringstream in(text);
  config.load_ini(in, path);
}

// The files a run reads: --config files, the job file and its includes.
NamedFiles run_inputs(const std::vector<std::string>& configs, const RunOptions& options) {
  NamedFiles in;
  for (const std::string& c : configs) in.emplace_back("--config", c);
  if (options.fio)
    for (size_t k = 0; k < options.fio->inputs.size(); ++k)
      in.emplace_back(k ? "an include of --job" : "--job", options.fio->inputs[k]);
  return in;
}

// fio's log files the run will write (platform/system/run.cpp: job number =
// the vCPU's index + 1).
std::vector<std::string> fio_log_files(const RunOptions& options) {
  std::vector<std::string> names;
  if (!options.fio || !options.fio->logs) return names;
  const FioJobs& f = *options.fio;
  for (size_t v = 0; v < f.vcpu_job.size(); ++v) {
    const FioLogSpec& spec = f.jobs[f.vcpu_job[v]].logs;
    if (!spec.any()) continue;
    for (const std::string& n : FioLogs(spec, unsigned(v + 1)).file_names()) names.push_back(n);
  }
  return names;
}

// The files a run writes: --output, --vcd and its GTKWave save file,
// --timeline, fio's logs (as run.cpp names them: one set per vCPU whose job
// asks).
NamedFiles run_outputs(const RunOptions& options) {
  NamedFiles out{{"--output", options.output_file}, {"--vcd", options.vcd_file}};
  if (!options.vcd_file.empty() && not_regular_reason(options.vcd_file).empty())
    out.emplace_back("the GTKWave save file of --vcd", traces::gtkwave_save_path(options.vcd_file));
  out.emplace_back("--timeline", options.timeline_file);
  for (const std::string& log : fio_log_files(options)) out.emplace_back("a fio log of --job", log);
  return out;
}

}  // namespace

CliResult parse_command_line(int argc, const char* const* argv) {
  const ParamRegistry& registry = ParamRegistry::builtin();
  std::vector<po::option> parsed;
  try {
    cli::ParseRules rules;
    rules.see_unknown = "(see --help and --list-params)";
    rules.see_word = "(options are --name=value; see --help)";
    parsed = cli::parse_options(argc, argv, all_options(registry), rules);
  } catch (const cli::UsageError& e) {
    return error(e.what());
  }

  bool help = false, version = false, list = false, list_presets = false, has_preset = false;
  std::string preset;
  std::vector<std::string> configs;
  std::string dump_config;
  bool has_dump_config = false;
  std::vector<std::pair<std::string, std::string>> params;
  std::string job_file;
  std::string trace_start, trace_stop, trace_signals;
  bool has_trace_start = false, has_trace_stop = false, has_trace_signals = false;
  bool strict = false, has_job = false, single_run = false, has_repeat = false;
  std::string repeat;
  RunOptions options;
  for (const po::option& opt : parsed) {
    const std::string& key = opt.string_key;
    const std::string value = cli::value_of(opt);
    if (key == "help") help = true;
    else if (key == "version") version = true;
    else if (key == "list-params") list = true;
    else if (key == "list-presets") list_presets = true;
    else if (key == "preset") preset = value, has_preset = true;
    else if (key == "host-stats") options.host_stats = true;
    else if (key == "fail-on-stall") options.fail_on_stall = true;
    else if (key == "config") configs.push_back(value);
    else if (key == "dump-config") dump_config = value, has_dump_config = true;
    else if (key == "output-format") options.output_format = value;
    else if (key == "output") options.output_file = value;
    else if (key == "vcd") options.vcd_file = value;
    else if (key == "timeline") options.timeline_file = value;
    else if (key == "trace-start") trace_start = value, has_trace_start = true;
    else if (key == "trace-stop") trace_stop = value, has_trace_stop = true;
    else if (key == "trace-signals") trace_signals = value, has_trace_signals = true;
    else if (key == "job") job_file = value, has_job = true;
    else if (key == "strict") strict = true;
    else if (key == "single-run") single_run = true;
    else if (key == "repeat") repeat = value, has_repeat = true;
    else params.emplace_back(key, value);
  }

  CliResult r;
  r.exit_code = 0;
  if (help) {
    r.action = CliResult::Help;
    r.message = help_text();
    return r;
  }
  if (version) {
    r.action = CliResult::Version;
    r.message = version_text();
    return r;
  }
  if (list) {
    r.action = CliResult::ListParams;
    r.message = list_params_text(registry);
    return r;
  }
  if (list_presets) {
    r.action = CliResult::ListParams;  // a table to print, exit 0
    r.message = list_presets_text();
    return r;
  }
  if (options.output_format != "normal" && options.output_format != "json" &&
      options.output_format != "json+")
    return error("--output-format: " + quoted(options.output_format) + " is not one of normal, json, json+");
  if (has_job && job_file.empty()) return error("--job: empty file name");
  if (strict && !has_job) return error("--strict: only applies to --job FILE");
  for (const std::string& c : configs)
    if (c.empty()) return error("--config: empty file name");
  if (has_dump_config && dump_config.empty()) return error("--dump-config: empty file name");
  // "--output=" is caught by Boost; "--output ''" lands here.
  for (const po::option& opt : parsed)
    if (opt.string_key == "output" && (opt.value.empty() || opt.value.front().empty()))
      return error("--output: empty file name");

  try {
    // The presets go under everything else (applied once all is read); a
    // --config file may name them too (the `preset` parameter), and the
    // command line's --preset, as its options, beats the files'.
    for (const std::string& c : configs) load_config_file(c, r.config);
    if (has_preset) r.config.set("preset", preset);
    bool fio_only = false;  // an option only a fio job has (time_based, the logs, ...)
    for (const auto& [name, value] : params)
      if (!ParamRegistry::builtin().find(name)) fio_only = true;
    // The io_uring engines' settings are checked against the engine as in a
    // file (fio_job.cpp: sqthread_poll needs io_uring or io_uring_cmd).
    for (const auto& [name, value] : params)
      if (name == "sqthread_poll" || name == "uring_cmd") fio_only = true;
    if (has_job || fio_only) {
      // The file's options go between the --config files and the command
      // line; fio's options alone make the bare command line one job with
      // nvmesim's defaults.
      FioJobFile file;
      if (has_job) {
        file = load_fio_job_file(job_file);
      } else {
        file.path = "(command line)";
        file.jobs.emplace_back();
        file.jobs.back().name = "nvmesim";
      }
      auto jobs = std::make_shared<FioJobs>(resolve_fio_jobs(file, r.config, params, strict, has_job));
      if (has_job) {
        jobs->inputs.push_back(file.path);
        jobs->inputs.insert(jobs->inputs.end(), file.includes.begin(), file.includes.end());
      }
      std::vector<Config*> all{&jobs->config};
      for (FioJob& job : jobs->jobs) all.push_back(&job.config);
      for (Config* c : all) apply_preset_under(c->text("preset"), *c);
      fit_namespace_to_size(all);
      r.config = jobs->config;
      options.notices = fio_notices(*jobs);
      options.fio = jobs;
    } else {
      // fio's spellings as in a file: --runtime=5 is seconds; --size alone
      // sets the I/O too (the job does size bytes, as fio).
      for (const auto& [name, value] : params) r.config.set(name, fio_command_line_value(name, value));
      if (r.config.is_set("size") && !r.config.is_set("number_ios") && !r.config.is_set("runtime"))
        r.config.set("number_ios", std::to_string(r.config.size_bytes("size") / r.config.size_bytes("bs")));
      fit_namespace_to_size({&r.config});
      apply_preset_under(r.config.text("preset"), r.config);
    }
    r.config.validate_all();
    // Settings that need another one's value (platform/config/param_requires.h).
    std::vector<std::string> warnings = check_param_requirements(r.config);
    // The comparison runs with the buffer off and on: a setting is inert
    // only if it is in both runs (hv.notify=ioeventfd acts in the spec run).
    const bool tracing_asked = std::any_of(parsed.begin(), parsed.end(), [](const po::option& o) {
      return o.string_key == "vcd" || o.string_key == "timeline";
    });
    const bool comparison = !single_run && !tracing_asked && !r.config.is_set("nvme.dbbuf") &&
                            r.config.text("device") == "nvme" && r.config.text("hv.passthrough") == "off";
    if (comparison) {
      Config spec = r.config;
      spec.set("nvme.dbbuf", "spec");
      const std::vector<std::string> in_spec = check_param_requirements(spec);
      warnings.erase(std::remove_if(warnings.begin(), warnings.end(),
                                    [&](const std::string& w) {
                                      return std::find(in_spec.begin(), in_spec.end(), w) == in_spec.end();
                                    }),
                     warnings.end());
    }
    if (options.fio)
      for (const FioJob& job : options.fio->jobs) check_param_requirements(job.config);
    options.notices.insert(options.notices.end(), warnings.begin(), warnings.end());
  } catch (const ConfigError& e) {
    return error(e.what());
  }
  // Traces.
  for (const auto& [name, file] : {std::pair{"vcd", &options.vcd_file}, std::pair{"timeline", &options.timeline_file}})
    for (const po::option& opt : parsed)
      if (opt.string_key == name && file->empty()) return error(std::string("--") + name + ": empty file name");
  const bool tracing = !options.vcd_file.empty() || !options.timeline_file.empty();
  // Every output against every input and every other output, implicit ones
  // included: two outputs into one file would interleave (or one replace the
  // other), an output over an input would replace it with results.
  if (const std::string e = clashing_files(run_inputs(configs, options), run_outputs(options)); !e.empty())
    return error(e);
  // An output that cannot be written (a directory, a missing or read-only
  // folder) is the user's to fix: found now (exit 2), not after the run.
  for (const auto& [option, name] : run_outputs(options)) {
    if (name.empty() || option == "a fio log of --job") continue;
    if (const std::string e = output_path_problem(name); !e.empty())
      return error(option.rfind("--", 0) == 0
                       ? option + ": cannot open " + quoted(name) + " for writing (" + e + ")"
                       : "--vcd: cannot open " + option.substr(0, option.find(" of ")) + " " + quoted(name) +
                             " for writing (" + e + ")");
  }
  // fio's logs are written after the run: a folder that cannot take them is
  // found now, not after the whole run.
  for (const std::string& log : fio_log_files(options))
    if (const std::string e = output_path_problem(log); !e.empty())
      return error("--job: cannot write the fio log " + quoted(log) + " (" + e + ")");
  for (const char* o : {"trace-start", "trace-stop", "trace-signals"})
    for (const po::option& opt : parsed)
      if (opt.string_key == o && !tracing) return error(std::string("--") + o + ": needs --vcd FILE or --timeline FILE");
  const double ghz = r.config.real("hv.cpu_ghz");
  if (has_trace_start) {
    const std::string e = parse_trace_time("trace-start", trace_start, ghz, options.trace_start_ps);
    if (!e.empty()) return error(e);
  }
  if (has_trace_stop) {
    const std::string e = parse_trace_time("trace-stop", trace_stop, ghz, options.trace_stop_ps);
    if (!e.empty()) return error(e);
    if (options.trace_stop_ps <= options.trace_start_ps)
      return error("--trace-stop: " + shown(trace_stop) + " is not after --trace-start (" +
                   (has_trace_start ? shown(trace_start) : std::string("0ns")) + ")");
  }
  if (has_trace_signals) {
    std::string item;
    std::istringstream list(trace_signals + ",");
    while (std::getline(list, item, ',')) {
      if (item.empty())
        return error("--trace-signals: empty pattern in " + quoted(trace_signals) + " (comma-separated, e.g. 'q1.*,vcpu0.*')");
      for (char c : item)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.' && c != '*' && c != '?')
          return error("--trace-signals: " + quoted(item) + " may hold only letters, digits, '_', '.', '*' and '?'");
      options.trace_signals.push_back(item);
    }
  }
  // The comparison runs unless the user chose the doorbell buffer's mode
  // (option, --config, --preset) or asked for one run; it compares NVMe's
  // doorbell buffer, so another device, or passthrough (a real SSD has no
  // doorbell buffer to turn on), runs once.
  // A trace follows one run: asking for one runs the configuration once
  // (traces/README.md), as --single-run would.
  options.default_experiment = !single_run && !tracing && !r.config.is_set("nvme.dbbuf") &&
                               r.config.text("device") == "nvme" && r.config.text("hv.passthrough") == "off";
  // A trace, and fio's logs, follow one run; a comparison has two.
  if (options.default_experiment && options.fio && options.fio->logs)
    return error("--job: fio's logs (write_lat_log, write_bw_log, write_iops_log) follow one run and nvme.dbbuf "
                 "is not set, so two run (off and spec): set --nvme.dbbuf=off or spec, or give --single-run");
  // --repeat N: the same experiment over N seeds (platform/system/repeat.h).
  // With no argument at all, the default experiment gives its intervals:
  // three seeds (under 3 s of wall time on a 2-core machine).
  if (argc == 1) options.repeat = 3;
  if (has_repeat) {
    if (const std::string e = parse_repeat(repeat, options.repeat); !e.empty()) return error(e);
    if (const std::string e = repeat_problem(r.config, options); !e.empty()) return error(e);
  }
  // Written last: a refused command line writes nothing.
  if (has_dump_config) {
    if (options.fio)
      return error("--dump-config: fio's job options (--job, or fio options that are no parameter such as "
                   "time_based) are not all parameters, so the file could not reproduce the run: keep the job file");
    NamedFiles outputs = run_outputs(options);
    outputs.emplace_back("--dump-config", dump_config);
    if (const std::string e = clashing_files(run_inputs(configs, options), outputs); !e.empty()) return error(e);
    if (const std::string e = output_path_problem(dump_config); !e.empty())
      return error("--dump-config: cannot open " + quoted(dump_config) + " for writing (" + e + ")");
    std::string command = "nvmesim";
    for (int i = 1; i < argc; ++i) command += " " + shown(argv[i]);
    const std::string header = version_text() + ": the effective configuration of\n  " + command +
                               "\nRead back with: nvmesim --config FILE (the same run, byte for byte)";
    try {
      sweep::write_file_atomic(dump_config, config_ini_text(r.config, header));
    } catch (const std::exception& e) {
      return error("--dump-config: cannot write " + quoted(dump_config) + " (" + e.what() + ")");
    }
  }
  r.options = options;
  r.action = CliResult::Run;
  return r;
}

}  // namespace nvmesim::platform
