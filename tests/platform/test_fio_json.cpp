// fio-compatible JSON out (platform/fio/fio_json.h): fio's keys, the same
// numbers as --output-format=json, and fio's own fio_jsonplus_clat2csv.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "nvmesim/models/guest/latency_histogram.h"
#include "nvmesim/platform/fio/fio_json.h"
#include "nvmesim/platform/config/params.h"
#include "run_binary.h"
#include "stats_tree.h"
#include "text_file.h"

using namespace nvmesim;
using namespace nvmesim::platform;

namespace {

// The text from `marker` on (fails the test when it is absent).
std::string from(const std::string& text, const std::string& marker) {
  const size_t at = text.find(marker);
  REQUIRE(at != std::string::npos);
  return text.substr(at);
}

// Keys appear in this order in `text`.
void check_key_order(const std::string& text, const std::vector<std::string>& keys) {
  size_t at = 0;
  for (const std::string& k : keys) {
    const size_t next = text.find("\"" + k + "\" : ", at);
    INFO("key " << k);
    CHECK(next != std::string::npos);
    if (next != std::string::npos) at = next;
  }
}

// The number after the first `"key" : ` (fio's spacing) in `text`.
double fio_number(const std::string& text, const std::string& key) {
  const std::string k = "\"" + key + "\" : ";
  const size_t at = text.find(k);
  if (at == std::string::npos) throw std::runtime_error("no key " + key);
  return std::stod(text.substr(at + k.size()));
}

int shell(const std::string& cmd) {
  const int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string fmt(double v) {
  char b[64];
  std::snprintf(b, sizeof b, "%f", v);
  return b;
}

}  // namespace

TEST_CASE("fio json+: keys, bins and figures of a known histogram", "[fio][json]") {
  // One vCPU, four reads with clat 100, 200, 200 and 5000 ns and slat 50 ns, in 1 ms.
  RunResults r;
  VcpuFigures f;
  for (uint64_t ns : {100, 200, 200, 5000}) {
    f.read.clat.add(ns);
    f.read.slat.add(50);
    f.read.lat.add(ns + 50);
  }
  f.depths.mark_submit(1, 1);
  f.depths.mark_submit(1, 2);
  f.depths.mark_submit(2, 4);
  f.depths.mark_complete(4);
  f.sim_time_ns = 1e6;
  r.vcpus.push_back(f);
  r.read = f.read;
  for (const char* name : {"vcpu0.ios", "vcpu0.read_ios"}) test::put_stat(r.stats, name, 4);
  test::put_stat(r.stats, "vcpu0.read_bytes", 4 * 4096, stats::Unit::Bytes);
  test::put_stat(r.stats, "vcpu0.write_ios", 0);
  test::put_stat(r.stats, "vcpu0.write_bytes", 0, stats::Unit::Bytes);
  // 250 us of guest work and 100 us in exits (picoseconds).
  test::put_stat(r.stats, "vcpu0.guest_time", 250000000, stats::Unit::Time);
  test::put_stat(r.stats, "vcpu0.exit_time.mmio_doorbell", 100000000, stats::Unit::Time);
  r.sim_time_ns = 1e6;
  r.lat = f.read.lat.hist;
  Config config;
  config.set("iodepth", "4");
  std::ostringstream o;
  write_fio_json_plus(r, config, nullptr, o);
  const std::string j = o.str();

  check_key_order(j, {"fio version", "timestamp", "timestamp_ms", "time", "jobs", "jobname",
                      "groupid", "error", "job options", "read", "io_bytes", "io_kbytes",
                      "bw_bytes", "bw", "iops", "runtime", "total_ios", "short_ios", "drop_ios",
                      "slat_ns", "clat_ns", "lat_ns", "bw_min", "bw_max", "bw_agg", "bw_mean",
                      "bw_dev", "bw_samples", "iops_min", "iops_max", "iops_mean", "iops_stddev",
                      "iops_samples", "write", "trim", "sync", "job_runtime", "usr_cpu", "sys_cpu",
                      "ctx", "majf", "minf", "iodepth_level", "iodepth_submit", "iodepth_complete",
                      "latency_ns", "latency_us", "latency_ms",
                      "latency_depth", "nvmesim"});
  CHECK(j.find("\"jobname\" : \"nvmesim\"") != std::string::npos);
  CHECK(j.find("\"job options\" : {\n        \"iodepth\" : \"4\"\n      }") != std::string::npos);
  const std::string read = from(j, "\"read\" : {");
  CHECK(read.find("\"io_bytes\" : 16384,") == read.find("\"io_bytes\""));
  CHECK(read.find("\"io_kbytes\" : 16,") != std::string::npos);
  CHECK(read.find("\"bw_bytes\" : 16384000,") != std::string::npos);  // 16384 B / 1 ms
  CHECK(read.find("\"bw\" : 16000,") != std::string::npos);           // KiB/s
  CHECK(read.find("\"iops\" : 4000.000000,") != std::string::npos);
  CHECK(read.find("\"runtime\" : 1,") != std::string::npos);
  CHECK(read.find("\"total_ios\" : 4,") != std::string::npos);
  // slat: four samples of 50 ns.
  CHECK(read.find("\"slat_ns\" : {\n          \"min\" : 50,\n          \"max\" : 50,\n          \"mean\" : "
                  "50.000000,\n          \"stddev\" : 0.000000,\n          \"N\" : 4,") !=
        std::string::npos);
  // fio's depth shares: I/Os 1 at depth 1, 1 at depth 2, 2 at depth 4 (of 4);
  // io_submit calls: 3, all of 1..4 I/Os; io_getevents calls: one of 4.
  CHECK(j.find("\"iodepth_level\" : {\n        \"1\" : 25.000000,\n        \"2\" : 25.000000,\n        "
               "\"4\" : 50.000000,") != std::string::npos);
  CHECK(j.find("\"iodepth_submit\" : {\n        \"0\" : 0.000000,\n        \"4\" : 100.000000,") !=
        std::string::npos);
  CHECK(j.find("\"iodepth_complete\" : {\n        \"0\" : 0.000000,\n        \"4\" : 100.000000,") !=
        std::string::npos);
  const std::string clat = from(read, "\"clat_ns\" : {");
  CHECK(clat.find("\"min\" : 100,") != std::string::npos);
  CHECK(clat.find("\"max\" : 5000,") != std::string::npos);
  CHECK(clat.find("\"mean\" : 1375.000000,") != std::string::npos);
  // Sample standard deviation: sum of squared deviations 17527500 over n - 1 = 3.
  CHECK(clat.find("\"stddev\" : " + fmt(std::sqrt(17527500.0 / 3)) + ",") != std::string::npos);
  CHECK(clat.find("\"N\" : 4,") != std::string::npos);
  // fio's percentiles: the first bin whose cumulative count reaches p% of 4.
  CHECK(clat.find("\"1.000000\" : 100,") != std::string::npos);
  CHECK(clat.find("\"50.000000\" : 201,") != std::string::npos);
  CHECK(clat.find("\"99.990000\" : 5024\n") != std::string::npos);
  // json+ bins keyed by fio's plat_idx_to_val: exact below 128 ns; 200 ns is
  // in the 2-ns bin [200, 201] -> 128 + 36.5 * 2 = 201; 5000 ns in the 64-ns
  // bin [4992, 5055] -> 4096 + 14.5 * 64 = 5024.
  CHECK(clat.find("\"bins\" : {\n            \"100\" : 1,\n            \"201\" : 2,\n            "
                  "\"5024\" : 1\n          }") != std::string::npos);
  // lat_ns = slat + clat: 150, 250, 250, 5050 ns.
  const std::string lat = from(read, "\"lat_ns\" : {");
  CHECK(lat.find("\"min\" : 150,") != std::string::npos);
  CHECK(lat.find("\"mean\" : 1425.000000,") != std::string::npos);
  // write and trim: no I/O, fio's zero objects without percentiles.
  const std::string write = from(j, "\"write\" : {");
  CHECK(write.find("\"total_ios\" : 0,") != std::string::npos);
  CHECK(write.substr(0, write.find("\"trim\"")).find("\"percentile\"") == std::string::npos);
  CHECK(j.find("\"usr_cpu\" : 25.000000,") != std::string::npos);
  CHECK(j.find("\"sys_cpu\" : 10.000000,") != std::string::npos);
  // 100 and 201 ns fall in fio's 100..249 ns bucket; 5024 ns in 4..9 us.
  CHECK(from(j, "\"latency_ns\"").find("\"250\" : 75.000000,") != std::string::npos);
  CHECK(from(j, "\"latency_us\"").find("\"10\" : 25.000000,") != std::string::npos);
  CHECK(j.find("\"latency_depth\" : 4,") != std::string::npos);
}

TEST_CASE("fio json+: the same numbers as --output-format=json", "[fio][json][binary]") {
  const std::string args = "--rw=randrw --iodepth=4 --number_ios=1500 --numjobs=2 --nvme.dbbuf=spec";
  const auto json = test::run_nvmesim(args + " --output-format=json");
  const auto plus = test::run_nvmesim(args + " --output-format=json+");
  REQUIRE(json.exit_code == 0);
  REQUIRE(plus.exit_code == 0);
  // nvmesim's own object is the json output, indented one level.
  std::string own = from(plus.out, "\"nvmesim\" : {");
  auto unindent = [](const std::string& t) {
    std::istringstream in(t);
    std::string line, out;
    while (std::getline(in, line)) out += line.substr(std::min(line.find_first_not_of(' '), line.size())) + "\n";
    return out;
  };
  own = own.substr(own.find('{'));
  own = own.substr(0, own.rfind('}'));  // the document's closing brace
  CHECK(unindent(own) == unindent(json.out));
  CHECK(test::json_number(own, "iops") == test::json_number(json.out, "iops"));
  // Two vCPUs, no group_reporting: two job entries; their I/Os add up.
  const std::string job0 = from(plus.out, "\"jobname\" : \"nvmesim\"");
  const std::string job1 = from(job0.substr(1), "\"jobname\" : \"nvmesim\"");
  double ios = 0, reads = 0, iops = 0, bw = 0;
  for (const std::string& job : {job0, job1}) {
    const std::string rd = from(job, "\"read\" : {"), wr = from(job, "\"write\" : {");
    ios += fio_number(rd, "total_ios") + fio_number(wr, "total_ios");
    reads += fio_number(rd, "total_ios");
    iops += fio_number(rd, "iops") + fio_number(wr, "iops");
    bw += fio_number(rd, "bw_bytes") + fio_number(wr, "bw_bytes");
  }
  CHECK(ios == test::json_number(json.out, "ios"));
  CHECK(ios == 3000);
  CHECK(reads == test::json_number(json.out, "read_ios"));
  // Per-vCPU intervals are at most the run's, so the per-job rates add up
  // to at least the run's; equal within the jobs' end-time spread.
  CHECK(iops >= test::json_number(json.out, "iops") - 0.01);
  CHECK(iops <= test::json_number(json.out, "iops") * 1.05);
  CHECK(bw >= test::json_number(json.out, "bw_bytes") - 4);
}

TEST_CASE("fio json+: one job with group_reporting has the json's iops, bw and percentiles",
          "[fio][json][binary]") {
  const std::string dir = "/tmp/nvmesim_fiojson_" + std::to_string(getpid());
  REQUIRE(shell("mkdir -p " + dir) == 0);
  std::ofstream(dir + "/g.fio") << "[global]\ngroup_reporting\nrw=randread\niodepth=8\n"
                                   "number_ios=1000\n[a]\nnumjobs=2\n";
  const auto json = test::run_nvmesim("--job " + dir + "/g.fio --single-run --output-format=json");
  const auto plus = test::run_nvmesim("--job " + dir + "/g.fio --single-run --output-format=json+");
  shell("rm -rf " + dir);
  REQUIRE(json.exit_code == 0);
  REQUIRE(plus.exit_code == 0);
  CHECK(plus.out.find("\"jobname\" : \"a\"") != std::string::npos);
  CHECK(from(plus.out, "\"jobname\" : \"a\"").substr(1).find("\"jobname\"") == std::string::npos);
  const std::string rd = from(plus.out, "\"read\" : {");
  CHECK(fio_number(rd, "total_ios") == 2000);
  CHECK(std::fabs(fio_number(rd, "iops") - test::json_number(json.out, "iops")) < 0.001);
  CHECK(fio_number(rd, "bw_bytes") == std::floor(test::json_number(json.out, "bw_bytes")));
  const std::string pj = from(from(json.out, "\"clat_ns\": {"), "\"percentile\": {");
  const std::string pp = from(from(rd, "\"clat_ns\" : {"), "\"percentile\" : {");
  for (const char* p : {"1.000000", "50.000000", "99.000000", "99.990000"}) {
    INFO("percentile " << p);
    const std::string kj = std::string("\"") + p + "\": ", kp = std::string("\"") + p + "\" : ";
    CHECK(std::stod(pj.substr(pj.find(kj) + kj.size())) == std::stod(pp.substr(pp.find(kp) + kp.size())));
  }
  CHECK(fio_number(from(rd, "\"clat_ns\" : {"), "min") == test::json_number(from(json.out, "\"clat_ns\""), "min"));
  CHECK(fio_number(from(rd, "\"lat_ns\" : {"), "min") == test::json_number(from(json.out, "\"lat_ns\""), "min"));
  CHECK(fio_number(from(rd, "\"slat_ns\" : {"), "N") == 2000);
}

TEST_CASE("fio json+: fio's fio_jsonplus_clat2csv reads it and its rows give nvmesim's clat",
          "[fio][json][binary][tools]") {
  FILE* p = ::popen("command -v fio_jsonplus_clat2csv", "r");
  REQUIRE(p);
  char buf[512] = {};
  const bool found = std::fgets(buf, sizeof buf, p) != nullptr;
  ::pclose(p);
  INFO("fio_jsonplus_clat2csv not found: install fio (README set-up: apt-get install fio python3-six)");
  REQUIRE(found);
  std::string tool = buf;
  tool.erase(tool.find_last_not_of("\n") + 1);

  const std::string dir = "/tmp/nvmesim_clat2csv_" + std::to_string(getpid());
  REQUIRE(shell("mkdir -p " + dir) == 0);
  const std::string args = "--rw=randrw --iodepth=6 --number_ios=2000 --seed=5 --single-run";
  const auto json = test::run_nvmesim(args + " --output-format=json");
  const auto plus = test::run_nvmesim(args + " --output-format=json+ --output " + dir + "/run.json");
  REQUIRE(json.exit_code == 0);
  REQUIRE(plus.exit_code == 0);
  const int rc = shell(tool + " " + dir + "/run.json " + dir + "/run.csv > " + dir + "/log 2>&1");
  INFO(nvmesim::test::slurp(dir + "/log"));
  REQUIRE(rc == 0);
  CHECK(shell(tool + " " + dir + "/run.json " + dir + "/run.csv --validate > /dev/null 2>&1") == 0);
  const std::string csv = nvmesim::test::slurp(dir + "/run_job0.csv");
  shell("rm -rf " + dir);

  // Columns: nsec, then count/cumulative/percentile for read, write, trim x
  // slat, clat, lat. Merge read and write clat into one histogram.
  std::istringstream lines(csv);
  std::string line;
  std::getline(lines, line);
  CHECK(line.rfind("nsec, read_slat_ns_count, ", 0) == 0);
  std::map<uint64_t, uint64_t> counts;
  uint64_t total = 0, read_total = 0, read_last_cumulative = 0;
  int slat_cells = 0;
  while (std::getline(lines, line)) {
    std::vector<std::string> cells;
    std::stringstream s(line);
    std::string cell;
    while (std::getline(s, cell, ',')) cells.push_back(cell);
    REQUIRE(cells.size() >= 28);
    auto number = [&](int i) -> int64_t {
      const std::string c = cells[size_t(i)];
      return c.find_first_of("0123456789") == std::string::npos ? -1 : std::stoll(c);
    };
    const uint64_t nsec = uint64_t(number(0));
    // read_clat_count is column 4, write_clat_count column 13.
    for (int col : {4, 13})
      if (number(col) >= 0) {
        counts[nsec] += uint64_t(number(col));
        total += uint64_t(number(col));
      }
    if (number(4) >= 0) {
      read_total += uint64_t(number(4));
      read_last_cumulative = uint64_t(number(5));
    }
    if (number(1) >= 0) ++slat_cells;
  }
  CHECK(slat_cells > 0);  // slat is measured: its bins have rows
  CHECK(total == 2000);
  CHECK(total == uint64_t(test::json_number(json.out, "ios")));
  CHECK(read_total == uint64_t(test::json_number(json.out, "read_ios")));
  CHECK(read_last_cumulative == read_total);
  // The percentile rule (the first bin whose cumulative count reaches p% of
  // all I/Os) over the CSV rows gives nvmesim's own clat_ns percentiles.
  const std::string pj = from(from(json.out, "\"clat_ns\": {"), "\"percentile\": {");
  for (double pc : models::LatencyHistogram::fio_percentiles()) {
    uint64_t cumulative = 0, value = 0;
    for (const auto& [ns, c] : counts) {
      cumulative += c;
      if (double(cumulative) >= pc / 100.0 * double(total)) {
        value = ns;
        break;
      }
    }
    const std::string key = "\"" + fmt(pc) + "\": ";
    INFO("percentile " << pc);
    CHECK(value == std::stoull(pj.substr(pj.find(key) + key.size())));
  }
}
