// No output replaces an input or another output: for every pair of roles a
// file can have in one run (inputs: --config, --job, an include of the job
// file; outputs: --output, --vcd, the GTKWave save file beside --vcd,
// --timeline, a fio log of the job), and every way to name one file twice
// (the same name, ./ and dir/.. spellings, a symbolic link, a hard link),
// the run is refused before anything runs: exit 2, one line naming both
// roles, the file as it was, no other file written.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <unistd.h>
#include <vector>

#include "run_binary.h"
#include "temp_dir.h"
#include "text_file.h"

namespace fs = std::filesystem;
using nvmesim::test::run_nvmesim;
using nvmesim::test::slurp;

namespace {

struct Dir : nvmesim::test::TempDir {
  explicit Dir(const std::string& tag) : TempDir("nvmesim_clash", tag, "sub") {}
};

std::set<std::string> listing(const fs::path& dir) {
  std::set<std::string> names;
  for (const auto& e : fs::recursive_directory_iterator(dir)) names.insert(e.path().string());
  return names;
}

const std::vector<std::string> kInputs = {"config", "job", "include"};
const std::vector<std::string> kOutputs = {"output", "vcd", "gtkw", "timeline", "fiolog"};

bool is_input(const std::string& role) {
  return std::find(kInputs.begin(), kInputs.end(), role) != kInputs.end();
}

// The command line that gives `a` the file `pa` and `b` the file `pb`.
std::string command(const Dir& d, const std::string& a, const std::string& pa, const std::string& b,
                    const std::string& pb) {
  std::string args = "--single-run --number_ios=10 --nvme.dbbuf=spec";
  std::string job_global, job_path;
  for (const auto& [role, p] : {std::pair{a, pa}, std::pair{b, pb}}) {
    if (role == "config") args += " --config " + p;
    else if (role == "job") job_path = p;
    else if (role == "include") job_global += "include " + p + "\n";
    else if (role == "output") args += " --output " + p;
    else if (role == "vcd") args += " --vcd " + p;
    else if (role == "gtkw") args += " --vcd " + p.substr(0, p.size() - 5) + ".vcd";
    else if (role == "timeline") args += " --timeline " + p;
    else if (role == "fiolog") job_global += "write_lat_log=" + p.substr(0, p.size() - 10) + "\n";
  }
  if (!job_global.empty() || !job_path.empty()) {
    if (job_path.empty()) job_path = d / "job.fio";
    // The job file's own text (it may be the clashing file itself).
    std::ofstream(job_path) << "[global]\n" << job_global << "[j]\nnumber_ios=10\n";
    args += " --job " + job_path;
  }
  return args;
}

// A file's content valid for its role (an input must parse).
std::string content_for(const std::string& role) {
  if (role == "config") return "[hv]\nexit_mmio = 5100cyc\n";
  if (role == "include") return "bs=4k\n";
  return "keep me\n";
}

}  // namespace

