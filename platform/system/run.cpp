#include "nvmesim/platform/system/run.h"

#include <cerrno>
#include <cmath>
#include <csignal>
#include <chrono>
#include <cstdio>
#include <algorithm>
#include <array>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <systemc>
#include <tuple>
#include <strings.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include "nvmesim/models/sim/activations.h"
#include "nvmesim/platform/fio/fio_job.h"
#include "nvmesim/platform/fio/fio_json.h"
#include "nvmesim/platform/fio/fio_logs.h"
#include "nvmesim/models/guest/vcpu.h"
#include "nvmesim/platform/cli/exit_codes.h"
#include "nvmesim/platform/cli/interrupt.h"
#include "nvmesim/platform/config/device_backend.h"
#include "nvmesim/platform/config/params.h"
#include "nvmesim/platform/config/presets.h"
#include "nvmesim/platform/report/derived_figures.h"
#include "nvmesim/platform/report/pending_file.h"
#include "nvmesim/platform/report/json_out.h"
#include "nvmesim/platform/report/results.h"
#include "nvmesim/platform/report/job_sections.h"
#include "nvmesim/platform/system/progress.h"
#include "nvmesim/platform/system/repeat.h"
#include "nvmesim/platform/system/system.h"
#include "nvmesim/platform/timeline/timeline_html.h"
#include "nvmesim/platform/config/user_text.h"
#include "nvmesim/traces/timeline_writer.h"
#include "nvmesim/traces/gtkwave_save.h"
#include "nvmesim/traces/vcd_writer.h"

