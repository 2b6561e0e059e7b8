// Output files (--output, --vcd, --timeline) appear whole or not at all: a
// refused run leaves an existing file as it was, two outputs naming one
// file are refused, and a finished run leaves no temporary file behind.
#include <catch2/catch.hpp>

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "tests/platform/run_binary.h"
#include "tests/platform/test_sweep_support.h"

using nvmesim::test::check_refused;
using nvmesim::test::run_nvmesim;
using nvmesim::test::ScratchDir;
using nvmesim::test::slurp;

namespace {

void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

std::vector<std::string> entries(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* e = ::readdir(d))
      if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") out.push_back(e->d_name);
    ::closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("output files: a run refused after the options leaves existing files as they were", "[cli][output]") {
  ScratchDir d;
  const std::string prev = d / "prev";
  struct Case {
    std::string args;   // {F}: the existing file
    std::string error;  // after "nvmesim: error: "
  };
  const std::vector<Case> table = {
      // Refused where the system is assembled, after the files were named.
      {"--guest.irq_coalescing_time=150us --output {F}",
       "--guest.irq_coalescing_time: 150us is not a multiple of 100us in 0..25.5ms"},
      {"--hv.notify=ioeventfd --hv.device_thread=vcpu --output {F}",
       "--hv.notify: ioeventfd needs a host thread (hv.device_thread mainloop or iothread, not vcpu)"},
      {"--single-run --vcd {F} --trace-signals 'nosuch*'",
       "--trace-signals: 'nosuch*' matches no signal (names such as q1.shadow_sq_tail, vcpu0.state, "
       "host0.state, msix.vector1; timeline: q1.io, vcpu0.exit, host0.burst)"},
      {"--single-run --timeline {F} --guest.irq_coalescing_time=150us",
       "--guest.irq_coalescing_time: 150us is not a multiple of 100us in 0..25.5ms"},
  };
  for (const Case& c : table) {
    write(prev, "previous results\n");
    std::string args = c.args;
    args.replace(args.find("{F}"), 3, prev);
    check_refused(args, "nvmesim: error: " + c.error);
    CHECK(slurp(prev) == "previous results\n");
    CHECK(entries(d.path) == std::vector<std::string>{"prev"});  // no temporary file left
  }
}

TEST_CASE("output files: two outputs that are one file are refused", "[cli][output]") {
  ScratchDir d;
  const std::string a = d / "a.vcd";
  write(d / "existing", "x");
  REQUIRE(::symlink((d / "existing").c_str(), (d / "link").c_str()) == 0);
  REQUIRE(::link((d / "existing").c_str(), (d / "hard").c_str()) == 0);
  struct Case {
    std::string args, error;
  };
  const std::vector<Case> table = {
      {"--vcd " + a + " --output " + a, "--output and --vcd: both name '" + a + "'; give two files"},
      {"--vcd " + a + " --timeline " + a, "--vcd and --timeline: both name '" + a + "'; give two files"},
      {"--vcd " + a + " --output " + d.path + "/./a.vcd",
       "--output and --vcd: '" + d.path + "/./a.vcd' and '" + a + "' are the same file; give two files"},
      {"--output " + d.path + "/link --timeline " + d.path + "/existing",
       "--output and --timeline: '" + d.path + "/link' and '" + d.path + "/existing' are the same file; give two files"},
      {"--output " + d.path + "/hard --vcd " + d.path + "/existing",
       "--output and --vcd: '" + d.path + "/hard' and '" + d.path + "/existing' are the same file; give two files"},
  };
  for (const Case& c : table) {
    check_refused(c.args + " --number_ios=10", "nvmesim: error: " + c.error);
    CHECK(slurp(d / "existing") == "x");
  }
  // Relative spellings: ./a.json and a.json from the same folder.
  const auto r = run_nvmesim("--number_ios=10 --vcd ./cwd_same.json --output cwd_same.json");
  CHECK(r.exit_code == 2);
  CHECK(r.err == "nvmesim: error: --output and --vcd: 'cwd_same.json' and './cwd_same.json' are the same file; give two files\n");
}

TEST_CASE("output files: a finished run writes each file whole and leaves no temporary file", "[cli][output]") {
  ScratchDir d;
  write(d / "out.json", "old");
  write(d / "t.vcd", "old");
  const auto r = run_nvmesim("--number_ios=50 --single-run --output-format=json --output " + (d / "out.json") + " --vcd " +
                             (d / "t.vcd") + " --timeline " + (d / "t.json"));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.empty());
  const std::string json = slurp(d / "out.json");
  CHECK(json.rfind("{\n", 0) == 0);
  CHECK(json.substr(json.size() - 2) == "}\n");
  CHECK(nvmesim::test::json_number(json, "ios") == 50);
  CHECK(slurp(d / "t.vcd").rfind("$version nvmesim $end", 0) == 0);
  CHECK(entries(d.path) == std::vector<std::string>{"out.json", "t.gtkw", "t.json", "t.vcd"});  // t.gtkw: the VCD's GTKWave save file
}

