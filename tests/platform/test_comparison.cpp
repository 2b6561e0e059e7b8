// The default comparison (nvme.dbbuf off and spec side by side) runs
// whenever nvme.dbbuf is not set, whatever else is; its JSON and json+
// shapes (docs/comparison.md) and its text table's spec/off column.
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>
#include <unistd.h>

#include "run_binary.h"

using nvmesim::test::run_nvmesim;
using Json = nlohmann::ordered_json;

namespace {

std::vector<std::string> keys(const Json& j) {
  std::vector<std::string> k;
  for (auto it = j.begin(); it != j.end(); ++it) k.push_back(it.key());
  return k;
}

const std::vector<std::string> kRatioKeys = {
    "iops", "per_io.sq_mmio", "per_io.cq_mmio", "per_io.exits", "eventidx.sq_hit_rate",
    "eventidx.cq_hit_rate", "lat_ns.percentile.50.000000", "lat_ns.percentile.99.000000"};

std::string fmt(const char* format, double v) {
  char b[64];
  std::snprintf(b, sizeof b, format, v);
  return b;
}
std::string fmt(const char* format, const char* v) {
  char b[64];
  std::snprintf(b, sizeof b, format, v);
  return b;
}

}  // namespace

TEST_CASE("comparison: an option other than nvme.dbbuf keeps both runs, each the single run's document",
          "[comparison][binary]") {
  const std::string args = "--preset=none --number_ios=2000 --hv.notify=ioeventfd --iodepth=16";
  const auto both = run_nvmesim(args + " --output-format=json");
  INFO(both.err);
  REQUIRE(both.exit_code == 0);
  const Json doc = Json::parse(both.out);
  CHECK(keys(doc) == std::vector<std::string>{"experiment", "outcome", "headline", "runs", "ratio_spec_to_off"});
  CHECK(doc["experiment"] == "default: doorbell buffer off vs spec");
  CHECK(doc["outcome"] == "ok");
  CHECK(keys(doc["runs"]) == std::vector<std::string>{"off", "spec"});
  // Each run is exactly the document of the one run with nvme.dbbuf set.
  for (const char* mode : {"off", "spec"}) {
    INFO(mode);
    const auto one = run_nvmesim(args + " --nvme.dbbuf=" + mode + " --output-format=json");
    REQUIRE(one.exit_code == 0);
    CHECK(doc["runs"][mode] == Json::parse(one.out));
    CHECK(doc["runs"][mode]["config"]["nvme.dbbuf"] == mode);
    CHECK(doc["runs"][mode]["config"]["hv.notify"] == "ioeventfd");
    CHECK(doc["runs"][mode]["ios"] == 2000);
  }
  // spec / off of the table's figures, null where off has none.
  const Json& ratio = doc["ratio_spec_to_off"];
  CHECK(keys(ratio) == kRatioKeys);
  const Json &off = doc["runs"]["off"], &spec = doc["runs"]["spec"];
  CHECK(ratio["iops"].get<double>() == Approx(spec["iops"].get<double>() / off["iops"].get<double>()).epsilon(1e-6));
  CHECK(ratio["per_io.sq_mmio"].get<double>() ==
        Approx(spec["per_io"]["sq_mmio"].get<double>() / off["per_io"]["sq_mmio"].get<double>()).epsilon(1e-5));
  CHECK(ratio["lat_ns.percentile.99.000000"].get<double>() ==
        Approx(spec["lat_ns"]["percentile"]["99.000000"].get<double>() /
               off["lat_ns"]["percentile"]["99.000000"].get<double>()).margin(5e-7));  // 6 decimals
  CHECK(ratio["eventidx.sq_hit_rate"].is_null());  // off has no hit rate
  CHECK(ratio["eventidx.cq_hit_rate"].is_null());
  CHECK(off["per_io"]["sq_mmio"] == 1.0);  // dbbuf off: every submission batch rings

  // The text table: the options not in the header, then a spec/off column.
  const auto text = run_nvmesim(args);
  REQUIRE(text.exit_code == 0);
  std::vector<std::string> lines;
  for (size_t at = 0, nl; (nl = text.out.find('\n', at)) != std::string::npos; at = nl + 1)
    lines.push_back(text.out.substr(at, nl - at));
  REQUIRE(lines.size() == 14);
  CHECK(lines[0] == "nvmesim default experiment: rw=randread bs=4k iodepth=16 numjobs=1 backend=null "
                    "number_ios=2000, MMIO doorbell exit 5100cyc at 2.3 GHz");
  CHECK(lines[1] == "also set: hv.notify=ioeventfd");
  CHECK(lines[3] == "                                  dbbuf=off     dbbuf=spec   spec/off");
  CHECK(lines[4] == fmt("%-28s", "IOPS") + fmt(" %14.0f", off["iops"].get<double>()) +
                        fmt(" %14.0f", spec["iops"].get<double>()) + fmt(" %10.3f", ratio["iops"].get<double>()));
  CHECK(lines[8] == fmt("%-28s", "SQ EventIdx hit rate") + fmt(" %14s", "n/a") +
                        fmt(" %13.1f%%", spec["eventidx"]["sq_hit_rate"].get<double>() * 100) + fmt(" %10s", "-"));
  CHECK(lines[13] == "Set --nvme.dbbuf (off or spec), or give --single-run, for one run's full report.");
}