namespace nvmesim::platform {

namespace {

// The progress line's label: which run of the default comparison (set
// before its child process is forked), or none.
std::string g_progress_label;
const std::string& progress_label() { return g_progress_label; }

// --timeline FILE.html: the trace, written as JSON to the temporary file,
// becomes its HTML page there (platform/timeline/timeline_html.h); "" or a
// one-line error.
std::string timeline_json_to_html(const std::string& temp, const std::string& path) {
  std::string text;
  {
    std::ifstream in(temp, std::ios::binary | std::ios::ate);
    if (!in) return "cannot read back " + quoted(temp);
    const auto size = uint64_t(in.tellg());
    if (size > kTimelineInputMax)
      return "the trace is " + std::to_string(size >> 20) + " MiB of JSON, more than a page holds (" +
             std::to_string(kTimelineInputMax >> 20) +
             " MiB): cut it with --trace-start/--trace-stop or --trace-signals, or name a .json file";
    text.resize(size);
    in.seekg(0);
    in.read(text.data(), std::streamsize(size));
    if (!in) return "cannot read back " + quoted(temp);
  }
  std::ofstream out(temp, std::ios::binary | std::ios::trunc);
  try {
    timeline_html_of_run(text, "nvmesim timeline " + path, out);
  } catch (const std::exception& e) {
    return std::string("cannot make the HTML page (") + e.what() + ")";
  }
  out.close();
  return out ? "" : "error writing " + quoted(path);
}

bool html_name(const std::string& path) {
  for (const char* ext : {".html", ".htm"}) {
    const size_t n = std::strlen(ext);
    if (path.size() > n && strcasecmp(path.c_str() + path.size() - n, ext) == 0) return true;
  }
  return false;
}

// --vcd / --timeline: the files and writers of one run. Each file is
// written under a temporary name and renamed when the run is done
// (platform/report/pending_file.h).
struct Traces {
  traces::TraceOptions options;
  PendingFile vcd_pending, timeline_pending;
  std::string vcd_name;  // as the user gave it
  std::FILE* vcd_file = nullptr;
  std::FILE* timeline_file = nullptr;
  std::unique_ptr<traces::VcdWriter> vcd;
  std::unique_ptr<traces::TimelineWriter> timeline;
  traces::TracerTee tee;
  uint64_t end_ps = 0;  // the simulated time the run ended at
  ~Traces() {
    if (vcd_file) std::fclose(vcd_file);
    if (timeline_file) std::fclose(timeline_file);
  }
  // Closes both files and renames them into place; "" or a one-line error.
  // A VCD written to a regular file gets its GTKWave save file beside it
  // (traces/gtkwave_save.h).
  std::string commit() {
    if (vcd && vcd_pending.temp_path() != vcd_pending.path()) {
      const std::string path = traces::gtkwave_save_path(vcd_pending.path());
      const std::string text = traces::gtkwave_save_file(vcd->signal_list(), vcd_name,
                                                         vcd->first_ios_view(end_ps));
      PendingFile save;
      std::string e = save.create(path);
      if (e.empty()) {
        std::FILE* f = std::fopen(save.temp_path().c_str(), "w");
        if (!f) e = std::strerror(errno);
        else {
          const bool bad = std::fputs(text.c_str(), f) < 0;
          if (std::fclose(f) != 0 || bad) e = "write failed";
        }
      }
      if (e.empty()) e = save.commit();
      if (!e.empty()) return "--vcd: cannot write the GTKWave save file " + quoted(path) + " (" + e + ")";
    }
    for (auto [f, option, pending] : {std::tuple{&vcd_file, "--vcd", &vcd_pending},
                                      std::tuple{&timeline_file, "--timeline", &timeline_pending}}) {
      if (!*f) continue;
      const bool bad = std::ferror(*f) || std::fflush(*f) != 0;
      const bool closed = std::fclose(*f) == 0;
      *f = nullptr;
      if (bad || !closed) return std::string(option) + ": error writing " + quoted(pending->path());
      if (f == &timeline_file && html_name(pending->path()) && pending->temp_path() != pending->path())
        if (const std::string e = timeline_json_to_html(pending->temp_path(), pending->path()); !e.empty())
          return std::string(option) + ": " + e;
      if (const std::string e = pending->commit(); !e.empty())
        return std::string(option) + ": cannot rename the finished file to " + quoted(pending->path()) + " (" + e + ")";
    }
    return "";
  }
};

// Opens the trace files; "" or a one-line error.
std::string open_traces(const Config& config, const RunOptions& o, Traces& t) {
  t.options.start_ps = o.trace_start_ps;
  t.options.stop_ps = o.trace_stop_ps;
  t.options.signals = o.trace_signals;
  t.options.quantum_ps = uint64_t(config.time_ns("sim.quantum") * 1000.0 + 0.5);
  auto open = [](const char* option, const std::string& name, PendingFile& pending,
                 std::FILE*& f) -> std::string {
    std::string e = pending.create(name);
    if (e.empty() && !(f = std::fopen(pending.temp_path().c_str(), "w"))) e = std::strerror(errno);
    if (!e.empty()) return std::string("--") + option + ": cannot open " + quoted(name) + " for writing (" + e + ")";
    std::setvbuf(f, nullptr, _IOFBF, 1 << 20);  // large writes: traces are big
    return "";
  };
  if (!o.vcd_file.empty()) {
    if (auto e = open("vcd", o.vcd_file, t.vcd_pending, t.vcd_file); !e.empty()) return e;
    t.vcd = std::make_unique<traces::VcdWriter>(t.vcd_file, t.options);
    t.vcd_name = o.vcd_file;
    t.tee.add(t.vcd.get());
  }
  if (!o.timeline_file.empty()) {
    if (auto e = open("timeline", o.timeline_file, t.timeline_pending, t.timeline_file); !e.empty()) return e;
    t.timeline = std::make_unique<traces::TimelineWriter>(t.timeline_file, t.options);
    t.tee.add(t.timeline.get());
  }
  return "";
}

// A --trace-signals pattern that names no signal of this system.
struct TraceSignalsError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

uint64_t peak_rss_bytes() {
  struct rusage u {};
  getrusage(RUSAGE_SELF, &u);
  return uint64_t(u.ru_maxrss) * 1024;  // Linux reports KiB
}

// A fio log that could not be written after the run (a full disk) does not
// lose the results: its error goes to *log_error, and the report is still
// printed (exit 5, results not written whole).
RunResults simulate(const Config& config, bool host_stats, Traces* traces, const FioJobs* fio,
                    std::string& log_error) {
  const auto wall0 = std::chrono::steady_clock::now();
  // Job sections with differing workloads: one Config per vCPU.
  std::vector<const Config*> job_configs;
  if (fio && fio->per_vcpu_workloads)
    for (unsigned j : fio->vcpu_job) job_configs.push_back(&fio->jobs[j].config);
  System system(config, job_configs, fio ? fio->vcpu_waits_for : std::vector<std::vector<unsigned>>{});
  // fio's logs (write_lat_log, ...): one set per vCPU whose job asks.
  std::vector<std::unique_ptr<FioLogs>> logs;
  if (fio && fio->logs)
    for (size_t v = 0; v < system.vcpus().size() && v < fio->vcpu_job.size(); ++v) {
      const FioLogSpec& spec = fio->jobs[fio->vcpu_job[v]].logs;
      if (!spec.any()) continue;
      logs.push_back(std::make_unique<FioLogs>(spec, unsigned(v + 1)));  // fio's job number
      FioLogs* log = logs.back().get();
      // Before the run: a log that cannot be written refuses the run (exit 2).
      if (const std::string e = log->open_files(); !e.empty()) throw ConfigError("--job: " + e);
      system.vcpus()[v]->on_io([log](const models::Vcpu::IoSample& s) {
        log->add(s.elapsed_ps, {s.slat_ns, s.clat_ns, s.lat_ns}, s.write, s.bytes, s.offset);
      });
    }
  std::unique_ptr<Progress> progress;
  if (Progress::wanted()) {
    const uint64_t per_job = config.time_ns("runtime") > 0 ? 0 : uint64_t(config.integer("number_ios"));
    progress = std::make_unique<Progress>(per_job * system.vcpus().size(), config.time_ns("runtime"),
                                          progress_label());
    system.on_progress([&progress](uint64_t ios) {
      progress->update(ios, double(sc_core::sc_time_stamp().value()) / 1000.0);
    });
  }
  if (traces) {
    const unsigned vcpus = unsigned(system.vcpus().size());
    traces->tee.begin(vcpus, vcpus, unsigned(system.host_thread_count()));  // one I/O queue per vCPU
    const std::string bad = traces->options.unmatched();
    if (!bad.empty())
      throw TraceSignalsError("--trace-signals: " + quoted(bad) + " matches no signal (names such as q1.shadow_sq_tail, vcpu0.state, host0.state, msix.vector1; timeline: q1.io, vcpu0.exit, host0.burst)");
    // A pattern list that selects signals of one format only leaves the
    // other file empty: say so (once) rather than write an empty trace.
    if (!traces->options.signals.empty())
      for (auto [selects, option] : {std::pair{traces->vcd && !traces->vcd->selects_anything(), "--vcd"},
                                     std::pair{traces->timeline && !traces->timeline->selects_anything(), "--timeline"}})
        if (selects)
          std::cerr << "nvmesim: warning: --trace-signals selects nothing " << option
                    << " writes (VCD signals such as q1.shadow_sq_tail, vcpu0.state; timeline tracks such as "
                       "q1.io, vcpu0.exit, host0.burst): its file will hold no events\n";
    traces::set_active(&traces->tee);
  }
  RunResults r;
  {
    interrupt::SimulationStopper stopper;  // SIGINT/SIGTERM end the run at a safe point
    r = system.run();
  }
  if (r.interrupted) r.interrupt_signal = interrupt::received();
  for (auto& log : logs)
    if (const std::string e = log->write_files(); !e.empty() && log_error.empty()) log_error = "--job: " + e;
  if (fio) {
    r.sections = job_sections(*fio);
    r.group_reporting = fio->group_reporting;
  }
  if (traces) {
    traces->end_ps = sc_core::sc_time_stamp().value();
    traces->tee.end(traces->end_ps);
    traces::set_active(nullptr);
  }
  if (host_stats) {
    r.has_host = true;
    r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    r.peak_rss_bytes = peak_rss_bytes();
    namespace act = models::activations;
    for (unsigned k = 0; k < act::KIND_COUNT; ++k) r.activations.emplace_back(act::kind_names[k], act::counts[k]);
  }
  return r;
}

using Summary = RunSummary;

Summary summarize(const RunResults& r) {
  Summary s{};
  const auto& table = figures::all();
  if (table.size() > Summary::kMaxFigures) throw std::logic_error("RunSummary: more figures than kMaxFigures");
  for (size_t i = 0; i < Summary::kMaxFigures; ++i)
    s.figures[i] = i < table.size() && table[i].over == figures::Over::Run ? table[i].value(r, 0)
                                                                          : std::nan("");
  s.p50 = r.lat.percentile(50);
  s.p99 = r.lat.percentile(99);
  s.ok = r.bringup_ok;
  s.stalled = r.stalled;
  s.device_needs_reset = r.device_needs_reset;
  s.interrupted = r.interrupted;
  s.interrupt_signal = r.interrupted ? r.interrupt_signal : 0;
  std::snprintf(s.headline, sizeof s.headline, "%s", run_headline(r).c_str());
  s.dbbuf_active = r.dbbuf_active;
  return s;
}

bool write_all(int fd, const void* p, size_t n) {
  const char* c = static_cast<const char*>(p);
  while (n) {
    const ssize_t w = ::write(fd, c, n);
    if (w <= 0) return false;
    c += w;
    n -= size_t(w);
  }
  return true;
}

}  // namespace

void set_progress_label(const std::string& label) { g_progress_label = label; }

double RunSummary::figure(const std::string& key) const {
  const figures::Figure& f = figures::find(key);
  return figures[&f - figures::all().data()];
}

// SystemC elaborates once per process: each run of a comparison simulates
// in a child process and sends its summary and JSON back through a pipe:
// the summary, the JSON's length, the JSON, then (json+) the "jobs" entries.
int run_in_child(const Config& config, const ChildRun& request, Summary& summary, std::string& json,
                 std::vector<std::string>& json_plus_jobs, std::string& error) {
  int fds[2];
  if (pipe(fds) != 0) {
    error = "pipe failed";
    return 1;
  }
  std::cout.flush();
  std::cerr.flush();
  const pid_t pid = fork();
  if (pid < 0) {
    error = "fork failed";
    return 1;
  }
  if (pid > 0) interrupt::add_child(pid);  // a signal to this process reaches the run
  if (pid == 0) {
    ::close(fds[0]);
    int code = 0;
    try {
      // A comparison writes no fio logs (they follow one run: refused before).
      std::string no_logs;
      const RunResults r = simulate(config, request.host_stats, nullptr, request.fio, no_logs);
      const Summary s = summarize(r);
      const std::string text = report::dump(results_json(r), {}, request.json_level);  // at "runs"."off" / "spec"
      write_all(fds[1], &s, sizeof s);
      const uint64_t length = text.size();
      write_all(fds[1], &length, sizeof length);
      write_all(fds[1], text.data(), text.size());
      if (request.json_plus)
        for (const report::Json& job :
             fio_json_plus_jobs(r, config, request.fio, request.groupid, request.extra_job_options)) {
          const std::string t = report::dump(job, fio_json_style(), 2);  // at "jobs"[i]
          const uint64_t n = t.size();
          write_all(fds[1], &n, sizeof n);
          write_all(fds[1], t.data(), t.size());
        }
    } catch (const ConfigError& e) {  // combinations only the assembled system can check
      std::fprintf(stderr, "nvmesim: error: %s\n", e.what());
      code = 2;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "nvmesim: error: %s\n", e.what());
      code = 1;
    }
    ::close(fds[1]);
    std::fflush(nullptr);
    _exit(code);
  }
  ::close(fds[1]);
  std::string data;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n <= 0) break;
    data.append(buf, size_t(n));
  }
  ::close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  interrupt::remove_child(pid);
  // A length-prefixed piece at `at`, or false when the data ends early.
  size_t at = sizeof(Summary);
  auto piece = [&](std::string& out) {
    uint64_t n = 0;
    if (data.size() < at + sizeof n) return false;
    std::memcpy(&n, data.data() + at, sizeof n);
    at += sizeof n;
    if (data.size() - at < n) return false;
    out = data.substr(at, size_t(n));
    at += size_t(n);
    return true;
  };
  if (WIFEXITED(status) && WEXITSTATUS(status) == 2) return 2;  // refused: the child said why
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || data.size() < sizeof(Summary) || !piece(json)) {
    error = "a simulation child process failed";
    return 1;
  }
  std::memcpy(&summary, data.data(), sizeof summary);
  json_plus_jobs.clear();
  for (std::string job; at < data.size() && piece(job);) json_plus_jobs.push_back(job);
  return 0;
}

