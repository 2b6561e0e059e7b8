// Transfers up to what MDTS allows, through the binary: the driver's PRP
// lists and the controller's walk of them (NVMe 1.3 section 4.3) carry
// every page, and a run whose I/Os fail says so first and exits 4.
#include <catch2/catch.hpp>

#include <sstream>

#include "nvmesim/platform/config/params.h"
#include "nvmesim/platform/system/run.h"
#include "run_binary.h"

using nvmesim::test::json_number;
using nvmesim::test::run_nvmesim;

namespace {
std::string json_string(const std::string& json, const std::string& key) {
  const std::string k = "\"" + key + "\": \"";
  const size_t at = json.find(k);
  if (at == std::string::npos) return "<no " + key + ">";
  return json.substr(at + k.size(), json.find('"', at + k.size()) - at - k.size());
}
}  // namespace

TEST_CASE("large transfers: every I/O up to MDTS completes, data intact", "[e2e][prp]") {
  struct Row {
    const char* options;
    bool verify;  // ram backend with verify=pattern: the bytes went where the PRPs said
  };
  // 4 KiB pages: 512k = 128 pages, 1m = 256 (PRP1 + a 255-entry list).
  const Row rows[] = {
      {"--nvme.mdts=0 --bs=1m", false},  // MDTS 0: no limit
      {"--nvme.mdts=7 --bs=512k", false},
      {"--nvme.mdts=8 --bs=1m", false},
      {"--nvme.mdts=10 --bs=1m", false},
      {"--nvme.mdts=9 --bs=512k --nvme.backend=latency --nvme.backend_latency=5us", false},
      {"--nvme.mdts=8 --bs=1m --nvme.backend=ram --rw=randrw --verify=pattern", true},
      {"--nvme.mdts=0 --bs=516k --nvme.backend=ram --rw=randrw --verify=pattern", true},
  };
  for (const Row& row : rows) {
    const std::string args = std::string(row.options) + " --number_ios=96 --output-format=json";
    INFO("nvmesim " << args);
    const auto r = run_nvmesim(args);
    REQUIRE(r.exit_code == 0);
    CHECK(json_string(r.out, "outcome") == "ok");
    CHECK(json_number(r.out, "ios") == 96);
    CHECK(json_number(r.out, "io_errors") == 0);
    if (row.verify) {
      CHECK(json_number(r.out, "verified_reads") > 0);
      CHECK(json_number(r.out.substr(r.out.find("\"verify\"")), "errors") == 0);
    }
  }
}

TEST_CASE("large transfers: bs above MDTS is refused naming nvme.mdts", "[e2e][prp]") {
  nvmesim::test::check_refused(
      "--nvme.mdts=7 --bs=1m",
      "nvmesim: error: --bs: 1048576 exceeds the controller's MDTS (524288 bytes; raise nvme.mdts)");
}

TEST_CASE("failed I/Os: the report's first line says FAILED, JSON outcome, exit 4", "[e2e]") {
  // Every PRP1 off dword alignment: PRP Offset Invalid for all 100 I/Os.
  const std::string fault = "--guest.io_prp_fault=misaligned --number_ios=100 --single-run";
  struct Row {
    const char* format;
    const char* first_line;  // text: the report's first line
  };
  const Row rows[] = {
      {"normal",
       "FAILED: 100 of 100 I/Os completed with an error status (first: 0x4013 PRP Offset Invalid "
       "(SCT 0h, SC 13h, DNR))"},
      {"json", "{"},
  };
  for (const Row& row : rows) {
    const auto r = run_nvmesim(fault + " --output-format=" + row.format);
    INFO(row.format);
    CHECK(r.exit_code == 4);
    CHECK(r.out.substr(0, r.out.find('\n')) == row.first_line);
    if (std::string(row.format) == "json") {
      CHECK(json_string(r.out, "outcome") == "io_errors");
      CHECK(json_number(r.out, "io_errors") == 100);
      CHECK(json_number(r.out, "first_error_status") == 0x4013);  // PRP Offset Invalid, DNR
    }
  }
  // The same run without the fault: no headline, exit 0.
  const auto ok = run_nvmesim("--number_ios=100 --single-run");
  CHECK(ok.exit_code == 0);
  CHECK(ok.out.rfind("job: ", 0) == 0);
}

TEST_CASE("failed I/Os: the default comparison leads with them and exits 4", "[e2e]") {
  using namespace nvmesim::platform;
  Config c;
  c.set("guest.io_prp_fault", "misaligned");
  c.set("number_ios", "100");
  RunOptions o;
  o.default_experiment = true;
  std::ostringstream out;
  CHECK(run_experiment(c, o, out) == 4);
  const std::string text = out.str();
  const std::string failed =
      ": FAILED: 100 of 100 I/Os completed with an error status (first: 0x4013 PRP Offset "
      "Invalid (SCT 0h, SC 13h, DNR))\n";
  CHECK(text.rfind("dbbuf=off" + failed + "dbbuf=spec" + failed, 0) == 0);
}