TEST_CASE("comparison: one run when nvme.dbbuf is set (option, --config), --single-run, or another device",
          "[comparison][binary]") {
  const std::string ini = "/tmp/nvmesim_comparison_" + std::to_string(::getpid()) + ".ini";
  std::ofstream(ini) << "[nvme]\ndbbuf = spec\n";
  struct Row {
    std::string args;
    bool comparison;
  };
  const std::vector<Row> rows = {
      {"--number_ios=300", true},
      {"--preset haswell-ep --number_ios=300", true},  // a preset that leaves nvme.dbbuf alone
      {"--number_ios=300 --nvme.dbbuf=off", false},
      {"--number_ios=300 --config " + ini, false},
      {"--number_ios=300 --single-run", false},
      {"--number_ios=300 --device=virtio-blk", false},  // no doorbell buffer to compare
  };
  for (const Row& row : rows) {
    INFO(row.args);
    const auto r = run_nvmesim(row.args + " --output-format=json");
    REQUIRE(r.exit_code == 0);
    const Json doc = Json::parse(r.out);
    CHECK(doc.contains("runs") == row.comparison);
    CHECK(doc.contains("ios") == !row.comparison);
  }
  std::remove(ini.c_str());
  // --single-run takes nvme.dbbuf's default.
  const auto single = run_nvmesim("--number_ios=300 --single-run --output-format=json");
  CHECK(Json::parse(single.out)["config"]["nvme.dbbuf"] == "spec");
}

