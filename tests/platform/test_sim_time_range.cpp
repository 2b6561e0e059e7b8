// Simulated time past SystemC's range (64-bit picoseconds, 213.5 days) is
// refused before the run, naming the option that bounds the run's time from
// below: generated over every such option, on the command line and in a job
// file. The example that once reported "ok" from wrapped time:
// --rate=1 --bs=1m --number_ios=40 (485 days at one byte per second).
#include <catch2/catch.hpp>

#include <fstream>
#include <string>
#include <vector>

#include "tests/platform/run_binary.h"
#include "tests/platform/temp_dir.h"

using nvmesim::test::run_nvmesim;

TEST_CASE("simulated time range: runs bound to pass half of SystemC's range are refused by option, exit 2",
          "[input][time][binary]") {
  nvmesim::test::TempDir d("nvmesim_timerange", "");
  struct Case {
    std::string options;  // name=value lines
    std::string named;    // the option the error names
    std::string days;     // the least time it states
  };
  // Worked out by hand: bytes / rate, I/Os / rate_iops, (I/Os - 1) /
  // thinktime_blocks thinktimes, ceil(I/Os / iodepth) backend latencies.
  const std::vector<Case> cases = {
      {"rate=1\nbs=1m\nnvme.mdts=0\nnumber_ios=40\n", "rate", "485.5 days"},        // 40 x 2^20 s
      {"rate=1k\nbs=4k\nnumber_ios=3000000\n", "rate", "138.9 days"},               // 3e6 x 4 s
      {"rate_iops=1\nnumber_ios=10000000\n", "rate_iops", "115.7 days"},            // 1e7 s
      {"rw=randrw\nrate_iops=1,1\nnumber_ios=20000000\n", "rate_iops", "115.7 days"},  // 2e7 / 2
      {"thinktime=3600s\nnumber_ios=10000\n", "thinktime", "416.6 days"},           // 9999 h
      {"thinktime=3600s\nthinktime_blocks=2\nnumber_ios=10000\n", "thinktime", "208.3 days"},  // 4999 h
      {"nvme.backend=latency\nnvme.backend_latency=1s\niodepth=1\nnumber_ios=10000000\n", "nvme.backend_latency",
       "115.7 days"},
  };
  size_t runs = 0;
  for (const Case& c : cases)
    for (bool job : {false, true}) {
      std::string args;
      if (job) {
        std::ofstream f(d / "j.fio");
        f << "[j]\nioengine=libaio\n";
        std::string line;
        for (size_t at = 0; at < c.options.size();) {
          const size_t end = c.options.find('\n', at);
          line = c.options.substr(at, end - at);
          at = end + 1;
          if (line.rfind("nvme.", 0) == 0) args += " --" + line;  // not a fio option
          else f << line << "\n";
        }
        args = "--job " + d / "j.fio" + args;
      } else {
        args = "--single-run";
        for (size_t at = 0; at < c.options.size();) {
          const size_t end = c.options.find('\n', at);
          args += " --" + c.options.substr(at, end - at);
          at = end + 1;
        }
      }
      INFO(args);
      const auto r = run_nvmesim("--version >/dev/null; timeout -s KILL 20 " NVMESIM_BINARY " " + args);
      ++runs;
      CHECK(r.exit_code == 2);
      CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
      CHECK(r.err.find("--" + c.named + ": ") != std::string::npos);
      CHECK(r.err.find("need at least " + c.days) != std::string::npos);
      CHECK(r.err.find("213.5 days") != std::string::npos);
    }
  CHECK(runs == 2 * cases.size());
}

TEST_CASE("simulated time range: a rate-limited run within range still runs", "[input][time][binary]") {
  const auto r = run_nvmesim("--single-run --iodepth=1 --rate=1m --number_ios=20 --output-format=json");
  CHECK(r.exit_code == 0);
  CHECK(nvmesim::test::json_number(r.out, "ios") == 20);
}
