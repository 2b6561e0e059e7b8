// Command-line parsing into Config + RunOptions (parse_command_line). The
// nvmesim binary itself is not run here.
#include <catch2/catch.hpp>

#include "temp_file.h"

#include <cstdio>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "nvmesim/platform/cli/cli.h"
#include "nvmesim/platform/cli/commands.h"

using nvmesim::platform::CliResult;
using nvmesim::platform::parse_command_line;

namespace {

CliResult parse(std::vector<std::string> args) {
  args.insert(args.begin(), "nvmesim");
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  argv.push_back(nullptr);
  return parse_command_line(static_cast<int>(args.size()), argv.data());
}

std::string join(const std::vector<std::string>& args) {
  std::string s;
  for (const auto& a : args) s += (s.empty() ? "" : " ") + a;
  return s;
}

using TempIni = nvmesim::test::TempFile;

}  // namespace

TEST_CASE("cli: no options runs the default experiment", "[cli]") {
  CliResult r = parse({});
  REQUIRE(r.action == CliResult::Run);
  CHECK(r.exit_code == 0);
  CHECK(r.options.default_experiment);
  CHECK(r.options.output_format == "normal");
  CHECK(r.options.output_file.empty());
  CHECK_FALSE(r.options.host_stats);
  CHECK(r.config.integer("iodepth") == 32);

  // Generic options do not make it a custom experiment.
  r = parse({"--output-format", "json", "--host-stats", "--output=/tmp/x.json"});
  REQUIRE(r.action == CliResult::Run);
  CHECK(r.options.default_experiment);
  CHECK(r.options.output_format == "json");
  CHECK(r.options.host_stats);
  CHECK(r.options.output_file == "/tmp/x.json");
}

TEST_CASE("cli: good argument lists", "[cli]") {
  struct Row { std::vector<std::string> args; const char* name; const char* text; };
  const std::vector<Row> rows = {
      {{"--hv.exit_mmio=2250cyc"}, "hv.exit_mmio", "2250cyc"},
      {{"--hv.exit_mmio", "2250cyc"}, "hv.exit_mmio", "2250cyc"},
      {{"--bs", "64KiB"}, "bs", "64k"},
      {{"--iodepth=1"}, "iodepth", "1"},
      {{"--rw", "randwrite"}, "rw", "randwrite"},
      {{"--nvme.dbbuf", "off"}, "nvme.dbbuf", "off"},
      {{"--pcie.lanes", "16"}, "pcie.lanes", "16"},
      {{"--guest.admin_shadow=yes"}, "guest.admin_shadow", "on"},
      {{"--hv.cpu_ghz", "3.5"}, "hv.cpu_ghz", "3.5"},
      {{"--iodepth", "4", "--iodepth", "8"}, "iodepth", "8"},  // the last one wins
      {{"--runtime", "10ms", "--number_ios", "0"}, "number_ios", "0"},
  };
  for (const Row& row : rows) {
    INFO(join(row.args));
    CliResult r = parse(row.args);
    REQUIRE(r.action == CliResult::Run);
    CHECK(r.message.empty());
    CHECK(r.exit_code == 0);
    // The comparison runs unless nvme.dbbuf is set.
    CHECK(r.options.default_experiment == (std::string(row.name) != "nvme.dbbuf"));
    CHECK(r.config.text(row.name) == row.text);
    CHECK(r.config.is_set(row.name));
  }
}