TEST_CASE("file clashes: every pair of roles, every spelling of one file, refused before the run",
          "[cli][output][binary]") {
  size_t runs = 0;
  std::vector<std::string> roles = kInputs;
  roles.insert(roles.end(), kOutputs.begin(), kOutputs.end());
  for (const std::string& a : roles)
    for (const std::string& b : kOutputs) {
      if (a == b || (a == "vcd" && b == "gtkw") || (a == "gtkw" && b == "vcd")) continue;  // one option
      if ((a == "gtkw" && b == "fiolog") || (a == "fiolog" && b == "gtkw")) continue;  // suffixes differ
      // A name both roles can have: the save file ends .gtkw, a latency log _lat.1.log.
      const bool gtkw = a == "gtkw" || b == "gtkw", log = a == "fiolog" || b == "fiolog";
      const std::string base = gtkw ? "f.gtkw" : log ? "f_lat.1.log" : "f.dat";
      for (const std::string spelling : {"same", "dot", "dotdot", "symlink", "hardlink"}) {
        const Dir d(std::to_string(runs));
        const std::string p = d / base;
        // The job file, when a role is the job, holds the other role's line.
        const std::string before = a == "job" ? "" : content_for(a);
        std::ofstream(p) << before;
        std::string q = p;
        if (spelling == "dot") q = d.path.string() + "/./" + base;
        if (spelling == "dotdot") q = d / ("sub/../" + base);
        if (spelling == "symlink") {
          q = d / ("l_" + base);
          fs::create_symlink(p, q);
        }
        if (spelling == "hardlink") {
          q = d / ("h_" + base);
          fs::create_hard_link(p, q);
        }
        const std::string args = command(d, a, p, b, q);
        const std::string text_before = slurp(p);
        const std::set<std::string> files_before = listing(d.path);
        INFO(a << " vs " << b << " (" << spelling << "): nvmesim " << args);
        const auto r = run_nvmesim(args);
        ++runs;
        CHECK(r.exit_code == 2);
        CHECK(r.out.empty());
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
        CHECK(r.err.rfind("nvmesim: error: ", 0) == 0);
        CHECK(r.err.find(is_input(a) ? "an output may not replace an input" : "give two files") != std::string::npos);
        CHECK(slurp(p) == text_before);
        CHECK(listing(d.path) == files_before);
      }
    }
  CHECK(runs >= 150);
}

TEST_CASE("file clashes: distinct files are all written", "[cli][output][binary]") {
  const Dir d("ok");
  std::ofstream(d / "c.ini") << "[hv]\nexit_mmio = 5100cyc\n";
  std::ofstream(d / "inc.fio") << "bs=4k\n";
  std::ofstream(d / "j.fio") << "[global]\ninclude " << d / "inc.fio" << "\nwrite_lat_log=" << d / "lg" << "\n[j]\nnumber_ios=10\n";
  const auto r = run_nvmesim("--single-run --nvme.dbbuf=spec --config " + d / "c.ini" + " --job " + d / "j.fio" +
                             " --output " + d / "o.txt" + " --vcd " + d / "t.vcd" + " --timeline " + d / "t.json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  for (const std::string f : {"o.txt", "t.vcd", "t.gtkw", "t.json", "lg_lat.1.log", "lg_clat.1.log"}) {
    INFO(f);
    CHECK(fs::file_size(d / f) > 0);
  }
  CHECK(slurp(d / "c.ini") == "[hv]\nexit_mmio = 5100cyc\n");
}

TEST_CASE("file clashes: timeline-html, verify and sweep name their clashes too", "[cli][output][binary]") {
  const Dir d("cmds");
  const std::string in = d / "t.json";
  std::ofstream(in) << "{\"traceEvents\":[]}";
  fs::create_symlink(in, d / "link.json");
  for (const std::string& out : {in, d.path.string() + "/./t.json", d / "sub/../t.json", d / "link.json"}) {
    INFO(out);
    const auto r = run_nvmesim("timeline-html " + in + " " + out);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("nvmesim timeline-html: error: IN.json and OUT.html: ") == 0);
    CHECK(slurp(in) == "{\"traceEvents\":[]}");
  }
  // verify: the counterexample's VCD, its save file and the timeline.
  for (const auto& [vcd, timeline] : {std::pair{d / "v.vcd", d / "v.vcd"}, std::pair{d / "v.vcd", d / "v.gtkw"},
                                      std::pair{d / "v", d / "v.gtkw"}}) {
    INFO(vcd << " " << timeline);
    const auto r = run_nvmesim("verify --qsize 4 --commands 2 --vcd " + vcd + " --timeline " + timeline);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(" and --timeline: ") != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
  // sweep: every point would write the one trace.
  for (const std::string opt : {"--vcd", "--timeline"}) {
    const auto r = run_nvmesim("sweep --grid iodepth=1,2 --number_ios=10 --nvme.dbbuf=spec " + opt + " " + d / "x" +
                               " --out " + d / "sw");
    CHECK(r.exit_code == 2);
    CHECK(r.err == "nvmesim sweep: error: " + opt + ": every point would write this one file; trace one point with nvmesim " +
                       opt + " FILE and that point's options\n");
    CHECK(!fs::exists(d / "x"));
  }
}
