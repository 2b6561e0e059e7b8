// Replacing an output keeps what it was: for every output a run writes
// (--output, --vcd, its .gtkw, --timeline, a fio log, timeline-html's
// page), every mode of the old file and every way a name can lead to it (a
// plain file, a symbolic link, a relative link, a chain of two, a dangling
// link), the new content arrives with the old mode, a link stays a link
// (a dangling one now names the new file), and a file the user may not
// write is refused (exit 2, unchanged), as open(2) would refuse it.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <sys/stat.h>
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
  explicit Dir(const std::string& tag) : TempDir("nvmesim_replaced", tag, "real") {}
};

mode_t mode_of(const std::string& p) {
  struct stat st {};
  REQUIRE(::stat(p.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

// The command that writes `name` as output `role` (the name as given).
std::string command(const Dir& d, const std::string& role, const std::string& name) {
  const std::string run = "--single-run --nvme.dbbuf=spec --number_ios=20 ";
  if (role == "output") return run + "--output " + name;
  if (role == "vcd") return run + "--vcd " + name;
  if (role == "gtkw") return run + "--vcd " + name.substr(0, name.size() - 5) + ".vcd";
  if (role == "timeline") return run + "--timeline " + name;
  if (role == "fiolog") {
    std::ofstream(d / "j.fio") << "[j]\nnumber_ios=20\nwrite_lat_log=" << name.substr(0, name.size() - 10) << "\n";
    return run + "--job " + d / "j.fio";
  }
  std::ofstream(d / "t.json") << "{\"traceEvents\":[]}";
  return "timeline-html " + d / "t.json" + " " + name;
}

}  // namespace

TEST_CASE("replaced outputs: every output keeps its mode and its links", "[cli][output][binary]") {
  const std::vector<std::pair<std::string, std::string>> roles = {
      {"output", "o.txt"},   {"vcd", "w.vcd"},      {"gtkw", "w.gtkw"},
      {"timeline", "t.tl"},  {"fiolog", "lg_lat.1.log"}, {"html", "p.html"}};
  size_t runs = 0;
  for (const auto& [role, base] : roles)
    for (const mode_t mode : {mode_t(0600), mode_t(0640), mode_t(0604), mode_t(0755)})
      for (const std::string link : {"none", "absolute", "relative", "chain", "dangling"}) {
        const Dir d(std::to_string(runs));
        const std::string target = d / ("real/" + base);
        std::string name = target;
        if (link != "dangling") {
          std::ofstream(target) << "old\n";
          ::chmod(target.c_str(), mode);
        }
        if (link != "none") {
          name = d / base;  // same base name, so the derived names (.vcd, stem) line up
          if (link == "absolute" || link == "dangling") fs::create_symlink(target, name);
          if (link == "relative") fs::create_symlink("real/" + base, name);
          if (link == "chain") {
            fs::create_symlink(target, d / ("mid_" + base));
            fs::create_symlink(d / ("mid_" + base), name);
          }
        }
        if (role == "gtkw" && link != "none")  // the .vcd beside the link, written as a plain file
          name = d / base;
        const std::string args = command(d, role, name);
        INFO(role << " mode " << std::oct << mode << std::dec << " link " << link << ": nvmesim " << args);
        const auto r = run_nvmesim(args);
        ++runs;
        REQUIRE(r.exit_code == 0);
        CHECK(slurp(target) != "old\n");
        CHECK(fs::file_size(target) > 0);
        if (link == "dangling") {
          const mode_t mask = ::umask(0);
          ::umask(mask);
          CHECK(mode_of(target) == (0666 & ~mask));
        } else {
          CHECK(mode_of(target) == mode);
        }
        if (link != "none") CHECK(fs::is_symlink(name));
        // No temporary file left.
        for (const auto& e : fs::recursive_directory_iterator(d.path))
          CHECK(e.path().filename().string().find(".XXXXXX") == std::string::npos);
      }
  CHECK(runs == 120);
}

TEST_CASE("replaced outputs: a file the user may not write is refused, not replaced", "[cli][output][binary]") {
  if (std::system("command -v setpriv >/dev/null 2>&1") != 0) {
    WARN("setpriv missing: skipped");
    return;
  }
  const Dir d("ro");
  ::chmod(d.path.c_str(), 0777);
  ::chmod((d.path / "real").c_str(), 0777);
  // Run as nobody: a 0444 file of its own (made by chown), and a 0644 file of root's.
  const std::string as_nobody = "setpriv --reuid=65534 --regid=65534 --clear-groups " NVMESIM_BINARY " ";
  size_t runs = 0;
  for (const std::string option : {"--output", "--timeline", "--vcd"})
    for (const auto& [mode, owner] : {std::pair{mode_t(0444), 65534}, std::pair{mode_t(0644), 0}}) {
      const std::string f = d / ("real/f" + std::to_string(runs));
      std::ofstream(f) << "old\n";
      REQUIRE(::chown(f.c_str(), uid_t(owner), gid_t(owner)) == 0);
      ::chmod(f.c_str(), mode);
      INFO(option << " on a " << std::oct << mode << std::dec << " file of uid " << owner);
      const auto r = run_nvmesim("--version >/dev/null; " + as_nobody + "--single-run --nvme.dbbuf=spec --number_ios=10 " +
                                 option + " " + f);
      ++runs;
      CHECK(r.exit_code == 2);
      CHECK(r.err == "nvmesim: error: " + option + ": cannot open '" + f + "' for writing (Permission denied)\n");
      CHECK(slurp(f) == "old\n");
      CHECK(mode_of(f) == mode);
    }
  CHECK(runs == 6);
}
