// Progress on a terminal (platform/system/progress.h): the line's figures,
// shown only after the quiet time, cleared at the end.
#include <catch2/catch.hpp>

#include <cstdio>
#include <string>

#include "nvmesim/platform/system/progress.h"
#include "run_binary.h"

using nvmesim::platform::Progress;

namespace {

std::string contents(std::FILE* f) {
  std::fflush(f);
  std::rewind(f);
  std::string s;
  for (int c; (c = std::fgetc(f)) != EOF;) s += char(c);
  return s;
}

}  // namespace

TEST_CASE("progress: the line gives done, I/Os, simulated time, rate and the time left", "[progress]") {
  const Progress by_ios(200000, 0, "", stdout);
  // 50000 of 200000 after 2 s: 25%, 25000 I/Os per s, 6 s left.
  CHECK(by_ios.line(50000, 160e6, 2.0) ==
        "nvmesim: [25.0% done, 50000 I/Os, 160ms simulated, 25000 I/Os per wall s, ETA 6s]");
  const Progress by_time(0, 10e9, "dbbuf=off", stdout);  // runtime=10s
  CHECK(by_time.line(1000, 2.5e9, 90.0) ==
        "nvmesim: [dbbuf=off: 25.0% done, 1000 I/Os, 2.5s simulated, 11 I/Os per wall s, ETA 4m30s]");
}

TEST_CASE("progress: nothing before the quiet time, a line after it, cleared at the end", "[progress]") {
  std::FILE* quiet_file = std::tmpfile();
  {
    Progress quiet(100, 0, "", quiet_file, 3600.0);
    quiet.update(50, 1000);
  }
  CHECK(contents(quiet_file).empty());
  std::fclose(quiet_file);

  std::FILE* f = std::tmpfile();
  {
    Progress p(100, 0, "", f, 0.0);
    p.update(50, 1000);
    const std::string shown = contents(f);
    CHECK(shown.rfind("\r\033[Knvmesim: [50.0% done, 50 I/Os, 1us simulated, ", 0) == 0);
  }
  const std::string all = contents(f);
  CHECK(all.substr(all.size() - 4) == "\r\033[K");  // the line is cleared
  std::fclose(f);
}

TEST_CASE("progress: a run whose standard error is not a terminal prints none", "[progress]") {
  const auto r = nvmesim::test::run_nvmesim("--number_ios=20000 --nvme.dbbuf=spec");
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.empty());
}