TEST_CASE("cli: bad argument lists give one-line errors and exit code 2", "[cli]") {
  struct Row { std::vector<std::string> args; const char* message; };
  const std::vector<Row> rows = {
      {{"--nvme.foo=3"}, "unknown option '--nvme.foo' (see --help and --list-params)"},
      {{"--nvme.foo", "3"}, "unknown option '--nvme.foo' (see --help and --list-params)"},
      {{"--hv.exit_mm", "3ns"}, "unknown option '--hv.exit_mm' (see --help and --list-params)"},
      {{"-x"}, "unknown option '-x' (see --help and --list-params)"},
      {{"--bs"}, "--bs: missing value"},
      {{"--bs", "--iodepth", "3"}, "--bs: missing value (got '--iodepth')"},
      {{"--bs="}, "--bs: empty value after '='"},
      {{"--config"}, "--config: missing value"},
      {{"--host-stats=1"}, "--host-stats: takes no value"},
      {{"run"}, "unexpected argument 'run' (options are --name=value; see --help)"},
      {{"--hv.exit_mmio=5100"}, "--hv.exit_mmio: '5100' needs a unit (ns, us, ms, s or cyc)"},
      {{"--hv.exit_mmio", "5100 cycles"},
       "--hv.exit_mmio: '5100 cycles' has an unknown unit 'cycles' (ns, us, ms, s or cyc)"},
      {{"--iodepth", "0"}, "--iodepth: 0 is out of range (1..4095)"},
      {{"--iodepth", "lots"}, "--iodepth: 'lots' is not an integer"},
      {{"--bs", "4q"},
       "--bs: '4q' has an unknown size suffix 'q' (k, m, g, t; also KiB, MiB, GiB, TiB)"},
      {{"--nvme.dbbuf", "maybe"}, "--nvme.dbbuf: 'maybe' is not one of off, spec, vendor"},
      {{"--guest.admin_shadow", "maybe"},
       "--guest.admin_shadow: 'maybe' is not a boolean (on/off, true/false, yes/no, 1/0)"},
      {{"--hv.cpu_ghz", "0"}, "--hv.cpu_ghz: 0 is out of range (0.1..10)"},
      {{"--output-format", "xml"}, "--output-format: 'xml' is not one of normal, json, json+"},
      {{"--output", ""}, "--output: empty file name"},
      {{"--config", "/nonexistent/run.ini"},
       "config file /nonexistent/run.ini: cannot open (No such file or directory)"},
      {{"--number_ios", "0"}, "number_ios and runtime are both 0"},
      {{"--mem.size", "1m"}, "--mem.size: 1m is out of range (16m..3g)"},
      {{"--nvme.capacity", "1g", "--size", "2g"}, "--size: 2g is larger than nvme.capacity (1g)"},
  };
  for (const Row& row : rows) {
    INFO(join(row.args));
    CliResult r = parse(row.args);
    CHECK(r.action == CliResult::Error);
    CHECK(r.exit_code == 2);
    CHECK(r.message == row.message);
    CHECK(r.message.find('\n') == std::string::npos);
  }
}

TEST_CASE("cli: cyc out of range only after conversion", "[cli]") {
  CliResult r = parse({"--hv.cpu_ghz", "0.1", "--hv.exit_mmio", "200000cyc"});  // 2ms
  CHECK(r.action == CliResult::Error);
  CHECK(r.message ==
        "--hv.exit_mmio: 200000cyc (2ms at hv.cpu_ghz 0.1) is out of range (0ns..1ms)");
  r = parse({"--hv.exit_mmio", "200000cyc"});  // 87us at the default 2.3 GHz
  CHECK(r.action == CliResult::Run);
}

TEST_CASE("cli: --config, and the command line overrides it", "[cli]") {
  TempIni ini(
      "iodepth = 4\n"
      "[hv]\n"
      "cpu_ghz = 1\n"
      "exit_mmio = 1000cyc\n"
      "[nvme]\n"
      "dbbuf = vendor\n");
  CliResult r = parse({"--config", ini.path});
  REQUIRE(r.action == CliResult::Run);
  CHECK_FALSE(r.options.default_experiment);
  CHECK(r.config.integer("iodepth") == 4);
  CHECK(r.config.choice("nvme.dbbuf") == "vendor");
  CHECK(r.config.time_ns("hv.exit_mmio") == Approx(1000));

  // Options override the file whatever their order on the line.
  r = parse({"--iodepth=16", "--hv.cpu_ghz", "2", "--config", ini.path});
  REQUIRE(r.action == CliResult::Run);
  CHECK(r.config.integer("iodepth") == 16);
  CHECK(r.config.time_ns("hv.exit_mmio") == Approx(500));
  CHECK(r.config.choice("nvme.dbbuf") == "vendor");

  // Several files: later ones override earlier ones.
  TempIni second("[nvme]\ndbbuf = off\n");
  r = parse({"--config", ini.path, "--config", second.path});
  REQUIRE(r.action == CliResult::Run);
  CHECK(r.config.choice("nvme.dbbuf") == "off");
  CHECK(r.config.integer("iodepth") == 4);

  TempIni bad("bs = 4k\n[hv]\nexit_mmo = 5us\n");
  r = parse({"--config", bad.path});
  CHECK(r.action == CliResult::Error);
  CHECK(r.exit_code == 2);
  CHECK(r.message == "config file " + bad.path +
                         " line 3: unknown key 'hv.exit_mmo' (see --list-params)");

  TempIni badvalue("[nvme]\nmqes = 0\n");
  r = parse({"--config", badvalue.path});
  CHECK(r.action == CliResult::Error);
  CHECK(r.message == "config file " + badvalue.path +
                         " line 2: nvme.mqes: 0 is out of range (1..65535)");
}

