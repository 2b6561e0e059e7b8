// Each class of outcome has its documented exit status (README.md,
// platform/cli/exit_codes.h): 2 for an output the user must fix before the
// run (a directory, a missing folder, a file where a folder should be), 5
// for results that could not be written while the run wrote them (a full
// device), 4 when the simulated system failed (I/O errors, a refused
// bring-up, with its outcome in the JSON), 1 only for internal errors.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "run_binary.h"
#include "temp_dir.h"
#include "text_file.h"

namespace fs = std::filesystem;
using nvmesim::test::run_nvmesim;

namespace {

struct Dir : nvmesim::test::TempDir {
  explicit Dir(const std::string& tag) : TempDir("nvmesim_exit", tag, "adir") { std::ofstream(path / "afile") << "x"; }
};

size_t lines(const std::string& s) { return size_t(std::count(s.begin(), s.end(), '\n')); }

}  // namespace

TEST_CASE("exit codes: an output that cannot be written is refused before the run, exit 2", "[cli][output][binary]") {
  const Dir d("pre");
  // The bad places an output can name, and the reason the error gives.
  struct Place {
    std::string path, reason;
  };
  const std::vector<Place> places = {{d / "adir", "is a directory"},
                                     {d / "missing/x", "No such file or directory"},
                                     {d / "afile/x", "Not a directory"}};
  size_t runs = 0;
  for (const std::string option : {"--output", "--vcd", "--timeline"})
    for (const Place& p : places)
      for (const std::string mode : {"--single-run", "--nvme.dbbuf=spec", ""}) {
        if (mode.empty() && option != std::string("--output")) continue;  // a trace needs one run
        const std::string args = mode + " --number_ios=2000000 " + option + " " + p.path;
        INFO("nvmesim " << args);
        const auto r = run_nvmesim(args);
        ++runs;
        CHECK(r.exit_code == 2);
        CHECK(r.out.empty());
        CHECK(r.err == "nvmesim: error: " + option + ": cannot open '" + p.path + "' for writing (" + p.reason + ")\n");
      }
  // The save file beside --vcd, when a directory holds its name.
  fs::create_directories(d / "t.gtkw");
  const auto g = run_nvmesim("--single-run --number_ios=2000000 --vcd " + d / "t.vcd");
  CHECK(g.exit_code == 2);
  CHECK(g.err == "nvmesim: error: --vcd: cannot open the GTKWave save file '" + d / "t.gtkw" +
                     "' for writing (is a directory)\n");
  CHECK(!fs::exists(d / "t.vcd"));
  // timeline-html's output and sweep's --out.
  std::ofstream(d / "t.json") << "{\"traceEvents\":[]}";
  for (const Place& p : places) {
    const auto r = run_nvmesim("timeline-html " + d / "t.json" + " " + p.path);
    CHECK(r.exit_code == 2);
    CHECK(r.err == "nvmesim timeline-html: error: cannot write '" + p.path + "' (" + p.reason + ")\n");
  }
  for (const std::string& out : {d / "afile", d / "afile/sub"}) {
    const auto r = run_nvmesim("sweep --grid iodepth=1,2 --number_ios=10 --out " + out);
    INFO(out << ": " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(lines(r.err) == 1);
    CHECK(r.err.rfind("nvmesim sweep: error: --out: ", 0) == 0);
  }
  CHECK(runs == 21);
}

TEST_CASE("exit codes: results that could not be written while the run wrote them, exit 5", "[cli][output][binary]") {
  size_t runs = 0;
  for (const std::string option : {"--output", "--vcd", "--timeline"})
    for (const std::string mode : {"--single-run", "--device=virtio-blk", "--nvme.dbbuf=vendor", ""}) {
      if (mode.empty() && option != std::string("--output")) continue;
      const std::string args = mode + " --number_ios=200 " + option + " /dev/full";
      INFO("nvmesim " << args);
      const auto r = run_nvmesim(args);
      ++runs;
      CHECK(r.exit_code == 5);
      CHECK(lines(r.err) == 1);
      CHECK(r.err.find("'/dev/full'") != std::string::npos);
    }
  const auto h = run_nvmesim("timeline-html /dev/null /dev/full");
  CHECK(h.exit_code == 2);  // /dev/null is no input
  std::ofstream("/tmp/nvmesim_exit_t.json") << "{\"traceEvents\":[]}";
  const auto t = run_nvmesim("timeline-html /tmp/nvmesim_exit_t.json /dev/full");
  CHECK(t.exit_code == 5);
  std::remove("/tmp/nvmesim_exit_t.json");
  // verify: a counterexample's trace that cannot be written.
  for (const std::string option : {"--vcd", "--timeline"}) {
    const auto v = run_nvmesim("verify --guest.dbbuf_full_barrier=off --qsize 4 --commands 2 " + option + " /dev/full");
    CHECK(v.exit_code == 5);
    CHECK(v.err == "nvmesim verify: error: " + option + ": cannot write '/dev/full'\n");
  }
  CHECK(runs == 10);
}

TEST_CASE("exit codes: a refused bring-up is the system failing: outcome bringup_failed, exit 4", "[cli][binary]") {
  for (const std::string format : {"normal", "json", "json+"})
    for (const std::string extra : {"", " --iodepth=1", " --numjobs=2"}) {
      const std::string args =
          "--guest.admin_shadow=on --nvme.dbbuf=vendor --number_ios=20 --output-format=" + format + extra;
      INFO("nvmesim " << args);
      const auto r = run_nvmesim(args);
      CHECK(r.exit_code == 4);
      CHECK(r.out.find("BRING-UP FAILED: ") != std::string::npos);
      if (format == "json") CHECK(r.out.find("\"outcome\": \"bringup_failed\"") != std::string::npos);
    }
  // Documented where the outcomes are listed.
  const std::string comparison = nvmesim::test::slurp(NVMESIM_SOURCE_DIR "/docs/comparison.md");
  CHECK(comparison.find("\"bringup_failed\"") != std::string::npos);
  const std::string readme = nvmesim::test::slurp(NVMESIM_SOURCE_DIR "/README.md");
  for (const std::string code : {"1 internal error", "2 usage", "3 stalled", "4 failed", "5 results not written"})
    CHECK(readme.find(code) != std::string::npos);
}