bool run_in_child(const Config& config, bool host_stats, Summary& summary, std::string& json,
                  std::string& error) {
  ChildRun request;
  request.host_stats = host_stats;
  std::vector<std::string> unused;
  const int code = run_in_child(config, request, summary, json, unused, error);
  if (code == 2) error = "the configuration was refused";
  return code == 0;
}

namespace {

// A run's outcome: its exit code, and whether its results were written
// (only then are the output files renamed into place).
struct Outcome {
  int code;
  bool written;
};

// spec / off, or -1 when there is none (off is 0 or n/a): the table shows
// "-", the JSON null.
double ratio(double spec, double off) { return off > 0 && spec >= 0 ? spec / off : -1; }

// The parameters the user set that the comparison's header does not show.
std::string other_settings(const Config& c) {
  // The backend shown is the device's (device_backend.h).
  static const char* const shown_in_header[] = {"rw", "bs", "iodepth", "numjobs",
                                                "number_ios", "hv.exit_mmio", "hv.cpu_ghz", "preset"};
  const std::string backend = backend_value_param(c, "backend");
  std::string out;
  for (const ParamSpec& spec : c.registry().all()) {
    if (!c.is_set(spec.name) || c.from_preset(spec.name) || spec.name == backend ||
        std::find(std::begin(shown_in_header), std::end(shown_in_header), spec.name) != std::end(shown_in_header))
      continue;
    out += (out.empty() ? "" : " ") + spec.name + "=" + c.text(spec.name);
  }
  return out;
}

// The comparison's first line when a signal cut it short.
std::string interrupted_mark(int sig, int ran) {
  return std::string("INTERRUPTED by ") + interrupt::signal_name(sig) + ": " + std::to_string(ran) +
         " of 2 runs started; a run cut short covers its simulated time so far, '-' marks one not run";
}

Outcome run_default_comparison(const Config& base, const RunOptions& options, std::ostream& out) {
  const char* modes[2] = {"off", "spec"};
  Summary s[2]{};
  std::string json[2];
  std::vector<std::string> json_plus_jobs[2];
  const bool json_plus = options.output_format == "json+";
  int ran = 0;  // a signal ends the comparison after the run it cut short
  for (int k = 0; k < 2 && !interrupt::received(); ++k, ++ran) {
    Config c = base;
    c.set("nvme.dbbuf", modes[k]);
    g_progress_label = std::string("dbbuf=") + modes[k];
    ChildRun request;
    request.host_stats = options.host_stats;
    request.fio = options.fio.get();
    // json+: each run is a group of fio jobs, as fio's new_group makes them.
    request.json_plus = json_plus;
    request.groupid = k * (options.fio ? options.fio->jobs.back().group + 1 : 1);  // after the off run's groups
    request.extra_job_options = {{"nvme.dbbuf", modes[k]}};
    std::string error;
    const int child = run_in_child(c, request, s[k], json[k], json_plus_jobs[k], error);
    if (child != 0) {
      if (interrupt::received()) break;  // the child died of it before it could answer
      if (child == 2) return {2, false};  // refused; the child printed the one-line error
      std::cerr << "nvmesim: error: " << error << "\n";
      return {1, false};
    }
    // A signal to the child alone (not to this process) cut its run short:
    // the comparison is as interrupted as if this process had received it.
    if (s[k].interrupted) {
      ++ran;
      break;
    }
  }
  // Interrupted: a run was cut short, or one never started. A signal after
  // both runs finished leaves a complete comparison, and says nothing.
  int sig = 0;
  for (int k = 0; k < ran && !sig; ++k)
    if (s[k].interrupted) sig = s[k].interrupt_signal ? s[k].interrupt_signal : SIGTERM;
  if (!sig && ran < 2) sig = interrupt::received();
  const bool stalled = (ran > 0 && s[0].stalled) || (ran > 1 && s[1].stalled);
  const bool needs_reset = (ran > 0 && s[0].device_needs_reset) || (ran > 1 && s[1].device_needs_reset);
  bool failed = false;
  bool bringup_failed = false;
  for (int k = 0; k < ran; ++k) {
    failed = failed || s[k].figure("io_errors") || s[k].figure("verify.errors");
    bringup_failed = bringup_failed || !s[k].ok;
  }
  failed = failed || bringup_failed;  // the simulated system failed: exit 4
  const int code = sig ? 128 + sig : options.fail_on_stall && stalled ? 3 : failed ? 4 : 0;
  // A run that went wrong says so first, before any figure.
  std::string headline;
  for (int k = 0; k < ran; ++k)
    if (s[k].headline[0])
      headline += std::string(headline.empty() ? "" : "\n") + "dbbuf=" + modes[k] + ": " + s[k].headline;
  // The headline figures: JSON key (dotted, as in the runs' documents), row
  // label, each run's value, printf format.
  struct Figure {
    const char *key, *label;
    double v[2];
    const char* format;
  };
  auto pair = [&](auto field) { return std::array<double, 2>{field(s[0]), field(s[1])}; };
  std::vector<Figure> figures;
  auto add = [&](const char* key, const char* label, std::array<double, 2> v, const char* format) {
    figures.push_back({key, label, {v[0], v[1]}, format});
  };
  // A derived figure of both runs; an undefined one (a hit rate without the
  // buffer) is -1: "n/a" in the table, null in the JSON.
  auto derived = [&](const char* key, const char* label, const char* format) {
    add(key, label, pair([key](const Summary& x) {
          const double v = x.figure(key);
          return std::isnan(v) ? -1 : v;
        }),
        format);
  };
  derived("iops", "IOPS", "%.0f");
  derived("per_io.sq_mmio", "SQ doorbell exits per I/O", "%.3f");
  derived("per_io.cq_mmio", "CQ doorbell exits per I/O", "%.3f");
  derived("per_io.exits", "doorbell exits per I/O", "%.3f");
  derived("eventidx.sq_hit_rate", "SQ EventIdx hit rate", "%");
  derived("eventidx.cq_hit_rate", "CQ EventIdx hit rate", "%");
  add("lat_ns.percentile.50.000000", "latency p50 (ns)", pair([](const Summary& x) { return double(x.p50); }), "%.0f");
  add("lat_ns.percentile.99.000000", "latency p99 (ns)", pair([](const Summary& x) { return double(x.p99); }), "%.0f");
  auto figure_ratio = [&](const Figure& f) { return ran > 1 ? ratio(f.v[1], f.v[0]) : -1; };
  if (options.output_format != "normal") {
    const char* outcome = bringup_failed ? "bringup_failed"
                          : stalled     ? "stalled"
                          : needs_reset ? "device_needs_reset"
                          : failed      ? "io_errors"
                          : sig         ? "interrupted"
                                        : "ok";
    report::Json doc;
    doc["experiment"] = "default: doorbell buffer off vs spec";
    doc["outcome"] = outcome;
    // The first line of the text report, as one run's "headline".
    doc["headline"] = (sig ? interrupted_mark(sig, ran) + (headline.empty() ? "" : "\n") : std::string()) + headline;
    if (sig) doc["interrupted"] = interrupt::signal_name(sig);
    // Each run's document as its child process wrote it.
    doc["runs"] = {{"off", ran > 0 ? report::raw(json[0]) : report::Json(nullptr)},
                   {"spec", ran > 1 ? report::raw(json[1]) : report::Json(nullptr)}};
    // spec / off of the text table's figures; null when off is 0 or n/a.
    report::Json& ratios = doc["ratio_spec_to_off"] = report::Json::object();
    for (const Figure& f : figures) {
      const double q = figure_ratio(f);
      ratios[f.key] = q < 0 ? report::Json(nullptr) : report::fixed(q, 6);
    }
    if (!json_plus) {
      out << report::dump(doc) << "\n";
    } else {
      // fio's json+ layout: both runs' jobs (groupid 0: off, 1: spec), and
      // this document under "nvmesim".
      std::vector<std::string> jobs;
      for (int k = 0; k < ran; ++k) jobs.insert(jobs.end(), json_plus_jobs[k].begin(), json_plus_jobs[k].end());
      write_fio_json_plus_doc(options.fio.get(), jobs, report::dump(doc, {}, 1), out);
    }
    return {code, true};
  }
  if (sig) out << interrupted_mark(sig, ran) << "\n";
  if (!headline.empty()) out << headline << "\n";
  out << "nvmesim default experiment: ";
  if (options.fio && options.fio->jobs.size() > 1) {
    // A job file of several sections: each by its own options as written,
    // the [global] ones apart (the run's rw, iodepth... are only the first's).
    out << options.fio->jobs.size() << " job sections:";
    for (const FioJob& j : options.fio->jobs) {
      out << " [" << j.name << "]";
      for (const auto& [name, value] : j.options) out << " " << name << (value.empty() ? "" : "=") << value;
      out << ";";
    }
    out << " global:";
    for (const auto& [name, value] : options.fio->global_options)
      out << " " << name << (value.empty() ? "" : "=") << value;
    out << ", backend=" << base.text(backend_value_param(base, "backend"));
  } else {
    out << "rw=" << base.text("rw") << " bs=" << base.text("bs") << " iodepth=" << base.text("iodepth")
        << " numjobs=" << base.text("numjobs") << " backend=" << base.text(backend_value_param(base, "backend"))
        << " number_ios=" << base.text("number_ios");
  }
  out << ", MMIO doorbell exit " << base.text("hv.exit_mmio") << " at " << base.text("hv.cpu_ghz")
      << " GHz\n";
  out << model_line(base);  // the presets the run is built on
  if (const std::string more = other_settings(base); !more.empty()) out << "also set: " << more << "\n";
  out << "\n";
  char line[256];
  std::snprintf(line, sizeof line, "%-28s %14s %14s %10s\n", "", "dbbuf=off", "dbbuf=spec", "spec/off");
  out << line;
  auto cell = [](double v, const char* format) {
    char b[32];
    if (std::strcmp(format, "%") == 0) {
      if (v < 0) return std::string("n/a");
      std::snprintf(b, sizeof b, "%.1f%%", v * 100);
    } else {
      std::snprintf(b, sizeof b, format, v);
    }
    return std::string(b);
  };
  for (const Figure& f : figures) {
    const double q = figure_ratio(f);
    std::snprintf(line, sizeof line, "%-28s %14s %14s %10s\n", f.label, ran > 0 ? cell(f.v[0], f.format).c_str() : "-",
                  ran > 1 ? cell(f.v[1], f.format).c_str() : "-", q < 0 ? "-" : cell(q, "%.3f").c_str());
    out << line;
  }
  for (int k = 0; k < ran; ++k)
    if (s[k].stalled) out << "dbbuf=" << modes[k] << ": the run stalled (see --output-format=json)\n";
  out << "\nSet --nvme.dbbuf (off or spec), or give --single-run, for one run's full report.\n";
  return {code, true};
}

Outcome run_one(const Config& config, const RunOptions& options, std::ostream& out) {
  Traces traces;
  const bool tracing = !options.vcd_file.empty() || !options.timeline_file.empty();
  if (tracing) {
    const std::string e = open_traces(config, options, traces);
    if (!e.empty()) {
      std::cerr << "nvmesim: error: " << e << "\n";
      return {2, false};
    }
  }
  RunResults r;
  std::string log_error;
  try {
    r = simulate(config, options.host_stats, tracing ? &traces : nullptr, options.fio.get(), log_error);
  } catch (const TraceSignalsError& e) {
    std::cerr << "nvmesim: error: " << e.what() << "\n";
    return {2, false};
  } catch (const ConfigError& e) {  // combinations only the assembled system can check
    std::cerr << "nvmesim: error: " << e.what() << "\n";
    return {2, false};
  }
  if (tracing) {
    const uint64_t late = (traces.vcd ? traces.vcd->late_events() : 0) +
                          (traces.timeline ? traces.timeline->late_events() : 0);
    if (late) std::cerr << "nvmesim: warning: " << late << " trace events arrived after later ones and were moved forward\n";
    if (options.trace_start_ps >= traces.end_ps && options.trace_start_ps > 0)
      std::cerr << "nvmesim: warning: --trace-start " << format_time_ns(double(options.trace_start_ps) / 1000.0)
                << " is not before the end of the run (" << format_time_ns(double(traces.end_ps) / 1000.0)
                << " simulated): the traces hold no events\n";
    if (const std::string e = traces.commit(); !e.empty()) {
      std::cerr << "nvmesim: error: " << e << "\n";
      return {exit_code::kOutput, false};
    }
  }
  if (options.output_format == "json+") {
    write_fio_json_plus(r, config, options.fio.get(), out);
  } else if (options.output_format == "json") {
    write_json(r, out);
    out << "\n";
  } else {
    write_normal(r, out);
  }
  // The exit status says what the document says: a signal that came after
  // the run finished leaves a complete, uninterrupted document (exit as it).
  if (!log_error.empty()) std::cerr << "nvmesim: error: " << log_error << "\n";
  if (r.interrupted) return {128 + (r.interrupt_signal ? r.interrupt_signal : SIGTERM), true};
  if (!r.bringup_ok) return {exit_code::kFailed, true};
  if (r.stalled && options.fail_on_stall) return {3, true};
  if (r.count("io_errors") || r.count("verify.errors")) return {4, true};
  if (!log_error.empty()) return {exit_code::kOutput, true};
  return {0, true};
}

}  // namespace

