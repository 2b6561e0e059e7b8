// Parameter registry, typed Config, unit parsing and INI files.
#include <catch2/catch.hpp>

#include "temp_file.h"

#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <unistd.h>

#include "nvmesim/platform/config/params.h"

using nvmesim::platform::Config;
using nvmesim::platform::ConfigError;
using nvmesim::platform::ParamKind;
using nvmesim::platform::ParamRegistry;
using nvmesim::platform::ParamSpec;

namespace {

// The ConfigError message of cfg.set(name, text), or "" when it succeeds.
std::string set_error(Config& cfg, const std::string& name, const std::string& text) {
  try {
    cfg.set(name, text);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

std::string validate_error(const Config& cfg) {
  try {
    cfg.validate_all();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

// A temporary file that removes itself.
using TempFile = nvmesim::test::TempFile;

std::string ini_error(Config& cfg, const std::string& path) {
  try {
    cfg.load_ini(path);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("time units convert to ns, cyc uses hv.cpu_ghz", "[params]") {
  struct Row { const char* text; double ghz; double ns; };
  const Row rows[] = {
      {"1500ns", 2.3, 1500},  {"1.5us", 2.3, 1500},     {"0.5ms", 2.3, 5e5},
      {"0.0005s", 2.3, 5e5},   {"5100cyc", 2.3, 5100 / 2.3}, {"2300cyc", 2.3, 1000},
      {"5100cyc", 1.0, 5100}, {"1000cyc", 1.0, 1000},   {"0ns", 1.0, 0},
      {" 7 us ", 2.3, 7000},  {"1e3ns", 2.3, 1000},
  };
  for (const Row& r : rows) {
    Config cfg;
    cfg.set("hv.cpu_ghz", std::to_string(r.ghz));
    cfg.set("hv.exit_mmio", r.text);
    INFO(r.text << " at " << r.ghz << " GHz");
    CHECK(cfg.time_ns("hv.exit_mmio") == Approx(r.ns));
  }
}

TEST_CASE("cyc is resolved on read, after hv.cpu_ghz changes", "[params]") {
  Config cfg;
  CHECK(cfg.time_ns("hv.exit_mmio") == Approx(5100 / 2.3));  // default 5100cyc at 2.3 GHz
  cfg.set("hv.exit_mmio", "2000cyc");
  cfg.set("hv.cpu_ghz", "1");
  CHECK(cfg.time_ns("hv.exit_mmio") == Approx(2000));
  cfg.set("hv.cpu_ghz", "4");
  CHECK(cfg.time_ns("hv.exit_mmio") == Approx(500));
  CHECK(cfg.time_ns("hv.exit_ioeventfd") == Approx(562.5));  // default 2250cyc
  CHECK(cfg.text("hv.exit_mmio") == "2000cyc");       // kept as typed
}

TEST_CASE("sizes: binary suffixes, bare bytes", "[params]") {
  struct Row { const char* text; uint64_t bytes; const char* canonical; };
  const Row rows[] = {
      {"4k", 4096, "4k"},          {"4K", 4096, "4k"},         {"4KiB", 4096, "4k"},
      {"4kb", 4096, "4k"},         {"1m", 1048576, "1m"},      {"1M", 1048576, "1m"},
      {"1MiB", 1048576, "1m"},     {"1g", 1073741824, "1g"},   {"1GiB", 1073741824, "1g"},
      {"512", 512, "512"},         {"4096", 4096, "4k"},       {"1536", 1536, "1536"},
      {"0.5m", 524288, "512k"},    {"2t", 2ull << 40, "2t"},
  };
  for (const Row& r : rows) {
    Config cfg;
    INFO(r.text);
    if (r.bytes <= (1ull << 20)) {  // bs: 512..1m; nvme.capacity: 1m..16t
      cfg.set("bs", r.text);
      CHECK(cfg.size_bytes("bs") == r.bytes);
      CHECK(cfg.text("bs") == r.canonical);
    } else {
      cfg.set("nvme.capacity", r.text);
      CHECK(cfg.size_bytes("nvme.capacity") == r.bytes);
      CHECK(cfg.text("nvme.capacity") == r.canonical);
    }
  }
}

TEST_CASE("each kind's errors have exact one-line messages", "[params]") {
  struct Row { const char* name; const char* text; const char* message; };
  const Row rows[] = {
      {"hv.exit_mmio", "5100", "--hv.exit_mmio: '5100' needs a unit (ns, us, ms, s or cyc)"},
      {"hv.exit_mmio", "5100xs",
       "--hv.exit_mmio: '5100xs' has an unknown unit 'xs' (ns, us, ms, s or cyc)"},
      {"hv.exit_mmio", "fast",
       "--hv.exit_mmio: 'fast' is not a time (a number with a unit: ns, us, ms, s or cyc)"},
      {"hv.exit_mmio", "2ms", "--hv.exit_mmio: 2ms is out of range (0ns..1ms)"},
      {"mem.latency", "-1ns", "--mem.latency: -1ns is out of range (0ns..1us)"},
      {"bs", "4q",
       "--bs: '4q' has an unknown size suffix 'q' (k, m, g, t; also KiB, MiB, GiB, TiB)"},
      {"bs", "big",
       "--bs: 'big' is not a size (a byte count, optionally with k, m, g or t (binary; also "
       "KiB, MiB, GiB, TiB))"},
      {"bs", "-4k",
       "--bs: '-4k' is not a size (a byte count, optionally with k, m, g or t (binary; also "
       "KiB, MiB, GiB, TiB))"},
      {"bs", "2m", "--bs: 2m is out of range (512..1m)"},
      {"bs", "256", "--bs: 256 is out of range (512..1m)"},
      {"bs", "100.5", "--bs: '100.5' is not a whole number of bytes"},
      {"iodepth", "0", "--iodepth: 0 is out of range (1..4095)"},
      {"iodepth", "4096", "--iodepth: 4096 is out of range (1..4095)"},
      {"iodepth", "3.5", "--iodepth: '3.5' is not an integer"},
      {"iodepth", "", "--iodepth: '' is not an integer"},
      {"seed", "99999999999999999999", "--seed: 99999999999999999999 is out of range (0..9223372036854775807)"},
      {"hv.cpu_ghz", "0", "--hv.cpu_ghz: 0 is out of range (0.1..10)"},
      {"hv.cpu_ghz", "fast", "--hv.cpu_ghz: 'fast' is not a number"},
      {"guest.admin_shadow", "maybe",
       "--guest.admin_shadow: 'maybe' is not a boolean (on/off, true/false, yes/no, 1/0)"},
      {"nvme.dbbuf", "maybe", "--nvme.dbbuf: 'maybe' is not one of off, spec, vendor"},
      {"nvme.dbbuf", "Spec", "--nvme.dbbuf: 'Spec' is not one of off, spec, vendor"},
      {"pcie.lanes", "3", "--pcie.lanes: '3' is not one of 1, 2, 4, 8, 16"},
      {"nvme.foo", "1", "unknown parameter 'nvme.foo' (see --list-params)"},
  };
  for (const Row& r : rows) {
    Config cfg;
    INFO(r.name << " = '" << r.text << "'");
    CHECK(set_error(cfg, r.name, r.text) == r.message);
  }
}

TEST_CASE("a failed set leaves the value unchanged", "[params]") {
  Config cfg;
  cfg.set("iodepth", "8");
  CHECK_THROWS_AS(cfg.set("iodepth", "0"), ConfigError);
  CHECK(cfg.integer("iodepth") == 8);
}

TEST_CASE("ranges are inclusive", "[params]") {
  Config cfg;
  CHECK(set_error(cfg, "iodepth", "1") == "");
  CHECK(set_error(cfg, "iodepth", "4095") == "");
  CHECK(set_error(cfg, "bs", "512") == "");
  CHECK(set_error(cfg, "bs", "1m") == "");
  CHECK(set_error(cfg, "mem.latency", "0ns") == "");
  CHECK(set_error(cfg, "mem.latency", "1us") == "");
  CHECK(set_error(cfg, "mem.latency", "1001ns") == "--mem.latency: 1001ns is out of range (0ns..1us)");
  CHECK(set_error(cfg, "hv.cpu_ghz", "0.1") == "");
  CHECK(set_error(cfg, "hv.cpu_ghz", "10") == "");
  CHECK(set_error(cfg, "hv.cpu_ghz", "10.01") == "--hv.cpu_ghz: 10.01 is out of range (0.1..10)");
  CHECK(set_error(cfg, "seed", "9223372036854775807") == "");
  CHECK(cfg.integer("seed") == INT64_MAX);
  CHECK(set_error(cfg, "runtime", "3600s") == "");
  CHECK(set_error(cfg, "runtime", "3601s") == "--runtime: 3601s is out of range (0ns..3600s)");
}

TEST_CASE("booleans, choices, integers, reals, text", "[params]") {
  Config cfg;
  for (const char* on : {"on", "true", "yes", "1", "ON", "True"}) {
    cfg.set("hv.posted_interrupts", on);
    CHECK(cfg.flag("hv.posted_interrupts"));
    CHECK(cfg.text("hv.posted_interrupts") == "on");
  }
  for (const char* off : {"off", "false", "no", "0"}) {
    cfg.set("hv.posted_interrupts", off);
    CHECK_FALSE(cfg.flag("hv.posted_interrupts"));
  }
  cfg.set("nvme.dbbuf", "vendor");
  CHECK(cfg.choice("nvme.dbbuf") == "vendor");
  CHECK(cfg.integer("pcie.lanes") == 4);  // an integer Choice reads as an integer
  cfg.set("pcie.lanes", "16");
  CHECK(cfg.integer("pcie.lanes") == 16);
  CHECK(cfg.choice("pcie.lanes") == "16");
  CHECK(cfg.integer("nvme.lba_bytes") == 512);
  CHECK(cfg.real("hv.cpu_ghz") == Approx(2.3));
  CHECK(cfg.integer("number_ios") == 200000);
}

TEST_CASE("wrong kind or unknown name in an accessor is a logic_error", "[params]") {
  Config cfg;
  CHECK_THROWS_AS(cfg.time_ns("bs"), std::logic_error);
  CHECK_THROWS_AS(cfg.size_bytes("iodepth"), std::logic_error);
  CHECK_THROWS_AS(cfg.integer("nvme.dbbuf"), std::logic_error);  // not an integer Choice
  CHECK_THROWS_AS(cfg.real("iodepth"), std::logic_error);
  CHECK_THROWS_AS(cfg.flag("nvme.dbbuf"), std::logic_error);
  CHECK_THROWS_AS(cfg.choice("hv.posted_interrupts"), std::logic_error);
  CHECK_THROWS_AS(cfg.time_ns("nvme.foo"), std::logic_error);
  CHECK_THROWS_AS(cfg.is_set("nvme.foo"), std::logic_error);
  // ConfigError is a runtime_error, not a logic_error.
  CHECK_THROWS_AS(cfg.set("nvme.foo", "1"), ConfigError);
}

TEST_CASE("registry: builtin list, add checks", "[params]") {
  const ParamRegistry& reg = ParamRegistry::builtin();
  for (const char* name : {"rw", "bs", "iodepth", "numjobs", "runtime", "number_ios", "size",
                           "rwmixread", "seed", "sim.quantum", "mem.size", "guest.submit_cost",
                           "nvme.mqes", "nvme.dbbuf", "pcie.lanes", "hv.exit_mmio", "hv.cpu_ghz",
                           "hv.device_thread"})
    CHECK(reg.find(name) != nullptr);
  CHECK(reg.find("nvme.foo") == nullptr);
  const ParamSpec* mmio = reg.find("hv.exit_mmio");
  REQUIRE(mmio);
  CHECK(mmio->kind == ParamKind::Time);
  CHECK(mmio->default_value == "5100cyc");
  for (const ParamSpec& s : reg.all()) {
    INFO(s.name);
    CHECK_FALSE(s.help.empty());
    CHECK(s.help.find('\n') == std::string::npos);
  }

  ParamRegistry r;
  r.add({"a.x", ParamKind::Integer, "5", "", 0, 10, {}, "x"});
  CHECK_THROWS_AS(r.add({"a.x", ParamKind::Integer, "5", "", 0, 10, {}, "dup"}), std::logic_error);
  CHECK_THROWS_AS(r.add({"a.y", ParamKind::Integer, "50", "", 0, 10, {}, "bad default"}),
                  std::logic_error);
  CHECK_THROWS_AS(r.add({"a.z", ParamKind::Choice, "p", "", 0, 0, {}, "no choices"}),
                  std::logic_error);
  CHECK_THROWS_AS(r.add({"a.t", ParamKind::Time, "5", "", 0, 10, {}, "no unit"}), std::logic_error);
  Config own(r);
  CHECK(own.integer("a.x") == 5);
  own.set("a.x", "10");
  CHECK(own.integer("a.x") == 10);
  CHECK(own.effective().size() == 1);
}

TEST_CASE("effective() lists every parameter, sorted, canonical text", "[params]") {
  Config cfg;
  cfg.set("bs", "8KiB");
  cfg.set("hv.exit_mmio", " 3000 cyc");
  cfg.set("guest.admin_shadow", "yes");
  cfg.set("hv.cpu_ghz", "3.0");
  auto eff = cfg.effective();
  const auto& all = ParamRegistry::builtin().all();
  REQUIRE(eff.size() == all.size());
  std::set<std::string> names;
  for (const auto& s : all) names.insert(s.name);
  for (size_t i = 0; i < eff.size(); ++i) {
    CHECK(names.count(eff[i].first) == 1);
    if (i) CHECK(eff[i - 1].first < eff[i].first);
  }
  auto value = [&](const std::string& n) {
    for (const auto& [k, v] : eff)
      if (k == n) return v;
    return std::string("?");
  };
  CHECK(value("bs") == "8k");
  CHECK(value("hv.exit_mmio") == "3000cyc");
  CHECK(value("guest.admin_shadow") == "on");
  CHECK(value("hv.cpu_ghz") == "3");
  CHECK(value("guest.submit_cost") == "1500ns");
  CHECK(value("rw") == "randread");

  auto num = cfg.effective_numeric();
  auto number = [&](const std::string& n) {
    for (const auto& [k, v] : num)
      if (k == n) return v;
    return -1.0;
  };
  CHECK(number("hv.exit_mmio") == Approx(1000));
  CHECK(number("bs") == 8192);
  CHECK(number("guest.admin_shadow") == 1);
  CHECK(number("rw") == -1.0);  // choices are not numeric

  CHECK(cfg.is_set("bs"));
  CHECK_FALSE(cfg.is_set("iodepth"));
}

TEST_CASE("validate_all: cyc range after conversion and cross-field checks", "[params]") {
  Config cfg;
  CHECK(validate_error(cfg) == "");  // the defaults are valid

  cfg.set("hv.exit_mmio", "2300000cyc");  // 1ms at 2.3 GHz: the inclusive limit
  CHECK(validate_error(cfg) == "");
  cfg.set("hv.cpu_ghz", "1");  // now 2.3ms
  CHECK(validate_error(cfg) ==
        "--hv.exit_mmio: 2300000cyc (2.3ms at hv.cpu_ghz 1) is out of range (0ns..1ms)");
  cfg.set("hv.cpu_ghz", "2.3");
  CHECK(validate_error(cfg) == "");
  CHECK(set_error(cfg, "hv.exit_mmio", "-5cyc") == "--hv.exit_mmio: -5cyc is out of range (0ns..1ms)");

  Config both;
  both.set("number_ios", "0");
  CHECK(validate_error(both) == "number_ios and runtime are both 0");
  both.set("runtime", "1s");
  CHECK(validate_error(both) == "");

  Config sizes;
  sizes.set("size", "2g");
  CHECK(validate_error(sizes) == "");  // nvme.capacity not given: fit_namespace_to_size grows it
  nvmesim::platform::fit_namespace_to_size({&sizes});
  CHECK(sizes.text("nvme.capacity") == "2g");
  sizes.set("nvme.capacity", "1g");  // given: checked
  CHECK(validate_error(sizes) == "--size: 2g is larger than nvme.capacity (1g)");
  sizes.set("nvme.capacity", "2g");
  CHECK(validate_error(sizes) == "");
  sizes.set("nvme.lba_bytes", "4096");
  sizes.set("bs", "512");
  CHECK(validate_error(sizes) == "--bs: 512 is not a multiple of nvme.lba_bytes (4096)");

  Config queues;
  queues.set("guest.io_queue_entries", "4097");
  CHECK(validate_error(queues) ==
        "--guest.io_queue_entries: 4097 is more than the controller allows (nvme.mqes 4095 is "
        "0's based: at most 4096)");
  queues.set("guest.io_queue_entries", "4096");
  CHECK(validate_error(queues) == "");
}

TEST_CASE("INI: sections map to dotted names, top-level keys are full names", "[params]") {
  TempFile f(
      "# an experiment\n"
      "bs = 8k\n"
      "iodepth=16   # inline comment\n"
      "hv.exit_ioeventfd = 1000cyc\n"
      "\n"
      "[fio]\n"
      "numjobs = 2\n"
      "; a comment\n"
      "[hv]\n"
      "exit_mmio = 2250cyc\n"
      "cpu_ghz = 1\n"
      "[ nvme ]\n"
      "dbbuf = vendor\n");
  Config cfg;
  cfg.load_ini(f.path);
  CHECK(cfg.size_bytes("bs") == 8192);
  CHECK(cfg.integer("iodepth") == 16);
  CHECK(cfg.integer("numjobs") == 2);
  CHECK(cfg.time_ns("hv.exit_mmio") == Approx(2250));
  CHECK(cfg.time_ns("hv.exit_ioeventfd") == Approx(1000));
  CHECK(cfg.choice("nvme.dbbuf") == "vendor");
  CHECK(cfg.is_set("hv.cpu_ghz"));
  CHECK_FALSE(cfg.is_set("nvme.mqes"));
}

TEST_CASE("INI: errors name the file, the line and the key", "[params]") {
  struct Row { const char* content; const char* suffix; };
  const Row rows[] = {
      {"bs = 4k\n[hv]\nexit_mmo = 5us\n", "line 3: unknown key 'hv.exit_mmo' (see --list-params)"},
      {"[hv]\nexit_mmio = 5100\n", "line 2: hv.exit_mmio: '5100' needs a unit (ns, us, ms, s or cyc)"},
      {"iodepth = 0\n", "line 1: iodepth: 0 is out of range (1..4095)"},
      {"[nvme]\ndbbuf = maybe\n", "line 2: nvme.dbbuf: 'maybe' is not one of off, spec, vendor"},
      {"nvme.foo = 1\n", "line 1: unknown key 'nvme.foo' (see --list-params)"},
      {"[hv\n", "line 1: bad section header '[hv'"},
      {"bs 4k\n", "line 1: expected 'name = value', got 'bs 4k'"},
      {"bs = 4k\n[fio]\nbs = 8k\n", "line 3: 'bs' is given twice (first on line 1)"},
      {"[hv]\n= 5us\n", "line 2: missing name before '='"},
  };
  for (const Row& r : rows) {
    TempFile f(r.content);
    Config cfg;
    INFO(r.content);
    CHECK(ini_error(cfg, f.path) == "config file " + f.path + " " + r.suffix);
  }
  Config cfg;
  CHECK(ini_error(cfg, "/nonexistent/x.ini") ==
        "config file /nonexistent/x.ini: cannot open (No such file or directory)");

  std::istringstream in("[hv]\n\nexit_mmo = 5\n");
  try {
    cfg.load_ini(in, "x.ini");
    FAIL("no error");
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()) == "config file x.ini line 3: unknown key 'hv.exit_mmo' (see --list-params)");
  }
}

TEST_CASE("INI then set: later values override", "[params]") {
  TempFile f("iodepth = 4\n[hv]\ncpu_ghz = 1\nexit_mmio = 1000cyc\n");
  Config cfg;
  cfg.load_ini(f.path);
  cfg.set("iodepth", "64");   // as the command line does after the files
  cfg.set("hv.cpu_ghz", "2");  // cyc follows
  CHECK(cfg.integer("iodepth") == 64);
  CHECK(cfg.time_ns("hv.exit_mmio") == Approx(500));
}
