// A sweep's guards hold whatever the directory holds and however a name is
// spelled. Generated variants:
//  - --resume over a directory whose sweep.json is deleted, a FIFO, a
//    directory, or corrupt in each way (not JSON, a seed that is not an
//    integer, fixed options that are not strings, an axis without values,
//    of an unknown parameter, a seed axis of text):
//    refused (exit 2, one line naming sweep.json), nothing run, nothing
//    rewritten; the same damage under --merge is refused too;
//  - every parameter of the registry swept and also fixed (--NAME=V and
//    --NAME V), and every alias pair swept as two axes or swept under one
//    spelling and fixed under the other: refused naming both;
//  - --merge DIR --out DIR in every spelling (DIR, ./DIR, DIR/, DIR/.,
//    a symbolic link, the absolute path): refused, DIR's results unchanged;
//  - --emit slurm|parallel over the emitted-size cap: refused before a file
//    is written; under the cap the list is streamed (a 48 MB list under a
//    120 MB address-space limit).
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/stat.h>
#include <vector>

#include "nvmesim/platform/config/params.h"
#include "nvmesim/platform/sweep/sweep_grid.h"
#include "run_binary.h"
#include "temp_dir.h"
#include "text_file.h"

namespace fs = std::filesystem;
using nvmesim::test::run_nvmesim;
using nvmesim::test::slurp;
using namespace nvmesim::platform;

namespace {

struct Dir : nvmesim::test::TempDir {
  explicit Dir(const std::string& tag) : TempDir("nvmesim_sweepg", tag) {}
};

size_t lines(const std::string& s) { return size_t(std::count(s.begin(), s.end(), '\n')); }

// One parameter given twice (axes, or an axis and a fixed option): refused.
bool refused(const std::vector<sweep::Axis>& axes, const std::vector<std::string>& fixed, std::string& message) {
  try {
    sweep::check_one_setting_per_parameter(axes, fixed);
  } catch (const sweep::UsageError& e) {
    message = e.what();
    return true;
  }
  return false;
}

}  // namespace