TEST_CASE("output files: devices are written in place, a symbolic link stays a link", "[cli][output]") {
  ScratchDir d;
  const auto null_run = run_nvmesim("--number_ios=20 --single-run --output /dev/null --vcd /dev/null --timeline " + (d / "t.json"));
  CHECK(null_run.exit_code == 0);
  struct stat st {};
  REQUIRE(::stat("/dev/null", &st) == 0);
  CHECK(S_ISCHR(st.st_mode));  // not replaced by a regular file
  const auto to_stdout = run_nvmesim("--number_ios=20 --output-format=json --output /dev/stdout");
  CHECK(to_stdout.exit_code == 0);
  CHECK(nvmesim::test::json_number(to_stdout.out, "ios") == 20);
  // A device that fails every write: results not written, exit 5.
  const auto full = run_nvmesim("--number_ios=20 --output /dev/full");
  CHECK(full.exit_code == 5);
  CHECK(full.err == "nvmesim: error: --output: error writing '/dev/full'\n");
  // A link to a results file: the file it names gets the results.
  write(d / "target.json", "old");
  REQUIRE(::symlink((d / "target.json").c_str(), (d / "link.json").c_str()) == 0);
  const auto linked = run_nvmesim("--number_ios=20 --output-format=json --output " + (d / "link.json"));
  CHECK(linked.exit_code == 0);
  struct stat lst {};
  REQUIRE(::lstat((d / "link.json").c_str(), &lst) == 0);
  CHECK(S_ISLNK(lst.st_mode));
  CHECK(nvmesim::test::json_number(slurp(d / "target.json"), "ios") == 20);
  CHECK(entries(d.path) == std::vector<std::string>{"link.json", "t.json", "target.json"});
}

TEST_CASE("output files: a loop of symbolic links, or a chain longer than the kernel follows, is refused "
          "for every output and left a link",
          "[cli][output]") {
  // Each output slot of each command, and the link shapes that name no file.
  const std::vector<std::string> slots = {"--single-run --number_ios=20 --output ",
                                          "--single-run --number_ios=20 --vcd ",
                                          "--single-run --number_ios=20 --timeline ",
                                          "--number_ios=20 --output-format=json --output "};
  size_t runs = 0;
  for (const char* shape : {"self", "pair", "chain"}) {
    ScratchDir d;
    const std::string out = d / "out.x";
    if (std::string(shape) == "self") {
      REQUIRE(::symlink(out.c_str(), out.c_str()) == 0);
    } else if (std::string(shape) == "pair") {
      REQUIRE(::symlink((d / "other").c_str(), out.c_str()) == 0);
      REQUIRE(::symlink(out.c_str(), (d / "other").c_str()) == 0);
    } else {  // 50 hops to an existing file: more than Linux's 40
      write(d / "l50", "old");
      for (int k = 49; k >= 0; --k)
        REQUIRE(::symlink((d / ("l" + std::to_string(k + 1))).c_str(),
                          (k ? d / ("l" + std::to_string(k)) : out).c_str()) == 0);
    }
    for (const std::string& slot : slots) {
      INFO(shape << ": nvmesim " << slot << out);
      const auto r = run_nvmesim(slot + out);
      ++runs;
      CHECK(r.exit_code == 2);
      CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
      CHECK(r.err.find("Too many levels of symbolic links") != std::string::npos);
      struct stat lst {};
      REQUIRE(::lstat(out.c_str(), &lst) == 0);
      CHECK(S_ISLNK(lst.st_mode));  // still the link
    }
    ScratchDir h;
    const std::string page = h / "p.html";
    REQUIRE(::symlink(page.c_str(), page.c_str()) == 0);
    write(h / "t.json", "{\"traceEvents\":[]}");
    const auto r = run_nvmesim("timeline-html " + (h / "t.json") + " " + page);
    ++runs;
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("Too many levels of symbolic links") != std::string::npos);
  }
  CHECK(runs == 3 * 5);
}
