// Numbers that could mislead: counts with k/m/g as fio reads them, a time
// option that takes units like every other, an undefined hit rate printed as
// n/a, utilisation within 100%, and interrupt figures named for what they
// count.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "tests/platform/run_binary.h"

using nvmesim::test::check_refused;
using nvmesim::test::json_number;
using nvmesim::test::run_nvmesim;

TEST_CASE("numbers: number_ios takes k, m, g as fio does (x1024)", "[cli][numbers]") {
  struct Case {
    std::string value;
    double ios;
  };
  // fio's number_ios is an integer option read by check_str_bytes with
  // kb_base 1024 (fio's parse.c), so 1k = 1024.
  for (const Case& c : std::vector<Case>{{"1k", 1024}, {"2K", 2048}, {"300", 300}}) {
    const auto r = run_nvmesim("--number_ios=" + c.value + " --output-format=json");
    INFO(c.value << " " << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(json_number(r.out, "ios") == c.ios);
  }
  check_refused("--number_ios=20g", "nvmesim: error: --number_ios: 20g is out of range (0..10000000000)");
  check_refused("--number_ios=1kk", "nvmesim: error: --number_ios: '1kk' is not an integer (optionally with k, m or g: x1024)");
  check_refused("--number_ios=1q", "nvmesim: error: --number_ios: '1q' is not an integer");
  const auto list = run_nvmesim("--list-params");
  CHECK(list.out.find("k, m, g multiply by 1024 as in fio") != std::string::npos);
}

TEST_CASE("numbers: hv.poll_max takes a time, hv.poll_max_ns stays with a bare number meaning ns", "[cli][numbers]") {
  const std::string base = "--hv.device_thread=iothread --hv.notify=ioeventfd --number_ios=2000 --output-format=json ";
  const auto bare = run_nvmesim(base + "--hv.poll_max_ns=16000");
  const auto unit = run_nvmesim(base + "--hv.poll_max_ns=16us");
  const auto alias = run_nvmesim(base + "--hv.poll_max=16us");
  const auto none = run_nvmesim(base + "--hv.poll_max=0ns");
  for (const auto* r : {&bare, &unit, &alias, &none}) {
    INFO(r->err);
    REQUIRE(r->exit_code == 0);
  }
  // The JSON config key is kept; the same window gives the same run.
  CHECK(bare.out.find("\"hv.poll_max_ns\": \"16000ns\"") != std::string::npos);
  CHECK(unit.out.find("\"hv.poll_max_ns\": \"16us\"") != std::string::npos);
  CHECK(json_number(bare.out, "iops") == json_number(unit.out, "iops"));
  CHECK(json_number(alias.out, "iops") == json_number(unit.out, "iops"));
  CHECK(json_number(none.out, "iops") != json_number(unit.out, "iops"));  // the option acts
  check_refused("--hv.poll_max=2s", "nvmesim: error: --hv.poll_max: 2s is out of range (0ns..1s)");
}
