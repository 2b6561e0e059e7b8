// Every input a user names is read bounded, without blocking and without
// ignoring signals: for each place an input file is named (--config, --job,
// an include of a job file, --sweep-file, timeline-html's input, validate's
// reference and --timing CSV, a sweep's own results files on --resume and
// --merge) and each kind of file that is not a regular file (a FIFO with no
// writer, a character device, a Unix socket, a directory, a file of /proc or
// /sys, such as /proc/kmsg that blocks until the kernel logs), the run ends at
// once with exit 2 and one line naming the file and what it is; include
// fan-outs are bounded in the whole; a signal while reading ends the read.
#include <catch2/catch.hpp>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <vector>

#include "nvmesim/platform/cli/interrupt.h"
#include "nvmesim/platform/config/input_file.h"
#include "run_binary.h"
#include "temp_dir.h"

namespace fs = std::filesystem;
using nvmesim::test::run_nvmesim;

namespace {

struct Dir : nvmesim::test::TempDir {
  Dir() : TempDir("nvmesim_special", "") {}
};

// A special file of `kind` at `path`, and what the error calls it.
struct Special {
  std::string kind, path, described;
};

std::vector<Special> make_specials(const Dir& d) {
  std::vector<Special> s;
  const std::string fifo = d / "fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  s.push_back({"fifo", fifo, "is a FIFO, not a regular file"});
  s.push_back({"char device", "/dev/zero", "is a character device, not a regular file"});
  s.push_back({"null device", "/dev/null", "is a character device, not a regular file"});
  const std::string sock = d / "sock";
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", sock.c_str());
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  ::close(fd);  // the socket file stays
  s.push_back({"socket", sock, "is a socket, not a regular file"});
  const std::string dir = d / "subdir";
  fs::create_directories(dir);
  s.push_back({"directory", dir, "is a directory"});
  // Files of the kernel's pseudo file systems stat as regular (size 0):
  // /proc/kmsg blocks until the kernel logs, others are made as they are read.
  for (const char* p : {"/proc/kmsg", "/proc/self/status", "/proc/version"})
    if (fs::exists(p)) s.push_back({std::string("proc file ") + p, p, "is a file of the proc pseudo file system, not a regular file"});
  for (const char* p : {"/sys/kernel/mm/transparent_hugepage/enabled", "/sys/devices/system/cpu/online"})
    if (fs::exists(p)) {
      s.push_back({std::string("sysfs file ") + p, p, "is a file of the sysfs pseudo file system, not a regular file"});
      break;
    }
  return s;
}

}  // namespace

TEST_CASE("special inputs: every input slot refuses every kind of non-regular file at once, exit 2",
          "[cli][input][binary]") {
  const Dir d;
  const std::vector<Special> specials = make_specials(d);
  // Slots: how to name the special file there, and the error's start.
  struct Slot {
    std::string name;
    std::string args(const Dir& d, const std::string& special) const {
      if (name == "config") return "--config " + special + " --number_ios=10";
      if (name == "job") return "--job " + special;
      if (name == "include") {
        std::ofstream(d / "inc.fio") << "[global]\ninclude " << special << "\n[j]\nnumber_ios=10\n";
        return "--job " + d / "inc.fio";
      }
      if (name == "sweep-file") return "sweep --sweep-file " + special + " --out " + d / "sw";
      if (name == "timeline-html") return "timeline-html " + special + " " + d / "o.html";
      if (name == "validate") return "validate " + special;
      if (name == "resume" || name == "merge") {
        fs::create_directories(d / "swr");
        fs::remove(d / "swr/results.jsonl.partial");
        fs::create_symlink(special, d / "swr/results.jsonl.partial");
        return name == "resume" ? "sweep --grid iodepth=1 --number_ios=10 --out " + d / "swr" + " --resume"
                                : "sweep --merge " + d / "swr" + " --out " + d / "swm";
      }
      return "";
    }
  };
  const std::vector<std::string> slots = {"config", "job", "include", "sweep-file",
                                          "timeline-html", "validate", "resume", "merge"};
  size_t runs = 0;
  for (const std::string& slot : slots)
    for (const Special& s : specials) {
      const std::string args = Slot{slot}.args(d, s.path);
      INFO(slot << " <- " << s.kind << ": nvmesim " << args);
      const auto t0 = std::chrono::steady_clock::now();
      // `timeout`: a read that blocks or grows fails the test instead of hanging it.
      const auto r = run_nvmesim("--version >/dev/null; timeout -s KILL 20 " NVMESIM_BINARY " " + args);
      const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      ++runs;
      CHECK(took < 10);
      CHECK(r.exit_code == 2);
      // One line, naming the file and what it is.
      CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
      CHECK(r.err.rfind("nvmesim", 0) == 0);
      CHECK(r.err.find(" error: ") != std::string::npos);
      CHECK(r.err.find(s.described) != std::string::npos);
      // The result would name the followed link for the sweep's own file.
      if (slot != "resume" && slot != "merge" && slot != "include")
        CHECK(r.err.find(s.path) != std::string::npos);
      CHECK(!fs::exists(d / "o.html"));
    }
  CHECK(runs == slots.size() * specials.size());
}

