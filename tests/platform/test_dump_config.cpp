// --dump-config writes the effective configuration as INI; --config reads
// it back (and a run's JSON document) to the same run, byte for byte.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/platform/run_binary.h"
#include "tests/platform/temp_dir.h"
#include "tests/platform/text_file.h"

using nvmesim::test::check_refused;
using nvmesim::test::run_nvmesim;
using nvmesim::test::slurp;
using nvmesim::test::TempDir;

namespace {

// Configurations of several kinds: the comparison, single runs, presets
// (expanded), another device, cycles, sizes that set number_ios, reals.
const std::vector<std::string> kVariants = {
    "--number_ios=1500",
    "--preset qemu-7.1,kvm --iodepth=8 --number_ios=1500",
    "--preset haswell-ep --nvme.dbbuf=spec --iodepth=4 --number_ios=1200 --hv.cpu_ghz=3.1",
    "--single-run --device=virtio-blk --hv.notify=ioeventfd --number_ios=1000",
    "--size=8m --bs=8k --nvme.dbbuf=off",
    "--rw=randrw --rwmixread=70 --numjobs=2 --iodepth=2 --number_ios=600 --seed=7 --nvme.dbbuf=spec",
};

void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

}  // namespace

TEST_CASE("dump-config: a dumped configuration, and a run's JSON, replay the run byte for byte", "[cli][binary]") {
  TempDir dir("nvmesim_dump_config", "replay");
  for (const std::string& args : kVariants) {
    for (const char* format : {"normal", "json"}) {
      INFO("nvmesim " << args << " --output-format=" << format);
      const std::string ini = dir / "run.ini";
      std::remove(ini.c_str());
      const auto original = run_nvmesim(args + " --output-format=" + format + " --dump-config " + ini);
      REQUIRE(original.exit_code == 0);
      const auto replay = run_nvmesim("--config " + ini + " --output-format=" + format);
      CHECK(replay.exit_code == 0);
      CHECK(replay.out == original.out);
      if (std::string(format) == "json") {
        const std::string json = dir / "run.json";
        write(json, original.out);
        const auto from_json = run_nvmesim("--config " + json + " --output-format=json");
        CHECK(from_json.exit_code == 0);
        CHECK(from_json.out == original.out);
      }
    }
  }
}

TEST_CASE("dump-config: every parameter is in the file, only what the run set is active", "[cli][binary]") {
  TempDir dir("nvmesim_dump_config", "lines");
  const std::string ini = dir / "run.ini";
  REQUIRE(run_nvmesim("--preset haswell-ep --iodepth=8 --number_ios=100 --nvme.dbbuf=off --dump-config " + ini +
                      " --output-format=json").exit_code == 0);
  const std::string text = slurp(ini);
  const auto list = run_nvmesim("--list-params");
  std::istringstream params(list.out);
  std::string line;
  std::getline(params, line);  // header
  size_t count = 0;
  while (std::getline(params, line)) {
    const std::string name = line.substr(0, line.find(' '));
    const size_t dot = name.find('.');
    const std::string key = dot == std::string::npos ? name : name.substr(dot + 1);
    INFO(name);
    CHECK((text.find("\n" + key + " = ") != std::string::npos || text.find("\n; " + key + " = ") != std::string::npos));
    ++count;
  }
  CHECK(count > 100);
  // Set: the preset, its five exit costs, iodepth, number_ios, nvme.dbbuf.
  CHECK(text.find("\niodepth = 8\n") != std::string::npos);
  CHECK(text.find("\nexit_mmio = 5100cyc\n") != std::string::npos);
  CHECK(text.find("\nexit_pio_ioeventfd = 1150cyc\n") != std::string::npos);
  CHECK(text.find("\ndbbuf = off\n") != std::string::npos);
  // The presets the run is built on, which a replay applies again.
  CHECK(text.find("\npreset = haswell-ep\n") != std::string::npos);
  // Left at their defaults: commented.
  CHECK(text.find("\n; bs = 4k\n") != std::string::npos);
  size_t active = 0;
  std::istringstream lines(text);
  while (std::getline(lines, line))
    if (!line.empty() && line[0] != '#' && line[0] != ';' && line[0] != '[') ++active;
  CHECK(active == 9);
}

TEST_CASE("dump-config: refusals name the option, exit 2", "[cli][binary]") {
  TempDir dir("nvmesim_dump_config", "refused");
  const std::string job = dir / "a.fio";
  write(job, "[a]\nrw=randread\niodepth=2\nnumber_ios=100\n");
  const auto with_job = run_nvmesim("--job " + job + " --dump-config " + (dir / "x.ini"));
  CHECK(with_job.exit_code == 2);
  CHECK(with_job.err.rfind("nvmesim: error: --dump-config: fio's job options", 0) == 0);
  check_refused("--dump-config=''", "nvmesim: error: --dump-config: empty value after '='");
  check_refused("--dump-config ''", "nvmesim: error: --dump-config: empty file name");
  const auto to_dir = run_nvmesim("--number_ios=10 --dump-config " + dir.path.string());
  CHECK(to_dir.exit_code == 2);
  CHECK(to_dir.err.rfind("nvmesim: error: --dump-config: cannot open", 0) == 0);
  const std::string ini = dir / "in.ini";
  write(ini, "iodepth = 4\n");
  const auto over_input = run_nvmesim("--config " + ini + " --dump-config " + ini);
  CHECK(over_input.exit_code == 2);
  CHECK(slurp(ini) == "iodepth = 4\n");
}

TEST_CASE("dump-config: a JSON --config that is not a run's document is refused by name", "[cli][binary]") {
  TempDir dir("nvmesim_dump_config", "json");
  const std::string f = dir / "c.json";
  write(f, "{\"config\": {\"iodepth\": \"8\", \"no.such\": \"1\"}}");
  check_refused("--config " + f, "nvmesim: error: config file " + f + ": unknown key 'no.such' (see --list-params)");
  write(f, "{\"config\": {\"iodepth\": 8}}");
  check_refused("--config " + f, "nvmesim: error: config file " + f +
                                     ": 'iodepth' must be a string, as the JSON's \"config\" writes it");
  write(f, "{\"config\": {\"iodepth\": \"0\"}}");
  check_refused("--config " + f, "nvmesim: error: config file " + f + ": --iodepth: 0 is out of range (1..4095)");
  write(f, "{\"config\": ");
  const auto bad = run_nvmesim("--config " + f);
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.rfind("nvmesim: error: config file " + f + ": not valid JSON", 0) == 0);
  // The "config" object alone is accepted too.
  write(f, "{\"iodepth\": \"2\", \"number_ios\": \"50\", \"nvme.dbbuf\": \"off\"}");
  const auto alone = run_nvmesim("--config " + f + " --output-format=json");
  CHECK(alone.exit_code == 0);
  CHECK(alone.out.find("\"ios\": 50,") != std::string::npos);
}
