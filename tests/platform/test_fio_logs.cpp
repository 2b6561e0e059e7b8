// fio's log files (write_lat_log, write_bw_log, write_iops_log, log_avg_msec,
// log_offset) in fio 3.33's format, checked row by row against the run's
// own figures; tests/fio_logs_plots.sh renders them with fio_generate_plots.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>
#include <unistd.h>

#include "run_binary.h"

using nvmesim::test::run_nvmesim;

namespace {

std::vector<std::vector<long long>> rows(const std::string& path, size_t columns) {
  std::ifstream in(path);
  REQUIRE(in);
  std::vector<std::vector<long long>> out;
  std::string line;
  while (std::getline(in, line)) {
    INFO(path << ": " << line);
    std::vector<long long> r;
    std::istringstream s(line);
    std::string cell;
    while (std::getline(s, cell, ',')) {
      if (!r.empty()) {  // fio writes ", " between columns
        REQUIRE(cell.size() > 1);
        REQUIRE(cell[0] == ' ');
      }
      r.push_back(std::stoll(cell));
    }
    REQUIRE(r.size() == columns);
    out.push_back(r);
  }
  return out;
}

std::string ls(const std::string& dir) {
  std::string out;
  FILE* p = ::popen(("ls " + dir).c_str(), "r");
  char b[256];
  while (std::fgets(b, sizeof b, p)) out += b;
  ::pclose(p);
  return out;
}

}  // namespace

