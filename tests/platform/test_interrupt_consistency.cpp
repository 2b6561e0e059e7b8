// An interrupted run's document keeps the invariants docs/metrics.md
// promises, whenever the signal comes: the run drains as fio's jobs do (no
// new I/O, those in flight complete), so every doorbell update is MMIO or
// suppressed, every completion consumed is counted, no vCPU or thread is
// busier than the interval, and the I/Os reaped equal the completions.
// Generated over signals, moments, devices, queue depths, jobs and the
// comparison's child process.
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

#include <nlohmann/json.hpp>

#include "run_binary.h"
#include "text_file.h"

using Json = nlohmann::json;
using nvmesim::test::slurp;

namespace {

// Runs nvmesim ARGS, sends SIG to the process (or, `child`, to the
// comparison's first child) once that process catches the signal (its
// SigCgt in /proc/PID/status: nvmesim's main has installed its handler; a
// shell's background child ignores SIGINT until it execs) and has used
// `delay` seconds of CPU time (utime + stime of /proc/PID/stat: a moment in
// the run's own progress, whatever else loads the machine), returns (exit
// code, stdout). Where /proc has no SigCgt, the process having exec'ed
// nvmesim stands for it. After 2000 polls the signal is sent anyway.
std::pair<int, std::string> interrupted_run(const std::string& args, const std::string& sig, double delay,
                                            bool child) {
  const std::string base = "/tmp/nvmesim_icons_" + std::to_string(::getpid());
  const std::string target = child ? "T=; while [ -z \"$T\" ]; do T=$(pgrep -P $P); sleep 0.01; done; " : "T=$P; ";
  const long ticks = long(delay * double(::sysconf(_SC_CLK_TCK)) + 0.5);  // utime + stime, fields 14 and 15
  const int signo = sig == "INT" ? 2 : 15;
  std::ofstream(base + ".sh")
      << NVMESIM_BINARY " " << args << " >" << base << ".out 2>/dev/null & P=$!; " << target << "n=0; "
      << "while [ $n -lt 2000 ] && [ -d /proc/$T ]; do "
      << "m=$(awk '/^SigCgt:/ {print $2}' /proc/$T/status 2>/dev/null); "
      << "t=$(awk '{print $14 + $15}' /proc/$T/stat 2>/dev/null); "
      << "if [ -n \"$m\" ]; then c=$(( 0x$m >> " << (signo - 1) << " & 1 )); "
      << "else c=$(grep -c '^nvmesim' /proc/$T/comm 2>/dev/null); fi; "  // no SigCgt: at least exec'ed
      << "[ \"$c\" = 1 ] && [ -n \"$t\" ] && [ $t -ge " << ticks << " ] && break; sleep 0.005; n=$((n+1)); done; "
      << "kill -" << sig << " $T; wait $P; echo $? >" << base << ".rc\n";
  REQUIRE(std::system(("timeout -s KILL 60 sh " + base + ".sh").c_str()) == 0);
  std::pair<int, std::string> r{std::stoi(slurp(base + ".rc")), slurp(base + ".out")};
  for (const char* ext : {".sh", ".out", ".rc"}) std::remove((base + ext).c_str());
  return r;
}

// The invariants of one run's document.
void check_run(const Json& run, bool nvme) {
  CHECK(run["outcome"] == "interrupted");
  const double ios = run["ios"].get<double>();
  CHECK(ios > 0);
  for (const char* dir : {"sq", "cq"}) {
    const Json& d = run["doorbells"][dir];
    INFO(dir << ": " << d.dump());
    CHECK(d["updates"].get<double>() == d["mmio"].get<double>() + d["suppressed"].get<double>());
  }
  for (const Json& v : run["utilization"]["vcpu"]) {
    CHECK(v["busy"].get<double>() <= 1.0);
    CHECK(v["busy"].get<double>() == Approx(v["guest"].get<double>() + v["exits"].get<double>()).margin(2e-6));
  }
  for (const Json& t : run["utilization"]["device"]) CHECK(t["busy"].get<double>() <= 1.0);
  if (nvme) {
    double completions = 0;
    for (auto it = run["stats"]["driver"].begin(); it != run["stats"]["driver"].end(); ++it)
      if (it.key().rfind("cq", 0) == 0) completions += it.value()["completions"].get<double>();
    CHECK(completions == ios);
  }
}

}  // namespace

