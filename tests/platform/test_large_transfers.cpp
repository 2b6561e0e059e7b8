// Transfers up to what MDTS allows, through the binary: the driver's PRP
// lists and the controller's walk of them (NVMe 1.3 section 4.3) carry
// every page, and a run whose I/Os fail says so first and exits 4.
#include <catch2/catch.hpp>

#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

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
      {"--nvme.mdts=8 --bs=1m --nvme.backend=ram --rw=randrw --verify=pattern --do_verify=off", true},
      {"--nvme.mdts=0 --bs=516k --nvme.backend=ram --rw=randrw --verify=pattern --do_verify=off", true},
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

// Linux splits an I/O above max_hw_sectors (drivers/nvme/host/core.c
// nvme_set_queue_limits: MDTS x 4 KiB) in the block layer (block/blk-merge.c
// __bio_split_to_limits): ceil(bs / max) commands, each with its tag, SQE and
// CQE; fio's figures count its I/Os. The plug is dispatched before a request
// joins it behind one of 128 KiB or more (block/blk-mq.c blk_add_rq_to_plug,
// BLK_PLUG_FLUSH_SIZE): 128 KiB parts are one SQ doorbell update each,
// smaller parts of one io_submit share one.
namespace {
nlohmann::json run_json(const std::string& options) {
  const auto r = run_nvmesim(options + " --preset=none --single-run --output-format=json");
  INFO("nvmesim " << options << "\n" << r.err);
  REQUIRE(r.exit_code == 0);
  return nlohmann::json::parse(r.out);
}
}  // namespace

TEST_CASE("large transfers: an I/O above MDTS is split into ceil(bs / max) commands", "[e2e][prp][split]") {
  struct Row {
    const char* options;
    uint64_t bs;
    unsigned commands;    // per fio I/O: ceil(bs / (4 KiB << mdts))
    unsigned sq_updates;  // per fio I/O (iodepth_batch_submit=1): parts of 128 KiB or more dispatch the plug
  };
  const Row rows[] = {
      {"--bs=1m --nvme.mdts=5", 1048576, 8, 8},      // 8 x 128k
      {"--bs=192k --nvme.mdts=5", 196608, 2, 2},     // 128k + 64k: the 64k joins after a dispatch
      {"--bs=192k --nvme.mdts=4", 196608, 3, 1},     // 3 x 64k: one plug, one update
      {"--bs=1m --nvme.mdts=4", 1048576, 16, 1},     // 16 x 64k
      {"--bs=100k --nvme.mdts=3", 102400, 4, 1},     // 32k + 32k + 32k + 4k
      {"--bs=128k --nvme.mdts=5", 131072, 1, 1},     // at MDTS: not split
  };
  const unsigned ios = 100;
  for (const char* dbbuf : {"off", "spec"})
    for (const Row& row : rows) {
      const std::string args = std::string(row.options) + " --iodepth=4 --number_ios=" + std::to_string(ios) +
                               " --nvme.dbbuf=" + dbbuf;
      INFO(args);
      const nlohmann::json j = run_json(args);
      CHECK(j["outcome"] == "ok");
      CHECK(j["ios"] == ios);  // fio I/Os
      CHECK(j["stats"]["vcpu0"]["issued"] == ios);
      CHECK(j["stats"]["vcpu0"]["read_bytes"] == ios * row.bs);
      // Per command: SQEs fetched, CQEs posted and consumed.
      CHECK(j["stats"]["nvme"]["io_commands"] == ios * row.commands);
      CHECK(j["stats"]["nvme"]["completions_posted"] == ios * row.commands);
      CHECK(j["stats"]["driver"]["cq1"]["completions"] == ios * row.commands);
      const auto& sq = j["doorbells"]["sq"];
      const auto& cq = j["doorbells"]["cq"];
      CHECK(sq["updates"] == ios * row.sq_updates);
      CHECK(sq["updates"].get<uint64_t>() == sq["mmio"].get<uint64_t>() + sq["suppressed"].get<uint64_t>());
      CHECK(cq["updates"].get<uint64_t>() == cq["mmio"].get<uint64_t>() + cq["suppressed"].get<uint64_t>());
      if (std::string(dbbuf) == "off") CHECK(sq["mmio"] == ios * row.sq_updates);
      // per_io.* divide by fio I/Os; bandwidth is IOPS x bs.
      CHECK(j["per_io"]["sq_mmio"].get<double>() == Approx(sq["mmio"].get<double>() / ios));
      CHECK(j["per_io"]["interrupts"].get<double>() ==
            Approx(j["controller"]["interrupts"].get<double>() / ios));
      CHECK(j["bw_bytes"].get<double>() == Approx(j["iops"].get<double>() * double(row.bs)).epsilon(1e-6));
    }
}

TEST_CASE("large transfers: split I/Os carry their data (verify=pattern through guest memory)", "[e2e][prp][split]") {
  for (const char* opts : {"--bs=1m --nvme.mdts=5", "--bs=192k --nvme.mdts=5", "--bs=100k --nvme.mdts=3"}) {
    const nlohmann::json j = run_json(std::string(opts) +
                                      " --nvme.backend=ram --rw=randrw --verify=pattern --size=16m --iodepth=4 "
                                      "--number_ios=300 --nvme.dbbuf=spec");
    INFO(opts);
    CHECK(j["outcome"] == "ok");
    CHECK(j["io_errors"] == 0);
    CHECK(j["verify"]["verified_reads"].get<uint64_t>() > 0);
    CHECK(j["verify"]["errors"] == 0);
  }
}

// More parts than free tags: blk_mq_get_tag (block/blk-mq-tag.c) makes
// each part wait for a tag, as fio's io_submit blocks in the kernel; the run
// completes and its submissions count their sleeps (vcpu0.tag_waits).
TEST_CASE("large transfers: parts beyond the queue's tags wait for them and complete", "[e2e][prp][split][tag_wait]") {
  const char* rows[] = {
      "--bs=1m --nvme.mdts=5 --iodepth=128",                              // 128 x 8 = 1024 parts, 1023 tags
      "--bs=1m --nvme.mdts=5 --iodepth=8 --guest.io_queue_entries=64",     // 64 parts, 63 tags
      "--bs=1m --nvme.mdts=5 --iodepth=2 --guest.io_queue_entries=4",      // one I/O's 8 parts, 3 tags
  };
  for (const char* row : rows) {
    const nlohmann::json j = run_json(std::string(row) + " --number_ios=300");
    INFO(row);
    CHECK(j["outcome"] == "ok");
    CHECK(j["ios"] == 300);
    CHECK(j["io_errors"] == 0);
    CHECK(j["stats"]["vcpu0"]["tag_waits"].get<uint64_t>() > 0);
  }
  // 127 x 8 = 1016 tags fit.
  CHECK(run_nvmesim("--bs=1m --nvme.mdts=5 --iodepth=127 --number_ios=300 --single-run").exit_code == 0);
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