TEST_CASE("sweep guards: --resume and --merge refuse rows whose sweep.json is gone, not a file, or corrupt",
          "[sweep][binary]") {
  const Dir d("resume");
  const std::string grid = "sweep --grid numjobs=1,2 --number_ios=100 --bs=4k";
  REQUIRE(run_nvmesim(grid + " --out " + d / "base").exit_code == 0);
  struct Damage {
    const char* name;
    std::string (*apply)(const std::string& dir);  // returns what the message must name
  };
  const std::vector<Damage> damages = {
      {"deleted", [](const std::string& dir) { fs::remove(dir + "/sweep.json"); return std::string("no sweep.json"); }},
      {"fifo", [](const std::string& dir) {
         fs::remove(dir + "/sweep.json");
         ::mkfifo((dir + "/sweep.json").c_str(), 0644);
         return dir + "/sweep.json";
       }},
      {"directory", [](const std::string& dir) {
         fs::remove(dir + "/sweep.json");
         fs::create_directory(dir + "/sweep.json");
         return dir + "/sweep.json";
       }},
      {"not json", [](const std::string& dir) { std::ofstream(dir + "/sweep.json") << "{\"seed\":1,"; return dir + "/sweep.json"; }},
      {"empty", [](const std::string& dir) { std::ofstream(dir + "/sweep.json") << ""; return dir + "/sweep.json"; }},
      {"seed text", [](const std::string& dir) {
         std::ofstream(dir + "/sweep.json") << "{\"seed\":\"x\",\"fixed\":[],\"axes\":[]}";
         return dir + "/sweep.json";
       }},
      {"seed negative", [](const std::string& dir) {
         std::ofstream(dir + "/sweep.json") << "{\"seed\":-1,\"fixed\":[],\"axes\":[]}";
         return dir + "/sweep.json";
       }},
      {"seed float", [](const std::string& dir) {
         std::ofstream(dir + "/sweep.json") << "{\"seed\":1e300,\"fixed\":[],\"axes\":[]}";
         return dir + "/sweep.json";
       }},
      {"fixed numbers", [](const std::string& dir) {
         std::ofstream(dir + "/sweep.json") << "{\"seed\":1,\"fixed\":[1,2],\"axes\":[]}";
         return dir + "/sweep.json";
       }},
      {"axis without values", [](const std::string& dir) {
         std::ofstream(dir + "/sweep.json") << "{\"seed\":1,\"fixed\":[],\"axes\":[{\"name\":\"numjobs\"}]}";
         return dir + "/sweep.json";
       }},
      {"unknown axis", [](const std::string& dir) {
         std::ofstream(dir + "/sweep.json") << "{\"seed\":1,\"fixed\":[],\"axes\":[{\"name\":\"nope\",\"values\":[\"1\"]}]}";
         return dir + "/sweep.json";
       }},
      {"seed axis text", [](const std::string& dir) {
         std::ofstream(dir + "/sweep.json") << "{\"seed\":1,\"fixed\":[],\"axes\":[{\"name\":\"seed\",\"values\":[\"x\"]}]}";
         return dir + "/sweep.json";
       }},
      {"array", [](const std::string& dir) { std::ofstream(dir + "/sweep.json") << "[]"; return dir + "/sweep.json"; }},
  };
  // The rows in results.jsonl, or only in the .partial an interrupted sweep leaves.
  for (const bool partial : {false, true})
    for (const Damage& damage : damages) {
      std::string tag = std::string(damage.name) + (partial ? "-partial" : "");
      std::replace(tag.begin(), tag.end(), ' ', '-');
      const std::string dir = d / tag;
      fs::copy(d / "base", dir, fs::copy_options::recursive);
      if (partial) fs::rename(dir + "/results.jsonl", dir + "/results.jsonl.partial");
      const std::string names = damage.apply(dir);
      const std::string jsonl = slurp(dir + (partial ? "/results.jsonl.partial" : "/results.jsonl"));
      INFO(damage.name << (partial ? " (rows in the .partial)" : ""));
      // Another sweep's fixed options would mix 4k/100-I/O rows with 8k/300-I/O ones.
      const auto r = run_nvmesim("sweep --grid numjobs=1,2,3 --number_ios=300 --bs=8k --out " + dir + " --resume");
      INFO(r.err);
      CHECK(r.exit_code == 2);
      CHECK(lines(r.err) == 1);
      CHECK(r.err.find("nvmesim sweep: error: --resume: ") == 0);
      CHECK(r.err.find(names) != std::string::npos);
      CHECK(slurp(dir + (partial ? "/results.jsonl.partial" : "/results.jsonl")) == jsonl);
      CHECK(!fs::exists(dir + "/points/2.json"));  // the new point did not run
      {  // The same damage beside a sound sweep under --merge.
        const auto m = run_nvmesim("sweep --merge " + d / "base " + dir + " --out " + dir + "-merged");
        INFO(m.err);
        CHECK(m.exit_code == 2);
        CHECK(lines(m.err) == 1);
        CHECK(!fs::exists(dir + "-merged/results.csv"));
      }
    }
  // With no rows in the directory there is nothing to mix: the sweep runs.
  const std::string empty = d / "no-rows";
  fs::create_directory(empty);
  CHECK(run_nvmesim(grid + " --out " + empty + " --resume").exit_code == 0);
}