TEST_CASE("cli: --help, --list-params, --version, eventidx", "[cli]") {
  for (const char* h : {"--help", "-h"}) {
    CliResult r = parse({h});
    CHECK(r.action == CliResult::Help);
    CHECK(r.exit_code == 0);
    CHECK(r.message.find("nvmesim [options]") != std::string::npos);
    CHECK(r.message.find("nvmesim eventidx ...") != std::string::npos);
    CHECK(r.message.find("With no options, runs the default experiment") != std::string::npos);
    for (const char* opt : {"--config FILE", "--list-params", "--output-format", "--output FILE",
                            "--host-stats", "--version", "--iodepth", "--bs", "--rw", "--numjobs",
                            "--runtime", "--number_ios", "--size", "--rwmixread", "--seed"})
      CHECK(r.message.find(opt) != std::string::npos);
    CHECK(r.message.find("every --component.name listed by --list-params") != std::string::npos);
  }
  // --help wins over a bad value elsewhere on the line.
  CHECK(parse({"--iodepth", "0", "--help"}).action == CliResult::Help);

  CliResult r = parse({"--list-params"});
  CHECK(r.action == CliResult::ListParams);
  CHECK(r.exit_code == 0);
  for (const auto& spec : nvmesim::platform::ParamRegistry::builtin().all())
    CHECK(r.message.find("\n" + spec.name + " ") != std::string::npos);
  CHECK(r.message.find("off|spec|vendor") != std::string::npos);
  CHECK(r.message.find("1..4095") != std::string::npos);
  CHECK(r.message.find("5100cyc") != std::string::npos);
  // Aligned columns: every row's DEFAULT column starts at the same place.
  size_t col = r.message.find("DEFAULT");
  size_t bs = r.message.find("\nbs ");
  REQUIRE(bs != std::string::npos);
  CHECK(r.message.compare(bs + 1 + col, 2, "4k") == 0);

  r = parse({"--version"});
  CHECK(r.action == CliResult::Version);
  CHECK(r.message.rfind("nvmesim ", 0) == 0);

}

TEST_CASE("cli: one subcommand table dispatches and is what --help lists", "[cli]") {
  // Every subcommand the dispatcher knows has its line in the help, and the
  // help names no subcommand the dispatcher lacks.
  using namespace nvmesim::platform;
  const std::string help = help_text();
  std::vector<std::string> listed;
  for (size_t p = 0; (p = help.find("\n  nvmesim ", p)) != std::string::npos; ++p) {
    const size_t start = p + 11, end = help.find(' ', start);
    const std::string word = help.substr(start, end - start);
    if (word != "[options]\n" && word.rfind("[", 0) != 0) listed.push_back(word);
  }
  std::vector<std::string> known;
  for (const cli::Command& c : cli::commands()) known.push_back(c.name);
  CHECK(listed == known);
  CHECK(known == std::vector<std::string>{"eventidx", "sweep", "scenario", "validate", "verify", "timeline-html"});
  CHECK(cli::find_command("validate") != nullptr);
  CHECK(cli::find_command("run") == nullptr);
  // Each line points at the command's own help.
  for (const std::string& name : known)
    CHECK(help.find("(see 'nvmesim " + name + " --help')") != std::string::npos);
}