int run_experiment(const Config& config, const RunOptions& options, std::ostream& out) {
  config.validate_all();
  for (const std::string& line : options.notices) std::cerr << line << "\n";
  // --output: written under a temporary name, renamed once complete.
  PendingFile pending;
  std::ofstream file;
  if (!options.output_file.empty()) {
    std::string e = pending.create(options.output_file);
    if (e.empty()) {
      file.open(pending.temp_path());
      if (!file) e = std::strerror(errno);
    }
    if (!e.empty()) {
      std::cerr << "nvmesim: error: --output: cannot open " << quoted(options.output_file)
                << " for writing (" << e << ")\n";
      return 2;
    }
  }
  std::ostream& results = options.output_file.empty() ? out : file;
  Outcome o{0, false};
  if (options.repeat > 1) {
    const RepeatOutcome r = run_repeat(config, options, results);  // platform/system/repeat.h
    o = {r.code, r.written};
  } else {
    o = options.default_experiment ? run_default_comparison(config, options, results)
                                   : run_one(config, options, results);
  }
  if (options.output_file.empty() || !o.written) return o.code;
  file.close();
  if (!file) {
    std::cerr << "nvmesim: error: --output: error writing " << quoted(options.output_file) << "\n";
    return o.code ? o.code : exit_code::kOutput;
  }
  if (const std::string e = pending.commit(); !e.empty()) {
    std::cerr << "nvmesim: error: --output: cannot rename the finished file to "
              << quoted(options.output_file) << " (" << e << ")\n";
    return o.code ? o.code : exit_code::kOutput;
  }
  return o.code;
}

}  // namespace nvmesim::platform
