// Results are never lost silently: every command that prints to standard
// output fails (exit 5, one line) when that output cannot be written; fio's
// log paths are checked before the run (exit 2 at once, nothing written),
// the logs are streamed (memory does not grow with the run) and replace
// the old ones only whole.
#include <catch2/catch.hpp>

#include <chrono>
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
using nvmesim::test::slurp;

namespace {

struct Dir : nvmesim::test::TempDir {
  explicit Dir(const std::string& tag) : TempDir("nvmesim_written", tag) {}
};

}  // namespace

TEST_CASE("results written: every command's standard output to a full device fails", "[cli][output][binary]") {
  // Each command succeeds (exit 0) with a writable standard output.
  const std::vector<std::string> commands = {
      "--single-run --number_ios=50",
      "--single-run --number_ios=50 --output-format=json",
      "--single-run --number_ios=50 --output-format=json+",
      "--number_ios=50",  // the comparison (two child processes)
      "--device=virtio-blk --number_ios=50",
      "--help",
      "--list-params",
      "--list-presets",
      "--version",
      "eventidx --qsize 64 --old 1 --new 5 --eventidx 3",
      "verify --qsize 4 --commands 2 --time off",
      "scenario --list",
  };
  for (const std::string& c : commands) {
    INFO("nvmesim " << c);
    const auto ok = run_nvmesim(c + " >/dev/null");
    REQUIRE(ok.exit_code == 0);
    const auto full = run_nvmesim(c + " >/dev/full");
    CHECK(full.exit_code == 5);
    // One line naming the failure (after whatever the run says on stderr anyway).
    const std::string last = full.err.substr(full.err.rfind('\n', full.err.size() - 2) + 1);
    CHECK(last == "nvmesim: error: standard output: write error (No space left on device)\n");
    CHECK(std::count(full.err.begin(), full.err.end(), '\n') == std::count(ok.err.begin(), ok.err.end(), '\n') + 1);
  }
}

TEST_CASE("results written: fio log paths that cannot be written refuse the run before it starts", "[fio][output][binary]") {
  const Dir d("logs");
  std::ofstream(d / "afile") << "x";
  fs::create_directories(d / "dirlog_lat.1.log");  // a directory where the log goes
  struct Bad {
    std::string stem, reason;
  };
  const std::vector<Bad> bad = {
      {d / "missing/lg", "No such file or directory"},
      {d / "afile/lg", "Not a directory"},
      {d / "dirlog", "is a directory"},
  };
  size_t runs = 0;
  for (const std::string option : {"write_lat_log", "write_bw_log", "write_iops_log"})
    for (const Bad& b : bad) {
      if (b.stem.find("dirlog") != std::string::npos && option != std::string("write_lat_log")) continue;
      // A good log of another kind beside it, whose old file must survive.
      const std::string keep = d / ("keep_iops.1.log");
      std::ofstream(keep) << "old\n";
      std::ofstream(d / "j.fio") << "[j]\nnumber_ios=2000000\n" << option << "=" << b.stem << "\n"
                                 << (option == std::string("write_iops_log") ? "write_bw_log=" : "write_iops_log=")
                                 << d / "keep" << "\n";
      INFO(option << "=" << b.stem);
      const auto t0 = std::chrono::steady_clock::now();
      const auto r = run_nvmesim("--single-run --nvme.dbbuf=spec --job " + d / "j.fio");
      const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      ++runs;
      CHECK(r.exit_code == 2);
      CHECK(r.out.empty());
      CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
      CHECK(r.err.rfind("nvmesim: error: --job: cannot write the fio log '" + b.stem, 0) == 0);
      CHECK(r.err.find("(" + b.reason + ")") != std::string::npos);
      CHECK(took < 1.0);  // refused before 2M I/Os ran
      CHECK(slurp(keep) == "old\n");
    }
  CHECK(runs == 7);
}

TEST_CASE("results written: fio logs are streamed, not held, and replace old logs whole", "[fio][output][binary]") {
  const Dir d("stream");
  auto rss = [&](const std::string& logs) {
    std::ofstream(d / "j.fio") << "[j]\nnumber_ios=200000\n" << logs;
    const auto r = run_nvmesim("--single-run --nvme.dbbuf=spec --host-stats --output-format=json --job " + d / "j.fio");
    REQUIRE(r.exit_code == 0);
    return nvmesim::test::json_number(r.out, "peak_rss_bytes");
  };
  const double without = rss("");
  const std::string stem = d / "lg";
  const double with = rss("write_lat_log=" + stem + "\nwrite_bw_log=" + stem + "\nwrite_iops_log=" + stem + "\n");
  // 17 MB of logs; held in memory they added as much to the peak.
  uintmax_t total = 0;
  for (const std::string kind : {"lat", "clat", "bw", "iops"}) total += fs::file_size(stem + "_" + kind + ".1.log");
  CHECK(total > 15e6);
  CHECK(with - without < 4e6);
  // Each log: one row per I/O, complete.
  CHECK(nvmesim::test::text_lines(slurp(stem + "_lat.1.log")).size() == 200000);
  CHECK(nvmesim::test::text_lines(slurp(stem + "_clat.1.log")).size() == 200000);
  CHECK(nvmesim::test::text_lines(slurp(stem + "_slat.1.log")).size() == 200000);
  // No temporary file left beside them.
  for (const auto& e : fs::directory_iterator(d.path)) CHECK(e.path().filename().string()[0] != '.');
}
