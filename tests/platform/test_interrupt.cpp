// SIGINT and SIGTERM sent to a long run: it stops at the next safe point,
// writes the results so far marked as interrupted, closes its traces
// cleanly and exits 128 + the signal; a sweep keeps its finished points.
// Each run here would take minutes uninterrupted; each wait is bounded.
#include <catch2/catch.hpp>

#include <fstream>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "nvmesim/platform/sweep/sweep_json.h"
#include "tests/platform/run_binary.h"
#include "tests/platform/spawn_binary.h"
#include "tests/platform/test_sweep_support.h"

using nvmesim::test::Csv;
using nvmesim::test::json_number;
using nvmesim::test::ScratchDir;
using nvmesim::test::slurp;

namespace {

const std::string kSource = NVMESIM_SOURCE_DIR;

struct Interrupted {
  int exit_code = -1;  // -1: still running after the bound (then killed)
  std::string out, err;
};

// Starts nvmesim with `args`, waits until `ready` exists (a file the run
// writes early) or `delay` passes, sends `sig`, and waits up to 30 s.
// `delay` after the start, or with `after_first_child`, `delay` after the
// process has forked its first child (the default comparison's first run):
// a signal then lands in that run whatever the machine's speed.
Interrupted interrupt_run(const std::vector<std::string>& args, int sig, const ScratchDir& d,
                          std::chrono::milliseconds delay = std::chrono::milliseconds(700),
                          bool after_first_child = false) {
  const std::string out = d / "stdout", err = d / "stderr";
  const pid_t pid = nvmesim::test::spawn_nvmesim(args, out, err);
  REQUIRE(pid >= 0);
  if (after_first_child) {
    const std::string children = "/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children";
    const auto w0 = std::chrono::steady_clock::now();
    for (;;) {
      std::ifstream in(children);
      std::string first;
      if ((in >> first) || std::chrono::steady_clock::now() - w0 > std::chrono::seconds(20)) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }
  std::this_thread::sleep_for(delay);
  ::kill(pid, sig);
  Interrupted r;
  int status = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (;;) {
    const pid_t w = ::waitpid(pid, &status, WNOHANG);
    if (w == pid) {
      r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status) + 1000;
      break;
    }
    if (std::chrono::steady_clock::now() - t0 > std::chrono::seconds(30)) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

const std::string kLong = "--number_ios=400000000";  // minutes of wall time

}  // namespace

TEST_CASE("interrupt: SIGINT/SIGTERM stop a run, which reports what it measured", "[interrupt]") {
  struct Case {
    int sig;
    int exit_code;
    const char* name;
  };
  for (const Case& c : {Case{SIGINT, 130, "SIGINT"}, Case{SIGTERM, 143, "SIGTERM"}}) {
    ScratchDir d;
    const auto r = interrupt_run({kLong, "--single-run", "--output-format=json", "--output", d / "out.json", "--vcd",
                                  d / "t.vcd", "--timeline", d / "t.json"},
                                 c.sig, d);
    INFO(c.name << "\n" << r.err);
    CHECK(r.exit_code == c.exit_code);
    CHECK(r.err.empty());
    const std::string json = slurp(d / "out.json");
    CHECK(json.find(std::string("\"interrupted\": \"") + c.name + "\"") != std::string::npos);
    // A whole JSON document with the I/Os done so far.
    CHECK_NOTHROW(nvmesim::platform::sweep::parse_json(json));
    const double ios = json_number(json, "ios");
    CHECK(ios > 0);
    CHECK(ios < 400000000);
    CHECK(json_number(json, "iops") > 0);
    // The traces end cleanly: the VCD's last line is a whole timestamp or
    // value change, the timeline a whole JSON document.
    const std::string vcd = slurp(d / "t.vcd");
    REQUIRE(vcd.size() > 2);
    CHECK(vcd.back() == '\n');
    CHECK(vcd.find("$enddefinitions $end") != std::string::npos);
    CHECK_NOTHROW(nvmesim::platform::sweep::parse_json(slurp(d / "t.json")));
  }
}

TEST_CASE("interrupt: the text report says it was interrupted", "[interrupt]") {
  ScratchDir d;
  const auto r = interrupt_run({kLong, "--nvme.dbbuf=spec"}, SIGINT, d);
  INFO(r.err);
  CHECK(r.exit_code == 130);
  CHECK(r.out.rfind("INTERRUPTED by SIGINT at ", 0) == 0);
  CHECK(r.out.find("doorbells (measured phase, I/O queues):") != std::string::npos);
}

TEST_CASE("interrupt: the default comparison passes the signal to its run and reports it", "[interrupt]") {
  ScratchDir d;
  // No experiment option but the seed (no argument at all runs three seeds):
  // the default comparison, each run in a child. Signalled 20 ms after the
  // first run's child exists: its 200000 I/Os take 0.5 s of wall time on an
  // idle 2-core machine (release build). A fixed 300 ms from the start was
  // already past the first run there.
  const auto r = interrupt_run({"--seed=1"}, SIGTERM, d, std::chrono::milliseconds(20), true);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 143);
  CHECK(r.out.rfind("INTERRUPTED by SIGTERM: 1 of 2 runs started", 0) == 0);
  CHECK(r.out.find("IOPS") != std::string::npos);
  // Under AddressSanitizer the child that stops mid-simulation may add ASan's
  // own warning about SystemC's coroutine stacks; nvmesim itself says nothing.
  if (NVMESIM_SANITIZED)
    CHECK(r.err.find("nvmesim") == std::string::npos);
  else
    CHECK(r.err.empty());
}

TEST_CASE("interrupt: a sweep keeps its finished points and exits 130", "[interrupt][sweep]") {
  ScratchDir d;
  // Point 0 finishes in well under a second; point 1 would take minutes.
  const auto r = interrupt_run({"sweep", "--grid", "number_ios=300,400000000", "--jobs", "1", "--out", d / "sw"},
                               SIGINT, d, std::chrono::milliseconds(1500));
  INFO(r.err);
  CHECK(r.exit_code == 130);
  CHECK(r.err.find("sweep: interrupted by SIGINT: 1 of 2 points to run finished") != std::string::npos);
  const Csv csv(slurp(d / "sw/results.csv"));
  REQUIRE(csv.rows.size() == 2);
  CHECK(csv.at(0, "status") == "ok");
  CHECK(csv.at(0, "ios") == "300");
  CHECK(csv.at(1, "status") != "ok");
}

TEST_CASE("interrupt: every long subcommand hears SIGINT, SIGTERM and SIGHUP, exits 128 + the signal, "
          "says it was interrupted and leaves no temp file",
          "[interrupt]") {
  ScratchDir big;
  // A timeline large enough that making its page takes seconds: 400k
  // complete events on one track.
  {
    std::ofstream t(big / "big.json");
    t << "{\"traceEvents\":[{\"ph\":\"M\",\"name\":\"thread_name\",\"tid\":1,\"args\":{\"name\":\"q1\"}}";
    for (int k = 0; k < 400000; ++k)
      t << ",{\"ph\":\"X\",\"name\":\"exit\",\"tid\":1,\"ts\":" << k << ",\"dur\":0.5}";
    t << "]}\n";
  }
  struct Command {
    const char* name;
    std::vector<std::string> args;
    const char* says;  // on standard output or error
  };
  const std::vector<Command> commands = {
      {"run", {kLong, "--single-run", "--output-format=json", "--output", "OUT/out.json"}, "\"interrupted\": \""},
      {"eventidx", {"eventidx", "--qsize", "2048", "--exhaustive"}, "result: INTERRUPTED"},
      {"timeline-html", {"timeline-html", big / "big.json", "OUT/page.html"}, "interrupted by "},
      // Two searches of about 5 s each (uninterrupted: 10 s, 360 MB at most).
      {"verify",
       {"verify", "--qsize", "6", "--commands", "20", "--memory-model=all", "--max-states=3000000", "--vcd",
        "OUT/v.vcd", "--timeline", "OUT/t.json"},
       "memory-model=x86: INTERRUPTED by "},
      // validate: during the calibration (the preset's), during the rows,
      // and over published figures; scenario during its calibration, in
      // text and JSON; a sweep's points.
      {"validate", {"validate", kSource + "/validation/qemu/results.csv", "--preset", "qemu-7.2"},
       "INTERRUPTED by "},
      {"validate rows", {"validate", kSource + "/validation/qemu/results.csv", "--no-calibrate"}, " rows judged"},
      {"validate json", {"validate", kSource + "/validation/qemu/results.csv", "--output-format", "json"},
       "\"interrupted\": \""},
      {"validate published", {"validate", kSource + "/validation/published/figures.csv"}, " sources judged"},
      {"scenario", {"scenario", "qemu-vendor"}, "INTERRUPTED by "},
      {"scenario json", {"scenario", "real-nvme", "--output-format=json"}, "\"interrupted\": \""},
      {"sweep", {"sweep", "--grid", "numjobs=1,2", kLong, "--out", "OUT/sw"}, "sweep: interrupted by "},
  };
  struct Signal {
    int sig, exit_code;
    const char* name;
  };
  size_t cases = 0;
  for (const Command& c : commands)
    for (const Signal& s : {Signal{SIGINT, 130, "SIGINT"}, Signal{SIGTERM, 143, "SIGTERM"},
                            Signal{SIGHUP, 129, "SIGHUP"}}) {
      ScratchDir d;
      std::vector<std::string> args;
      for (std::string a : c.args) {
        if (a.rfind("OUT/", 0) == 0) a = d / a.substr(4);
        args.push_back(a);
      }
      const auto r = interrupt_run(args, s.sig, d, std::chrono::milliseconds(400));
      INFO(c.name << " <- " << s.name << "\n" << r.out << r.err);
      ++cases;
      CHECK(r.exit_code == s.exit_code);
      // What it says: standard output and error, and the run's --output.
      const std::string said = r.out + r.err + (std::filesystem::exists(d / "out.json") ? slurp(d / "out.json") : "");
      CHECK(said.find(c.says) != std::string::npos);
      CHECK(said.find(s.name) != std::string::npos);
      // A sweep's point cut short by the signal is not a failed result.
      if (std::string(c.name) == "sweep" && std::filesystem::exists(d / "sw/results.csv"))
        CHECK(slurp(d / "sw/results.csv").find(",failed,") == std::string::npos);
      // No temp file (".NAME.XXXXXX" beside an output) is left behind.
      for (const auto& e : std::filesystem::directory_iterator(d.path))
        CHECK(e.path().filename().string().rfind('.', 0) != 0);
    }
  CHECK(cases == 3 * commands.size());
}

TEST_CASE("interrupt: verify stops its search at once and states what it covered, JSON likewise", "[interrupt][verify]") {
  ScratchDir d;
  // One search of about 5 s uninterrupted (--qsize 6 --commands 20).
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = interrupt_run({"verify", "--qsize", "6", "--commands", "20", "--max-states=3000000",
                                "--output-format=json", "--time=off"},
                               SIGTERM, d, std::chrono::milliseconds(400));
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  INFO(r.out << r.err);
  CHECK(r.exit_code == 143);
  CHECK(r.err.empty());
  CHECK(wall < 3.0);  // 0.4 s, then the search's next check (every 4096 states) and the exit
  CHECK_NOTHROW(nvmesim::platform::sweep::parse_json(r.out));
  CHECK(r.out.find("\"result\": \"interrupted\"") != std::string::npos);
  CHECK(r.out.find("\"interrupted\": \"SIGTERM\"") != std::string::npos);
  CHECK(r.out.find("\"complete\": false") != std::string::npos);
  const double states = json_number(r.out, "states"), expanded = json_number(r.out, "expanded");
  CHECK(states > 0);
  CHECK(expanded > 0);
  CHECK(expanded <= states);
  CHECK(states < 3000000);
}