TEST_CASE("sweep guards: one parameter is one axis and never also fixed, in any spelling", "[sweep]") {
  const ParamRegistry& registry = ParamRegistry::builtin();
  size_t params = 0, aliases = 0;
  for (const ParamSpec& spec : registry.all()) {
    const std::string value = spec.default_value.empty() ? "1" : spec.default_value;
    std::vector<std::string> spellings{spec.name};
    if (!spec.alias.empty()) spellings.push_back(spec.alias);
    for (const std::string& swept : spellings)
      for (const std::string& fixed : spellings) {
        INFO("--grid " << swept << " beside --" << fixed);
        std::string message;
        CHECK(refused({{swept, {value}}}, {"--" + fixed + "=" + value}, message));
        CHECK(message.find("--grid " + swept) == 0);
        CHECK(message.find("--" + fixed) != std::string::npos);
        CHECK(refused({{swept, {value}}}, {"--" + fixed, value}, message));  // --NAME VALUE
        CHECK(refused({{"iodepth", {"1"}}, {swept, {value}}}, {"--number_ios=100", "--" + fixed + "=" + value},
                      message) == true);
        if (swept != fixed) {
          INFO("--grid " << swept << " and --grid " << fixed);
          CHECK(refused({{swept, {value}}, {fixed, {value}}}, {}, message));
          CHECK(message.find(swept) != std::string::npos);
          CHECK(message.find(fixed) != std::string::npos);
          CHECK(message.find(spec.name) != std::string::npos);  // the parameter they both are
          ++aliases;
        }
      }
    // Another parameter fixed beside it, and the option's value that
    // happens to spell a parameter, are not refused.
    std::string message;
    const std::string other = spec.name == "iodepth" ? "numjobs" : "iodepth";
    CHECK_FALSE(refused({{spec.name, {value}}}, {"--" + other + "=2", "--job", spec.name}, message));
    ++params;
  }
  CHECK(params == registry.all().size());
  CHECK(aliases >= 2);  // hv.poll_max and hv.poll_max_ns at least, both ways round
  // As the command line gives them: exit 2, one line, nothing made.
  const Dir d("spell");
  for (const std::string& args :
       {std::string("--grid hv.poll_max=1us,2us --grid hv.poll_max_ns=3us"),
        std::string("--grid hv.poll_max_ns=1us,2us --hv.poll_max=3us"), std::string("--grid bs=4k,8k --bs=16k"),
        std::string("--grid iodepth=1,2 --iodepth 4"), std::string("--grid hv.poll_max=1us --hv.poll_max_ns 3us")}) {
    const auto r = run_nvmesim("sweep " + args + " --number_ios=100 --out " + d / "s");
    INFO(args << "\n" << r.err);
    CHECK(r.exit_code == 2);
    CHECK(lines(r.err) == 1);
    CHECK(r.err.find("nvmesim sweep: error: --grid ") == 0);
    CHECK(!fs::exists(d / "s"));
  }
  const auto merged = run_nvmesim("sweep --merge " + d / "none --grid hv.poll_max=1us --grid hv.poll_max_ns=2us --out " +
                                  d / "m");
  CHECK(merged.exit_code == 2);
}

TEST_CASE("sweep guards: --merge refuses --out among its inputs in every spelling", "[sweep][binary]") {
  const Dir d("mergeout");
  REQUIRE(run_nvmesim("sweep --grid numjobs=1,2 --number_ios=100 --out " + d / "s").exit_code == 0);
  REQUIRE(run_nvmesim("sweep --grid numjobs=4 --number_ios=100 --out " + d / "t").exit_code == 0);
  fs::create_directory_symlink(d / "s", d / "link");
  const std::string csv = slurp(d / "s/results.csv"), jsonl = slurp(d / "s/results.jsonl");
  const std::vector<std::string> outs = {"s", "./s", "s/", "s/.", "s/../s", "link", "link/", d / "s"};
  for (const std::string& out : outs)
    for (const std::string& inputs : {std::string("s"), std::string("t s"), std::string("link t")}) {
      const std::string cmd = "--version >/dev/null; cd " + d.path.string() + " && " NVMESIM_BINARY " sweep --merge " +
                              inputs + " --out " + out;
      const auto r = run_nvmesim(cmd);
      INFO("sweep --merge " << inputs << " --out " << out << "\n" << r.err);
      CHECK(r.exit_code == 2);
      CHECK(lines(r.err) == 1);
      CHECK(r.err.find("nvmesim sweep: error: --merge ") == 0);
      CHECK(r.err.find("one directory") != std::string::npos);
      CHECK(slurp(d / "s/results.csv") == csv);
      CHECK(slurp(d / "s/results.jsonl") == jsonl);
    }
  // A new output beside them still merges.
  CHECK(run_nvmesim("sweep --merge " + d / "s " + d / "t --out " + d / "m").exit_code == 0);
}

