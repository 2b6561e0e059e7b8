// Block-size inputs that once looped or ended in exit 1, each as a class
// with generated variants, on the command line and in a job file:
// - bssplit entries of 0% are fio's unspecified shares (options.c
//   split_parse_ddir: `if (!perc) perc = -1U`), so they share what the
//   others leave: the run ends, and each size gets its share;
// - bssplit's or bsrange's largest size above size is refused by name
//   (exit 2), as bs is;
// - io_size below bs (no I/O at all) is refused naming both.
#include <catch2/catch.hpp>

#include <fstream>
#include <string>
#include <vector>

#include "nvmesim/models/guest/fio_options.h"
#include "tests/platform/run_binary.h"
#include "tests/platform/temp_dir.h"

using nvmesim::test::run_nvmesim;

namespace fio_opt = nvmesim::models::fio_opt;

TEST_CASE("block sizes: a 0% bssplit share is unspecified, as fio reads it", "[fio][input]") {
  // text -> the shares fio gives (bssplit_ddir: the unspecified share the
  // rest equally, integer division), sorted by percentage.
  struct Case {
    const char* text;
    std::vector<std::pair<uint64_t, uint32_t>> expect;
  };
  const std::vector<Case> cases = {
      {"4k/0:8k/0", {{4096, 50}, {8192, 50}}},
      {"4k/0:8k/0:16k/0", {{4096, 33}, {8192, 33}, {16384, 33}}},
      {"4k/0", {{4096, 100}}},
      {"4k/40:8k/0", {{4096, 40}, {8192, 60}}},
      {"4k/40:8k/0:16k", {{8192, 30}, {16384, 30}, {4096, 40}}},
      {"4k/100:8k/0", {{8192, 0}, {4096, 100}}},
      {"4k/0:64k/0:8k/0:16k/0", {{4096, 25}, {65536, 25}, {8192, 25}, {16384, 25}}},
  };
  for (const Case& c : cases) {
    INFO(c.text);
    fio_opt::BsSplitList dirs[2];
    REQUIRE(fio_opt::parse_bssplit(c.text, dirs) == "");
    REQUIRE(dirs[0].size() == c.expect.size());
    for (size_t i = 0; i < c.expect.size(); ++i) {
      CHECK(dirs[0][i].bs == c.expect[i].first);
      CHECK(dirs[0][i].perc == c.expect[i].second);
    }
    CHECK(dirs[1].size() == dirs[0].size());
  }
}

TEST_CASE("block sizes: runs with 0% bssplit shares end, from the command line and from a job file",
          "[fio][input][binary]") {
  nvmesim::test::TempDir d("nvmesim_bssplit", "");
  const std::vector<std::string> splits = {"4k/0:8k/0", "4k/0:8k/0:16k/0", "4k/0,8k/0:16k/0", "4k/50:8k/0:16k/0"};
  for (const std::string& split : splits) {
    for (bool job : {false, true}) {
      std::string args;
      if (job) {
        std::ofstream(d / "j.fio") << "[j]\nrw=randread\nioengine=libaio\niodepth=4\nbssplit=" << split
                                   << "\nnumber_ios=200\n";
        args = "--job " + d / "j.fio";
      } else {
        args = "--single-run --rw=randrw --iodepth=4 --number_ios=200 --bssplit=" + split;
      }
      INFO(args);
      const auto r = run_nvmesim("--version >/dev/null; timeout -s KILL 20 " NVMESIM_BINARY " " + args +
                                 " --output-format=json");
      CHECK(r.exit_code == 0);
      CHECK(nvmesim::test::json_number(r.out, "ios") == 200);
    }
  }
}

TEST_CASE("block sizes: a bssplit or bsrange size above size, or io_size below bs, is refused by name, exit 2",
          "[fio][input][binary]") {
  nvmesim::test::TempDir d("nvmesim_bsize", "");
  struct Case {
    std::string cli, job, names;
  };
  const std::vector<Case> cases = {
      {"--bsrange=4k-128k --size=64k", "bsrange=4k-128k\nsize=64k\n", "bsrange"},
      {"--bsrange=4k-8k,4k-128k --size=64k", "bsrange=4k-8k,4k-128k\nsize=64k\n", "bsrange"},
      {"--bssplit=4k/50:128k/50 --size=64k", "bssplit=4k/50:128k/50\nsize=64k\n", "bssplit"},
      {"--bssplit=4k/0:1m/0 --size=512k", "bssplit=4k/0:1m/0\nsize=512k\n", "bssplit"},
      {"--bssplit=4k,256k --size=128k", "bssplit=4k,256k\nsize=128k\n", "bssplit"},
      {"", "io_size=4k\nbs=64k\n", "io_size"},
      {"", "io_size=60k\nbs=64k\n", "io_size"},
  };
  for (const Case& c : cases)
    for (bool job : {false, true}) {
      if (!job && c.cli.empty()) continue;
      std::string args;
      if (job) {
        std::ofstream(d / "j.fio") << "[j]\nrw=randrw\nioengine=libaio\niodepth=2\n" << c.job;
        args = "--job " + d / "j.fio";
      } else {
        args = "--single-run --rw=randrw " + c.cli;
      }
      INFO(args);
      const auto r = run_nvmesim("--version >/dev/null; timeout -s KILL 20 " NVMESIM_BINARY " " + args);
      CHECK(r.exit_code == 2);
      CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
      CHECK(r.err.find(c.names) != std::string::npos);
      if (c.names == "io_size") CHECK(r.err.find("bs (") != std::string::npos);
      else CHECK(r.err.find("size (") != std::string::npos);
    }
}
