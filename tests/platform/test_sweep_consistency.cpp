// A sweep's directory holds one sweep: --resume with other fixed options
// and --merge of directories swept with other fixed options are refused
// (exit 2, nothing rewritten), for generated pairs of option sets; the same
// options, in any order, resume and merge. A point whose run ended but not ok (stalled)
// has that outcome as its status, counts as failed, and --resume runs it
// again while keeping the ok ones.
#include <catch2/catch.hpp>

#include <filesystem>
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
  explicit Dir(const std::string& tag) : TempDir("nvmesim_sweepc", tag) {}
};

}  // namespace

TEST_CASE("sweep consistency: resume and merge refuse other fixed options, accept the same", "[sweep][binary]") {
  // (first run's fixed options, second's): each pair differs in one way.
  const std::vector<std::pair<std::string, std::string>> pairs = {
      {"--number_ios=100", "--number_ios=400"},
      {"--number_ios=100", "--number_ios=100 --nvme.dbbuf=spec"},
      {"--number_ios=100 --iodepth=2", "--number_ios=100"},
      {"--number_ios=100 --hv.exit_mmio=2000cyc", "--number_ios=100 --hv.exit_mmio=3000cyc"},
      {"--number_ios=100 --nvme.dbbuf=spec", "--number_ios=100 --nvme.dbbuf=spec --nvme.dbbuf=off"},
  };
  size_t k = 0;
  for (const auto& [first, second] : pairs) {
    const Dir d(std::to_string(k++));
    const std::string grid = "sweep --grid numjobs=1,2 ";
    INFO("first: " << first << "; second: " << second);
    REQUIRE(run_nvmesim(grid + first + " --out " + d / "a").exit_code == 0);
    const std::string manifest = slurp(d / "a/sweep.json"), csv = slurp(d / "a/results.csv");
    // --resume with the other options.
    const auto r = run_nvmesim(grid + second + " --out " + d / "a --resume");
    CHECK(r.exit_code == 2);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(r.err.find("nvmesim sweep: error: --resume: ") == 0);
    CHECK(r.err.find("holds a sweep of other fixed options") != std::string::npos);
    CHECK(slurp(d / "a/sweep.json") == manifest);
    CHECK(slurp(d / "a/results.csv") == csv);
    // --merge with a sweep of the other options.
    REQUIRE(run_nvmesim(grid + second + " --out " + d / "b").exit_code == 0);
    const auto m = run_nvmesim("sweep --merge " + d / "a " + d / "b --out " + d / "m");
    CHECK(m.exit_code == 2);
    CHECK(m.err.find("nvmesim sweep: error: --merge: ") == 0);
    CHECK(!fs::exists(d / "m/results.csv"));
    // The same options: resumed (nothing run again) and merged.
    const auto same = run_nvmesim(grid + first + " --out " + d / "a --resume");
    CHECK(same.exit_code == 0);
    CHECK(same.err.find("2 of 2 points already done") != std::string::npos);
    REQUIRE(run_nvmesim("sweep --grid numjobs=4 " + first + " --out " + d / "c").exit_code == 0);
    const auto ok = run_nvmesim("sweep --merge " + d / "a " + d / "c --out " + d / "m2");
    CHECK(ok.exit_code == 0);
  }
  // The same options in another order are the same sweep.
  const Dir d("order");
  REQUIRE(run_nvmesim("sweep --grid numjobs=1,2 --number_ios=100 --rw=read --nvme.dbbuf=spec --out " + d / "a").exit_code == 0);
  const auto reordered = run_nvmesim("sweep --grid numjobs=1,2 --nvme.dbbuf=spec --number_ios=100 --rw=read --out " + d / "a --resume");
  CHECK(reordered.exit_code == 0);
  CHECK(reordered.err.find("2 of 2 points already done") != std::string::npos);
}

TEST_CASE("sweep consistency: a stalled point is not done: its status is stalled and --resume reruns it",
          "[sweep][binary]") {
  const Dir d("stall");
  const std::string cmd = "sweep --grid hv.fault=none,eventfd_not_cleared,eventfd_spin --grid iodepth=1,8 "
                          "--hv.notify=ioeventfd --nvme.dbbuf=spec --number_ios=2000 --sim.stall_timeout=1us --out " +
                          d / "s";
  const auto r = run_nvmesim(cmd);
  CHECK(r.exit_code == 1);  // points that did not end ok
  const std::vector<std::string> rows = nvmesim::test::text_lines(slurp(d / "s/results.csv"));
  REQUIRE(rows.size() == 7);
  size_t stalled = 0, ok = 0;
  for (size_t k = 1; k < rows.size(); ++k) {
    INFO(rows[k].substr(0, 120));
    // The uncleared eventfd loses wake-ups: a stall; the spinning one is slow, not stalled.
    const bool lost_wakeup = rows[k].rfind("eventfd_not_cleared,", 0) == 0;
    if (lost_wakeup) {
      CHECK(rows[k].find(",stalled,\"STALLED: ") != std::string::npos);
      ++stalled;
    } else {
      CHECK(rows[k].find(",ok,") != std::string::npos);
      ++ok;
    }
  }
  CHECK(stalled == 2);
  CHECK(ok == 4);
  // --resume: the stalled points again, the ok ones kept.
  const auto again = run_nvmesim(cmd + " --resume");
  CHECK(again.exit_code == 1);
  CHECK(again.err.find("sweep: resuming: 4 of 6 points already done") != std::string::npos);
  CHECK(again.err.find("6 points: 2 run, 4 resumed, 2 failed") != std::string::npos);
}