TEST_CASE("comparison: json+ holds both runs as fio groups 0 and 1, nvmesim's comparison under \"nvmesim\"",
          "[comparison][fio][binary]") {
  const std::string args = "--number_ios=1000 --numjobs=2 --iodepth=8";
  const auto plus = run_nvmesim(args + " --output-format=json+");
  INFO(plus.err);
  REQUIRE(plus.exit_code == 0);
  const Json doc = Json::parse(plus.out);
  CHECK(keys(doc) == std::vector<std::string>{"fio version", "timestamp", "timestamp_ms", "time", "jobs", "nvmesim"});
  REQUIRE(doc["jobs"].size() == 4);  // two vCPUs (fio's clones) per run
  for (size_t i = 0; i < 4; ++i) {
    INFO(i);
    const Json& job = doc["jobs"][i];
    const char* mode = i < 2 ? "off" : "spec";
    CHECK(job["jobname"] == "nvmesim");
    CHECK(job["groupid"] == (i < 2 ? 0 : 1));
    // The options the user set, then the run's nvme.dbbuf.
    CHECK(keys(job["job options"]) == std::vector<std::string>{"iodepth", "numjobs", "number_ios", "nvme.dbbuf"});
    CHECK(job["job options"]["nvme.dbbuf"] == mode);
    CHECK(job["read"]["total_ios"] == 1000);  // number_ios per job, as fio
    CHECK(job["write"]["total_ios"] == 0);
  }
  // "nvmesim": the --output-format=json comparison document.
  const auto json = run_nvmesim(args + " --output-format=json");
  REQUIRE(json.exit_code == 0);
  CHECK(doc["nvmesim"] == Json::parse(json.out));
  // The fio json+ of one run is unchanged: one group.
  const auto one = run_nvmesim(args + " --nvme.dbbuf=spec --output-format=json+");
  const Json single = Json::parse(one.out);
  REQUIRE(single["jobs"].size() == 2);
  CHECK(single["jobs"][1]["groupid"] == 0);
  CHECK_FALSE(single["jobs"][1]["job options"].contains("nvme.dbbuf"));
  // Per job, the comparison's spec group has the single spec run's figures.
  CHECK(doc["jobs"][2]["read"] == single["jobs"][0]["read"]);
  CHECK(doc["jobs"][3]["read"] == single["jobs"][1]["read"]);
}

TEST_CASE("comparison: a trace makes one run, and a job file without nvme.dbbuf compares",
          "[comparison][binary]") {
  // As traces/README.md says: a trace turns the comparison into one run of
  // the configuration (nvme.dbbuf at its default), the same as --single-run.
  const std::string tag = std::to_string(::getpid());
  for (const std::string& trace : {"--vcd /tmp/nvmesim_comparison_" + tag + ".vcd",
                                  "--timeline /tmp/nvmesim_comparison_" + tag + ".json"}) {
    INFO(trace);
    const auto traced = run_nvmesim("--number_ios=100 --output-format=json " + trace);
    const auto single = run_nvmesim("--number_ios=100 --output-format=json --single-run");
    REQUIRE(traced.exit_code == 0);
    CHECK_FALSE(Json::parse(traced.out).contains("runs"));
    CHECK(Json::parse(traced.out)["config"]["nvme.dbbuf"] == "spec");
    CHECK(Json::parse(traced.out)["per_io"] == Json::parse(single.out)["per_io"]);
  }
  for (const char* ext : {".vcd", ".gtkw", ".json"}) std::remove(("/tmp/nvmesim_comparison_" + tag + ext).c_str());
  const std::string job = "/tmp/nvmesim_comparison_" + std::to_string(::getpid()) + ".fio";
  std::ofstream(job) << "[global]\nrw=randread\niodepth=4\n[a]\nnumber_ios=200\n[b]\nrw=randwrite\nnumber_ios=300\n";
  const auto r = run_nvmesim("--job " + job + " --output-format=json");
  std::remove(job.c_str());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const Json doc = Json::parse(r.out);
  for (const char* mode : {"off", "spec"}) {
    INFO(mode);
    // Both sections ran in each run: 200 reads and 300 writes.
    CHECK(doc["runs"][mode]["read_ios"] == 200);
    CHECK(doc["runs"][mode]["write_ios"] == 300);
  }
}

TEST_CASE("comparison: a job file of several sections is described by its sections", "[comparison][binary]") {
  // The run's own rw/iodepth are only its first section's: the header names
  // each section's options as written, and [global]'s apart.
  const std::string job = "/tmp/nvmesim_comparison_sections_" + std::to_string(::getpid()) + ".fio";
  std::ofstream(job) << "[global]\nioengine=libaio\nrw=randread\nnumber_ios=200\n[a]\niodepth=4\n[b]\niodepth=16\n";
  const auto r = run_nvmesim("--job " + job);
  std::remove(job.c_str());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.substr(0, r.out.find('\n')) ==
        "nvmesim default experiment: 2 job sections: [a] iodepth=4; [b] iodepth=16; global: ioengine=libaio "
        "rw=randread number_ios=200, backend=null, MMIO doorbell exit 5100cyc at 2.3 GHz");
}
