// timeline-html reads a trace event by event (nlohmann's parser callback
// drops each event once read), so its memory follows the page, not the
// parsed document: an 18 MB trace (50000 I/Os) converts within 150 MB of
// address space, where the whole document took over 200 MB (1.09 GB for a
// 74 MB trace before, 256 MB after). Not checked under the sanitizers,
// whose shadow memory takes address space of its own.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "tests/platform/run_binary.h"
#include "tests/platform/temp_dir.h"
#include "tests/platform/text_file.h"

using nvmesim::test::run_nvmesim;

TEST_CASE("timeline-html memory: a large trace converts in bounded memory, the page unchanged",
          "[timeline][binary]") {
  if (NVMESIM_SANITIZED) return;
  nvmesim::test::TempDir d("nvmesim_tlmem", "");
  const auto traced =
      run_nvmesim("--single-run --nvme.dbbuf=spec --number_ios=50000 --timeline " + d / "t.json" + " >/dev/null");
  REQUIRE(traced.exit_code == 0);
  REQUIRE(std::filesystem::file_size(d / "t.json") > 15u << 20);
  const auto limited = run_nvmesim("--version >/dev/null; ulimit -v 150000; " NVMESIM_BINARY " timeline-html " +
                                   d / "t.json" + " " + d / "limited.html");
  CHECK(limited.exit_code == 0);
  CHECK(limited.err.empty());
  const auto free_run = run_nvmesim("timeline-html " + d / "t.json" + " " + d / "free.html");
  REQUIRE(free_run.exit_code == 0);
  CHECK(nvmesim::test::slurp(d / "limited.html") == nvmesim::test::slurp(d / "free.html"));
  CHECK(nvmesim::test::slurp(d / "free.html").find(" 50000 I/Os") != std::string::npos);
}
