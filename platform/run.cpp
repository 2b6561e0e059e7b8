#include "platform/run.h"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <sstream>
#include <string>
#include <systemc>
#include <tuple>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "platform/fio_job.h"
#include "platform/fio_json.h"
#include "platform/params.h"
#include "platform/results.h"
#include "platform/system.h"
#include "traces/timeline_writer.h"
#include "traces/vcd_writer.h"

namespace nvmesim::platform {

namespace {

// --vcd / --timeline: the files and writers of one run.
struct Traces {
  traces::TraceOptions options;
  std::string vcd_name, timeline_name;
  std::FILE* vcd_file = nullptr;
  std::FILE* timeline_file = nullptr;
  std::unique_ptr<traces::VcdWriter> vcd;
  std::unique_ptr<traces::TimelineWriter> timeline;
  traces::TracerTee tee;
  ~Traces() {
    if (vcd_file) std::fclose(vcd_file);
    if (timeline_file) std::fclose(timeline_file);
  }
};

// Opens the trace files; "" or a one-line error.
std::string open_traces(const Config& config, const RunOptions& o, Traces& t) {
  t.options.start_ps = o.trace_start_ps;
  t.options.stop_ps = o.trace_stop_ps;
  t.options.signals = o.trace_signals;
  t.options.quantum_ps = uint64_t(config.time_ns("sim.quantum") * 1000.0 + 0.5);
  auto open = [](const char* option, const std::string& name, std::FILE*& f) -> std::string {
    f = std::fopen(name.c_str(), "w");
    if (!f) return std::string("--") + option + ": cannot open '" + name + "' for writing (" + std::strerror(errno) + ")";
    std::setvbuf(f, nullptr, _IOFBF, 1 << 20);  // large writes: traces are big
    return "";
  };
  if (!o.vcd_file.empty()) {
    if (auto e = open("vcd", o.vcd_file, t.vcd_file); !e.empty()) return e;
    t.vcd_name = o.vcd_file;
    t.vcd = std::make_unique<traces::VcdWriter>(t.vcd_file, t.options);
    t.tee.add(t.vcd.get());
  }
  if (!o.timeline_file.empty()) {
    if (auto e = open("timeline", o.timeline_file, t.timeline_file); !e.empty()) return e;
    t.timeline_name = o.timeline_file;
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

RunResults simulate(const Config& config, bool host_stats, Traces* traces = nullptr,
                    const FioJobs* fio = nullptr) {
  const auto wall0 = std::chrono::steady_clock::now();
  // Job sections with differing workloads: one Config per vCPU.
  std::vector<const Config*> job_configs;
  if (fio && fio->per_vcpu_workloads)
    for (unsigned j : fio->vcpu_job) job_configs.push_back(&fio->jobs[j].config);
  System system(config, job_configs);
  if (traces) {
    const unsigned vcpus = unsigned(system.vcpus().size());
    traces->tee.begin(vcpus, vcpus, unsigned(system.host_thread_count()));  // one I/O queue per vCPU
    const std::string bad = traces->options.unmatched();
    if (!bad.empty())
      throw TraceSignalsError("--trace-signals: '" + bad + "' matches no signal (names such as q1.shadow_sq_tail, vcpu0.state, host0.state, msix.vector1; timeline: q1.io, vcpu0.exit, host0.burst)");
    traces::set_active(&traces->tee);
  }
  RunResults r = system.run();
  if (traces) {
    traces->tee.end(sc_core::sc_time_stamp().value());
    traces::set_active(nullptr);
  }
  if (host_stats) {
    r.has_host = true;
    r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    r.peak_rss_bytes = peak_rss_bytes();
  }
  return r;
}

using Summary = RunSummary;

Summary summarize(const RunResults& r) {
  Summary s{};
  s.iops = r.iops();
  s.bw_bytes = r.bw_bytes();
  s.exits_per_io = r.per_io(r.exits.total_count_excluding_hlt());
  s.sq_per_io = r.per_io(r.sq.mmio);
  s.cq_per_io = r.per_io(r.cq.mmio);
  s.sq_hit = r.dbbuf_active ? RunResults::hit_rate(r.sq) : -1;
  s.cq_hit = r.dbbuf_active ? RunResults::hit_rate(r.cq) : -1;
  s.ios = r.ios;
  s.p50 = r.lat.percentile(50);
  s.p99 = r.lat.percentile(99);
  s.io_errors = r.io_errors;
  s.verify_errors = r.verify_errors;
  s.ok = r.bringup_ok;
  s.stalled = r.stalled;
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

// SystemC elaborates once per process: each run of a comparison simulates
// in a child process and sends its summary and JSON back through a pipe.
bool run_in_child(const Config& config, bool host_stats, Summary& summary, std::string& json,
                  std::string& error) {
  int fds[2];
  if (pipe(fds) != 0) {
    error = "pipe failed";
    return false;
  }
  std::cout.flush();
  std::cerr.flush();
  const pid_t pid = fork();
  if (pid < 0) {
    error = "fork failed";
    return false;
  }
  if (pid == 0) {
    ::close(fds[0]);
    int code = 0;
    try {
      const RunResults r = simulate(config, host_stats);
      const Summary s = summarize(r);
      std::ostringstream j;
      write_json(r, j, "    ");
      const std::string text = j.str();
      write_all(fds[1], &s, sizeof s);
      write_all(fds[1], text.data(), text.size());
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
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || data.size() < sizeof(Summary)) {
    error = "a simulation child process failed";
    return false;
  }
  std::memcpy(&summary, data.data(), sizeof summary);
  json = data.substr(sizeof summary);
  return true;
}

namespace {

std::string pct(double rate) {
  if (rate < 0) return "n/a";
  char b[32];
  std::snprintf(b, sizeof b, "%.1f%%", rate * 100);
  return b;
}

int run_default_comparison(const Config& base, const RunOptions& options, std::ostream& out) {
  const char* modes[2] = {"off", "spec"};
  Summary s[2];
  std::string json[2];
  for (int k = 0; k < 2; ++k) {
    Config c = base;
    c.set("nvme.dbbuf", modes[k]);
    std::string error;
    if (!run_in_child(c, options.host_stats, s[k], json[k], error)) {
      std::cerr << "nvmesim: error: " << error << "\n";
      return 1;
    }
  }
  const int code = options.fail_on_stall && (s[0].stalled || s[1].stalled) ? 3
                   : s[0].io_errors || s[0].verify_errors || s[1].io_errors || s[1].verify_errors
                       ? 4
                       : 0;
  // A run that went wrong says so first, before any figure.
  std::string headline;
  for (int k = 0; k < 2; ++k)
    if (s[k].headline[0])
      headline += std::string(headline.empty() ? "" : "\n") + "dbbuf=" + modes[k] + ": " + s[k].headline;
  if (options.output_format == "json") {
    const char* outcome = s[0].stalled || s[1].stalled ? "stalled"
                          : s[0].io_errors || s[0].verify_errors || s[1].io_errors ||
                                  s[1].verify_errors
                              ? "io_errors"
                              : "ok";
    out << "{\n  \"experiment\": \"default: doorbell buffer off vs spec\",\n  \"outcome\": \""
        << outcome << "\",\n  \"runs\": {\n";
    out << "    \"off\":\n" << json[0] << ",\n    \"spec\":\n" << json[1] << "\n  }\n}\n";
    return code;
  }
  if (!headline.empty()) out << headline << "\n";
  out << "nvmesim default experiment: rw=" << base.text("rw") << " bs=" << base.text("bs")
      << " iodepth=" << base.text("iodepth") << " numjobs=" << base.text("numjobs")
      << " backend=" << base.text("nvme.backend") << " number_ios=" << base.text("number_ios")
      << ", MMIO doorbell exit " << base.text("hv.exit_mmio") << " at " << base.text("hv.cpu_ghz")
      << " GHz\n\n";
  char line[256];
  std::snprintf(line, sizeof line, "%-28s %14s %14s\n", "", "dbbuf=off", "dbbuf=spec");
  out << line;
  auto row = [&](const char* name, const std::string& a, const std::string& b) {
    std::snprintf(line, sizeof line, "%-28s %14s %14s\n", name, a.c_str(), b.c_str());
    out << line;
  };
  auto num = [](double v, const char* f) {
    char b[32];
    std::snprintf(b, sizeof b, f, v);
    return std::string(b);
  };
  row("IOPS", num(s[0].iops, "%.0f"), num(s[1].iops, "%.0f"));
  row("SQ doorbell exits per I/O", num(s[0].sq_per_io, "%.3f"), num(s[1].sq_per_io, "%.3f"));
  row("CQ doorbell exits per I/O", num(s[0].cq_per_io, "%.3f"), num(s[1].cq_per_io, "%.3f"));
  row("doorbell exits per I/O", num(s[0].sq_per_io + s[0].cq_per_io, "%.3f"),
      num(s[1].sq_per_io + s[1].cq_per_io, "%.3f"));
  row("SQ EventIdx hit rate", pct(s[0].sq_hit), pct(s[1].sq_hit));
  row("CQ EventIdx hit rate", pct(s[0].cq_hit), pct(s[1].cq_hit));
  row("latency p50 (ns)", num(double(s[0].p50), "%.0f"), num(double(s[1].p50), "%.0f"));
  row("latency p99 (ns)", num(double(s[0].p99), "%.0f"), num(double(s[1].p99), "%.0f"));
  for (int k = 0; k < 2; ++k)
    if (s[k].stalled) out << "dbbuf=" << modes[k] << ": the run stalled (see --output-format=json)\n";
  out << "\nRun one configuration with any option (e.g. --nvme.dbbuf=spec) for the full report.\n";
  return code;
}

}  // namespace

int run_experiment(const Config& config, const RunOptions& options, std::ostream& out) {
  config.validate_all();
  for (const std::string& line : options.notices) std::cerr << line << "\n";
  if (options.default_experiment) return run_default_comparison(config, options, out);
  Traces traces;
  const bool tracing = !options.vcd_file.empty() || !options.timeline_file.empty();
  if (tracing) {
    const std::string e = open_traces(config, options, traces);
    if (!e.empty()) {
      std::cerr << "nvmesim: error: " << e << "\n";
      return 2;
    }
  }
  RunResults r;
  try {
    r = simulate(config, options.host_stats, tracing ? &traces : nullptr, options.fio.get());
  } catch (const TraceSignalsError& e) {
    std::cerr << "nvmesim: error: " << e.what() << "\n";
    return 2;
  } catch (const ConfigError& e) {  // combinations only the assembled system can check
    std::cerr << "nvmesim: error: " << e.what() << "\n";
    return 2;
  }
  if (tracing) {
    const uint64_t late = (traces.vcd ? traces.vcd->late_events() : 0) +
                          (traces.timeline ? traces.timeline->late_events() : 0);
    if (late) std::cerr << "nvmesim: warning: " << late << " trace events arrived after later ones and were moved forward\n";
    for (auto [f, option, name] : {std::tuple{traces.vcd_file, "--vcd", traces.vcd_name},
                                   std::tuple{traces.timeline_file, "--timeline", traces.timeline_name}})
      if (f && (std::ferror(f) || std::fflush(f) != 0)) {
        std::cerr << "nvmesim: error: " << option << ": error writing '" << name << "'\n";
        return 1;
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
  if (!r.bringup_ok) return 1;
  if (r.stalled && options.fail_on_stall) return 3;
  if (r.io_errors || r.verify_errors) return 4;
  return 0;
}

}  // namespace nvmesim::platform