TEST_CASE("special inputs: oversized inputs are refused from their size, before they are read", "[cli][input][binary]") {
  const Dir d;
  // Sparse files: their size is the stat size, no disk or memory used.
  struct Case {
    std::string args_before, args_after;
    uint64_t size;
  };
  const std::vector<Case> cases = {
      {"--config ", " --number_ios=10", (uint64_t(1) << 20) + 1},
      {"--job ", "", (uint64_t(1) << 20) + 1},
      {"--config ", " --number_ios=10", uint64_t(1) << 40},
      {"timeline-html ", " " + d / "o.html", (uint64_t(256) << 20) + 1},
      {"timeline-html ", " " + d / "o.html", uint64_t(1) << 40},
      {"validate ", "", (uint64_t(64) << 20) + 1},
  };
  for (const Case& c : cases) {
    const std::string big = d / ("big" + std::to_string(c.size));
    { std::ofstream(big) << ""; }
    fs::resize_file(big, c.size);
    INFO(c.args_before << big << c.args_after);
    const std::string limit = NVMESIM_SANITIZED ? "" : "ulimit -v 600000; ";
    const auto r = run_nvmesim("--version >/dev/null; " + limit + NVMESIM_BINARY " " + c.args_before + big + c.args_after);
    CHECK(r.exit_code == 2);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(r.err.find(big + ": longer than ") != std::string::npos);
    fs::remove(big);
  }
}

TEST_CASE("special inputs: include fan-outs are bounded in the whole, whatever their shape", "[cli][input][binary]") {
  const Dir d;
  // (levels, includes per file): each file includes `fan` files of the next
  // level, the last level holds one option. Up to the bound they are read;
  // beyond it, one line and exit 2, quickly.
  struct Shape {
    int levels, fan;
    bool accepted;
  };
  // Includes followed: fan + fan^2 + ... + fan^levels; at most 256.
  const std::vector<Shape> shapes = {{1, 10, true},  {2, 15, true},  {3, 5, true},  {1, 256, true},
                                     {1, 257, false}, {2, 16, false}, {3, 6, false}, {4, 60, false},
                                     {8, 3, false},   {15, 2, false}};
  for (const Shape& sh : shapes) {
    INFO("levels " << sh.levels << " x " << sh.fan);
    const std::string base = d / ("fan" + std::to_string(sh.levels) + "x" + std::to_string(sh.fan));
    fs::create_directories(base);
    for (int level = 1; level <= sh.levels; ++level) {
      std::ofstream f(base + "/l" + std::to_string(level) + ".fio");
      if (level == sh.levels) {
        f << "bs=4k\n";
      } else {
        for (int k = 0; k < sh.fan; ++k) f << "include l" << level + 1 << ".fio\n";
      }
    }
    std::ofstream job(base + "/job.fio");
    job << "[global]\n";
    for (int k = 0; k < sh.fan; ++k) job << "include " << base << "/l1.fio\n";
    job << "[j]\nnumber_ios=10\n";
    job.close();
    const auto t0 = std::chrono::steady_clock::now();
    const auto r = run_nvmesim("--version >/dev/null; timeout -s KILL 30 " NVMESIM_BINARY " --job " + base +
                               "/job.fio --output-format=json");
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    CHECK(took < 10);
    if (sh.accepted) {
      CHECK(r.exit_code == 0);
      CHECK(nvmesim::test::json_number(r.out, "ios") > 0);
    } else {
      CHECK(r.exit_code == 2);
      CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
      CHECK(r.err.find("includes in one job file (counting those of included files)") != std::string::npos);
    }
  }
}

TEST_CASE("special inputs: a signal while an input is read ends the read", "[cli][input]") {
  namespace p = nvmesim::platform;
  const Dir d;
  const std::string file = d / "x.ini";
  std::ofstream(file) << "[hv]\nexit_mmio = 1us\n";
  CHECK(p::read_input_file(file, "config file x").find("exit_mmio") != std::string::npos);
  p::interrupt::install();
  std::raise(SIGTERM);  // recorded by the handler (this test case runs in its own process)
  REQUIRE(p::interrupt::received() == SIGTERM);
  CHECK_THROWS_WITH(p::read_input_file(file, "config file x"), "config file x: interrupted by SIGTERM");
}