TEST_CASE("sweep guards: --emit streams its list and refuses one over the size cap", "[sweep][binary]") {
  const Dir d("emit");
  // Long fixed options (a sweep file holds more than a command line can):
  // every point's line carries them all.
  auto sweep_file = [&](const std::string& name, size_t options, const std::string& grid) {
    std::ofstream f(d / name);
    f << grid << "\n";
    for (size_t k = 0; k < options; ++k) f << "--hv.exit_mmio=" << (2000 + k % 1000) << "cyc\n";
    return d / name;
  };
  // 400 points x ~900 KB per line: over 256 MiB, for each kind of list.
  const std::string big = sweep_file("big.txt", 36000, "iodepth = 1:400:1");
  for (const std::string what : {"slurm", "parallel"}) {
    const auto r = run_nvmesim("sweep --sweep-file " + big + " --emit " + what + " --out " + d / what);
    INFO(what << "\n" << r.err);
    CHECK(r.exit_code == 2);
    CHECK(lines(r.err) == 1);
    CHECK(r.err.find("nvmesim sweep: error: --emit: the list of 400 points would pass 256 MiB") == 0);
    CHECK(!fs::exists(d / what + "/points.txt"));
    CHECK(!fs::exists(d / what + "/parallel.txt"));
    CHECK(!fs::exists(d / what + "/sweep.json"));
    CHECK(!fs::exists(d / what));  // refused before the points were checked or the directory made
  }
  // A million points whose list passes the cap: refused at once (a few
  // seconds), not after a million configurations were checked (minutes).
  {
    std::string split;
    for (int k = 0; k < 64; ++k) split += (k ? ":" : "") + std::to_string(4 * (k % 32 + 1)) + "k/0";
    const auto r = run_nvmesim("sweep --grid iodepth=1:1000:1 --grid seed=1:1000:1 --emit parallel --out " +
                               d / "million" + " --bssplit=" + split);
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("nvmesim sweep: error: --emit: the list of 1000000 points would pass 256 MiB") == 0);
    CHECK(!fs::exists(d / "million"));
  }
  // Under the cap, 200 points x ~240 KB (about 48 MB) are written under a
  // 120 MB address-space limit: streamed, not built in memory.
  const std::string under = sweep_file("under.txt", 10000, "iodepth = 1:200:1");
  for (const std::string what : {"slurm", "parallel"}) {
    // AddressSanitizer reserves terabytes of shadow address space: no ulimit -v there.
    const std::string limit = NVMESIM_SANITIZED ? "" : "ulimit -v 122880; ";
    const auto ok = run_nvmesim("--version >/dev/null; " + limit + NVMESIM_BINARY " sweep --sweep-file " +
                                under + " --emit " + what + " --out " + d / ("ok-" + what));
    INFO(what << "\n" << ok.err);
    CHECK(ok.exit_code == 0);
    const std::string list = d / ("ok-" + what) + (what == std::string("slurm") ? "/points.txt" : "/parallel.txt");
    CHECK(fs::file_size(list) > 40u * 1000 * 1000);
    std::ifstream in(list);
    size_t n = 0;
    std::string line;
    while (std::getline(in, line)) n += line.find("; rc=$?; echo $rc >") != std::string::npos;
    CHECK(n == 200);
    fs::remove_all(d / ("ok-" + what));
  }
}
