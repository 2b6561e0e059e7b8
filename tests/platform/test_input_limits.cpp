// Input the user names or types, bounded and shown safely: config and job
// files are capped in length and line length (reading /dev/zero ends with
// one line, not with the memory), a directory is named as one, a UTF-8 BOM
// is skipped, and an echoed value is cut at 80 bytes with control bytes
// escaped.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "tests/platform/run_binary.h"
#include "tests/platform/temp_file.h"

using nvmesim::test::check_refused;
using nvmesim::test::run_nvmesim;
using nvmesim::test::TempFile;

TEST_CASE("input limits: endless or oversized files are refused in bounded memory", "[cli][input]") {
  const TempFile long_line("[hv]\nexit_mmio = " + std::string(5000, '1') + "cyc\n");
  const TempFile long_job("[job]\nbs=" + std::string(5000, '4') + "\n");
  std::string big;
  for (int k = 0; k < 70000; ++k) big += "# comment line\n";  // 1.05 MB of comments
  const TempFile big_file(big);
  struct Case {
    std::string args, error;
  };
  // Under ulimit -v (600 MB) so that without the caps the read fails on
  // memory (exit 1) instead of growing past 1 GB.
  const std::vector<Case> table = {
      {"--config /dev/zero", "config file /dev/zero: is a character device, not a regular file"},
      {"--job /dev/zero", "--job /dev/zero: is a character device, not a regular file"},
      {"--config " + big_file.path, "config file " + big_file.path + ": longer than 1048576 bytes"},
      {"--config " + long_line.path, "config file " + long_line.path + " line 2: longer than 4096 bytes"},
      {"--job " + long_job.path, "--job " + long_job.path + " line 2: longer than 4096 bytes"},
      {"--config /tmp", "config file /tmp: is a directory"},
      {"--job /tmp", "--job /tmp: is a directory"},
      {"--output /tmp --number_ios=10", "--output: cannot open '/tmp' for writing (is a directory)"},
  };
  for (const Case& c : table) {
    INFO(c.args);
    // AddressSanitizer reserves terabytes of shadow address space: no ulimit -v there.
    const std::string limit = NVMESIM_SANITIZED ? "" : "ulimit -v 600000; ";
    const auto r = run_nvmesim("--version >/dev/null; " + limit + NVMESIM_BINARY " " + c.args);
    CHECK(r.exit_code == 2);
    CHECK(r.err == "nvmesim: error: " + c.error + "\n");
  }
}

TEST_CASE("input limits: echoed values are cut at 80 bytes and control bytes escaped", "[cli][input]") {
  const std::string huge(100000, 'x');
  struct Case {
    std::string args, error;
  };
  const std::vector<Case> table = {
      {"--bs=" + huge, "--bs: '" + std::string(80, 'x') + "... (100000 bytes)' is not a size (a byte count, "
                       "optionally with k, m, g or t (binary; also KiB, MiB, GiB, TiB))"},
      {"--rw=\"$(printf '\\033[31mred')\"", "--rw: '\\x1b[31mred' is not one of read, write, randread, randwrite, randrw"},
      {"--output-format=\"$(printf 'a\\tb')\"", "--output-format: 'a\\x09b' is not one of normal, json, json+"},
      // A cut never splits a UTF-8 character: 79 x then 'é' (2 bytes) -> 79 x.
      {"--rw=" + std::string(79, 'x') + "\xC3\xA9yyy",
       "--rw: '" + std::string(79, 'x') + "... (84 bytes)' is not one of read, write, randread, randwrite, randrw"},
  };
  for (const Case& c : table) check_refused(c.args, "nvmesim: error: " + c.error);
  // Option names as typed, which Boost's messages echo.
  const std::string q300(300, 'q');
  check_refused("--" + q300 + "=", "nvmesim: error: --" + std::string(78, 'q') + "... (302 bytes): empty value after '='");
  check_refused("eventidx --" + q300,
                "nvmesim eventidx: error: unknown option '--" + std::string(78, 'q') + "... (302 bytes)' (see --help)");
  // In a config file too: the section header as read.
  const TempFile ansi("[\x1b[2J]\nx = 1\n");
  check_refused("--config " + ansi.path, "nvmesim: error: config file " + ansi.path +
                                             " line 2: unknown key '\\x1b[2J.x' (see --list-params)");
}

TEST_CASE("input limits: a UTF-8 byte order mark starts a config or job file unseen", "[cli][input]") {
  const std::string bom = "\xEF\xBB\xBF";
  const TempFile config(bom + "[hv]\nexit_mmio = 2000cyc\n");
  const TempFile job(bom + "[global]\nbs=8k\n[one]\nnumber_ios=20\n");
  const auto c = run_nvmesim("--config " + config.path + " --number_ios=20 --output-format=json");
  INFO(c.err);
  REQUIRE(c.exit_code == 0);
  CHECK(c.out.find("\"hv.exit_mmio\": \"2000cyc\"") != std::string::npos);
  const auto j = run_nvmesim("--job " + job.path + " --output-format=json");
  INFO(j.err);
  REQUIRE(j.exit_code == 0);
  CHECK(j.out.find("\"bs\": \"8k\"") != std::string::npos);
  CHECK(nvmesim::test::json_number(j.out, "ios") == 20);
}