TEST_CASE("interrupt consistency: an interrupted document keeps every invariant, whenever the signal comes",
          "[interrupt][binary]") {
  struct Case {
    std::string args;
    bool nvme, comparison;
  };
  const std::vector<Case> configs = {
      {"--single-run --nvme.dbbuf=spec", true, false},
      {"--single-run --nvme.dbbuf=off --iodepth=1", true, false},
      {"--single-run --nvme.dbbuf=spec --numjobs=2 --iodepth=8", true, false},
      {"--single-run --nvme.dbbuf=vendor --hv.notify=ioeventfd --guest.irq_coalescing_thr=7 "
       "--guest.irq_coalescing_time=100us",
       true, false},
      {"--single-run --device=virtio-blk --iodepth=16", false, false},
      {"", true, true},  // the comparison; its off run's child gets the signal
  };
  // Signals at different moments of the run's CPU time (early, later).
  const std::vector<std::pair<std::string, double>> moments = {{"INT", 0.12}, {"TERM", 0.4}};
  size_t runs = 0;
  for (const Case& c : configs)
    for (const auto& [sig, delay] : moments) {
        const std::string args = c.args + " --number_ios=4000000 --output-format=json";
        INFO("SIG" << sig << " after " << delay << " s: nvmesim " << args);
        const auto [code, out] = interrupted_run(args, sig, delay, c.comparison);
        ++runs;
        CHECK(code == 128 + (sig == "INT" ? 2 : 15));
        const Json doc = Json::parse(out);
        CHECK(doc["outcome"] == "interrupted");
        if (c.comparison) {
          check_run(doc["runs"]["off"], c.nvme);
          CHECK(doc["runs"]["spec"].is_null());
        } else {
          check_run(doc, c.nvme);
        }
      }
  CHECK(runs == 12);
}

TEST_CASE("interrupt consistency: a signal after the run finished leaves its complete document and exit status",
          "[interrupt][binary]") {
  // The results (over 64 KiB of json+) wait in a full pipe whose reader
  // waits for a go: the signal comes once the process is blocked writing
  // them (its wchan, pipe_write), so the run has finished, however loaded
  // the machine (after 20 s it is sent anyway and the test says so).
  const std::string base = "/tmp/nvmesim_late_" + std::to_string(::getpid());
  for (const std::string args : {"--single-run --numjobs=16 --number_ios=100 --output-format=json+",
                                 "--numjobs=16 --number_ios=100 --output-format=json+"}) {
    for (const std::string sig : {"INT", "TERM"}) {
      INFO("SIG" << sig << " after the run: nvmesim " << args);
      for (const char* ext : {".go", ".pid", ".rc", ".waited"}) std::remove((base + ext).c_str());
      std::ofstream(base + ".sh")
          << "( " NVMESIM_BINARY " " << args << " 2>/dev/null & echo $! >" << base << ".pid; wait $!; echo $? >"
          << base << ".rc ) | (while [ ! -f " << base << ".go ]; do sleep 0.01; done; cat >" << base << ".out) & "
          << "while [ ! -s " << base << ".pid ]; do sleep 0.01; done; P=$(cat " << base << ".pid); n=0; "
          << "until grep -q pipe_write /proc/$P/wchan 2>/dev/null || [ $n -ge 2000 ]; do sleep 0.01; n=$((n+1)); done; "
          << "echo $n >" << base << ".waited; kill -" << sig << " $P; touch " << base << ".go; wait\n";
      REQUIRE(std::system(("timeout -s KILL 60 sh " + base + ".sh").c_str()) == 0);
      CHECK(std::stoi(slurp(base + ".waited")) < 2000);  // it did block on the pipe
      CHECK(std::stoi(slurp(base + ".rc")) == 0);
      const Json doc = Json::parse(slurp(base + ".out"));
      CHECK(doc["nvmesim"]["outcome"] == "ok");
      CHECK((!doc["nvmesim"].contains("interrupted") || doc["nvmesim"]["interrupted"].is_null()));
    }
  }
  for (const char* ext : {".sh", ".out", ".rc", ".pid", ".go", ".waited"}) std::remove((base + ext).c_str());
}