TEST_CASE("fio logs: every I/O a row in fio's columns, values from the run", "[fio][logs][binary]") {
  const std::string dir = "/tmp/nvmesim_fiologs_" + std::to_string(::getpid());
  REQUIRE(std::system(("rm -rf " + dir + " && mkdir -p " + dir).c_str()) == 0);
  const std::string job =
      "[global]\nrw=randrw\niodepth=8\nbs=8k\n"
      "[j]\nnumber_ios=300\nwrite_lat_log\nwrite_bw_log=bw\nwrite_iops_log=io\nlog_offset=1\n"
      "[k]\nruntime=3ms\ntime_based\nwrite_lat_log=avg\nwrite_bw_log=avg\nwrite_iops_log=avg\nlog_avg_msec=1\n";
  std::ofstream(dir + "/l.fio") << job;
  const auto r = run_nvmesim("--job " + dir + "/l.fio --nvme.dbbuf=spec --hv.wakeup=fixed --output-format=json --output " + dir +
                             "/out.json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  REQUIRE(std::system(("cd " + dir + " && " + NVMESIM_BINARY + " --job l.fio --nvme.dbbuf=spec --hv.wakeup=fixed >/dev/null").c_str()) == 0);
  // fio's names: NAME_TYPE.N.log, N the job's number (1, 2).
  CHECK(ls(dir) ==
        "avg_bw.2.log\navg_clat.2.log\navg_iops.2.log\navg_lat.2.log\navg_slat.2.log\nbw_bw.1.log\nio_iops.1.log\n"
        "j_clat.1.log\nj_lat.1.log\nj_slat.1.log\nl.fio\nout.json\n");
  // Real fio 3.33 names the same job file's logs the same (when it is installed).
  if (std::system("command -v fio >/dev/null 2>&1") == 0) {
    const std::string real = dir + "/real";
    REQUIRE(std::system(("mkdir -p " + real).c_str()) == 0);
    std::ofstream(real + "/r.fio") << "[global]\nioengine=null\nsize=1m\n" << job;
    REQUIRE(std::system(("cd " + real + " && fio r.fio >/dev/null 2>&1").c_str()) == 0);
    CHECK(ls(real) ==
          "avg_bw.2.log\navg_clat.2.log\navg_iops.2.log\navg_lat.2.log\navg_slat.2.log\nbw_bw.1.log\nio_iops.1.log\n"
          "j_clat.1.log\nj_lat.1.log\nj_slat.1.log\nr.fio\n");
    CHECK(rows(real + "/j_lat.1.log", 6).size() > 0);  // fio's own: 6 columns with log_offset
  }
  const nlohmann::json out = nlohmann::json::parse(std::ifstream(dir + "/out.json"));
  // Job j, every I/O: time (ms), latency (ns), direction, bs, offset, priority.
  const auto lat = rows(dir + "/j_lat.1.log", 6);
  REQUIRE(lat.size() == 300);
  // clat and slat: the same rows (time, direction, bs, offset), values that add up to lat.
  const auto clat = rows(dir + "/j_clat.1.log", 6), slat = rows(dir + "/j_slat.1.log", 6);
  REQUIRE(clat.size() == lat.size());
  REQUIRE(slat.size() == lat.size());
  for (size_t i = 0; i < lat.size(); ++i) {
    INFO("row " << i);
    CHECK(clat[i][1] + slat[i][1] >= lat[i][1] - 1);  // each truncated to whole ns
    CHECK(clat[i][1] + slat[i][1] <= lat[i][1]);
    CHECK(slat[i][1] > 0);
    for (size_t c : {0, 2, 3, 4, 5}) CHECK((clat[i][c] == lat[i][c] && slat[i][c] == lat[i][c]));
  }
  const auto bw = rows(dir + "/bw_bw.1.log", 6);
  const auto iops = rows(dir + "/io_iops.1.log", 6);
  REQUIRE(bw.size() == 300);
  REQUIRE(iops.size() == 300);
  long long reads = 0, writes = 0, prev_ms = 0;
  long double sum = 0;
  for (size_t i = 0; i < lat.size(); ++i) {
    INFO(i);
    CHECK(lat[i][0] >= prev_ms);  // in completion order
    prev_ms = lat[i][0];
    (lat[i][2] == 0 ? reads : writes) += 1;
    CHECK(lat[i][3] == 8192);
    CHECK(lat[i][4] % 8192 == 0);  // the I/O's byte offset
    CHECK(lat[i][5] == 0);
    sum += lat[i][1];
    // fio's add_bw_sample: bytes * 10^6 / latency in ns.
    CHECK(bw[i][1] == 8192LL * 1000000 / lat[i][1]);
    CHECK((std::vector<long long>{bw[i][0], bw[i][2], bw[i][3], bw[i][4]}) ==
          (std::vector<long long>{lat[i][0], lat[i][2], lat[i][3], lat[i][4]}));
    CHECK(iops[i][1] == 1);
  }
  // The counts and the mean latency are the run's, for job j (vCPU 0).
  CHECK(reads == out["stats"]["vcpu0"]["read_ios"].get<long long>());
  CHECK(writes == out["stats"]["vcpu0"]["write_ios"].get<long long>());
  // Job k, 1 ms windows: no offset column, one row per direction per window.
  const auto avg_iops = rows(dir + "/avg_iops.2.log", 5);
  const auto avg_lat = rows(dir + "/avg_lat.2.log", 5);
  REQUIRE(avg_iops.size() == avg_lat.size());
  REQUIRE(avg_iops.size() >= 6);  // 3 ms, reads and writes, and the drain after the runtime
  long long ios = 0;
  for (size_t i = 0; i < avg_iops.size(); ++i) {
    CHECK(avg_iops[i][0] == avg_lat[i][0]);
    CHECK(avg_iops[i][0] >= 1);  // a window is logged at its end
    CHECK(avg_iops[i][3] == 8192);  // the job's bs (fio's __add_samples)
    CHECK(avg_lat[i][3] == 0);      // 0 in windowed latency rows
    ios += avg_iops[i][1] / 1000;   // 1 ms windows: I/Os per second / 1000
  }
  CHECK(ios == out["stats"]["vcpu1"]["ios"].get<long long>());
  std::system(("rm -rf " + dir).c_str());
}

TEST_CASE("fio logs: bad values are refused, and the comparison cannot write one run's logs", "[fio][logs][binary]") {
  const std::string path = "/tmp/nvmesim_fiologs_bad_" + std::to_string(::getpid()) + ".fio";
  std::ofstream(path) << "[a]\nwrite_lat_log\nlog_avg_msec=-1\n";
  nvmesim::test::check_refused("--job " + path + " --nvme.dbbuf=spec",
                               "nvmesim: error: --job " + path +
                                   " line 3: log_avg_msec=-1: not a number of milliseconds (0..3600000)");
  std::ofstream(path) << "[a]\nwrite_lat_log\n";
  nvmesim::test::check_refused("--job " + path,
                               "nvmesim: error: --job: fio's logs (write_lat_log, write_bw_log, write_iops_log) "
                               "follow one run and nvme.dbbuf is not set, so two run (off and spec): set "
                               "--nvme.dbbuf=off or spec, or give --single-run");
  std::remove(path.c_str());
}
