// An interrupted run says so where a reader looks first: its outcome
// ("interrupted"), its headline ("INTERRUPTED by SIG..."), the text
// report's first line and the exit status (128 + the signal), whoever got
// the signal: the process itself, or only the comparison's child running
// the off run or the spec run (the parent exited 0 with outcome ok before).
// Generated over signals, receivers and formats.
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

#include <nlohmann/json.hpp>

#include "run_binary.h"
#include "text_file.h"

using nvmesim::test::slurp;

namespace {

struct Result {
  int exit_code;
  std::string out;
};

// Starts nvmesim ARGS, waits for the process that gets the signal (the
// parent, or its first or second child), sends SIG, waits for the end.
Result interrupt_run(const std::string& args, const std::string& sig, const std::string& who) {
  const std::string base = "/tmp/nvmesim_intr_" + std::to_string(::getpid());
  std::string wait_for;
  if (who == "self") wait_for = "sleep 0.4; T=$P";
  else if (who == "off child") wait_for = "T=; while [ -z \"$T\" ]; do T=$(pgrep -P $P); sleep 0.02; done; sleep 0.3";
  else  // the spec run's child: the second one
    wait_for = "F=; while [ -z \"$F\" ]; do F=$(pgrep -P $P); sleep 0.02; done; "
               "T=; while [ -z \"$T\" ] || [ \"$T\" = \"$F\" ]; do T=$(pgrep -P $P); sleep 0.02; done; sleep 0.3";
  const std::string script = std::string(NVMESIM_BINARY) + " " + args + " >" + base + ".out 2>/dev/null & P=$!; " +
                             wait_for + "; kill -" + sig + " $T; wait $P; echo $? >" + base + ".rc";
  std::ofstream(base + ".sh") << script << "\n";
  REQUIRE(std::system(("timeout -s KILL 60 sh " + base + ".sh").c_str()) == 0);
  Result r{std::stoi(slurp(base + ".rc")), slurp(base + ".out")};
  for (const char* ext : {".sh", ".out", ".rc"}) std::remove((base + ext).c_str());
  return r;
}

}  // namespace

TEST_CASE("interrupted outcome: whoever gets the signal, the outcome, headline and exit status say so",
          "[interrupt][binary]") {
  struct Case {
    std::string args, sig, who;
  };
  const std::string comparison = "--number_ios=1500000";
  const std::vector<Case> cases = {
      {comparison + " --output-format=json", "TERM", "off child"},
      {comparison + " --output-format=json", "INT", "off child"},
      {comparison, "TERM", "off child"},
      {comparison + " --output-format=json", "TERM", "spec child"},
      {comparison + " --output-format=json", "INT", "self"},
      {"--single-run --number_ios=1500000 --output-format=json", "TERM", "self"},
      {"--single-run --number_ios=1500000", "INT", "self"},
  };
  for (const Case& c : cases) {
    INFO("SIG" << c.sig << " to " << c.who << ": nvmesim " << c.args);
    const Result r = interrupt_run(c.args, c.sig, c.who);
    const int signo = c.sig == "TERM" ? 15 : 2;
    CHECK(r.exit_code == 128 + signo);
    const std::string mark = "INTERRUPTED by SIG" + c.sig;
    if (c.args.find("json") != std::string::npos) {
      const auto j = nlohmann::json::parse(r.out);
      CHECK(j["outcome"] == "interrupted");
      CHECK(j["headline"].get<std::string>().rfind(mark, 0) == 0);
      CHECK(j["interrupted"] == "SIG" + c.sig);
      if (j.contains("runs")) {
        // The run cut short covers fewer I/Os than asked; the spec run
        // runs only when the off run was not cut.
        const auto& off = j["runs"]["off"];
        REQUIRE(off.is_object());
        if (c.who == "spec child") {
          CHECK(off["ios"] == 1500000);
          CHECK(off["outcome"] == "ok");
          CHECK(j["runs"]["spec"]["outcome"] == "interrupted");
          CHECK(j["runs"]["spec"]["ios"].get<double>() < 1500000);
        } else {
          CHECK(off["outcome"] == "interrupted");
          CHECK(off["ios"].get<double>() < 1500000);
          CHECK(j["runs"]["spec"].is_null());
        }
      }
    } else {
      CHECK(r.out.rfind(mark, 0) == 0);  // the first line
    }
  }
}
