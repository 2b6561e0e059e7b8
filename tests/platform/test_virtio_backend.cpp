// virtio-blk's own storage backend: virtio.backend, virtio.backend_latency,
// virtio.backend_concurrency, virtio.backend_bandwidth and virtio.capacity
// (StorageBackend::Params' visit lines under the device's prefix), and the
// old spellings nvme.backend* / nvme.capacity as warned aliases
// (platform/config/device_backend.h).
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <unistd.h>
#include <vector>

#include "nvmesim/platform/config/device_backend.h"
#include "nvmesim/platform/config/param_requires.h"
#include "nvmesim/platform/config/params.h"
#include "nvmesim/platform/config/system_params.h"
#include "tests/platform/run_binary.h"

using namespace nvmesim;
using namespace nvmesim::platform;
using nvmesim::test::check_refused;
using nvmesim::test::run_nvmesim;

namespace {

const char* const kFields[] = {"backend", "backend_latency", "backend_concurrency", "backend_bandwidth", "capacity"};

size_t index_of(const ParamRegistry& reg, const std::string& name) {
  for (size_t i = 0; i < reg.all().size(); ++i)
    if (reg.all()[i].name == name) return i;
  FAIL("no parameter " << name);
  return 0;
}

}  // namespace

TEST_CASE("virtio backend: virtio-blk's five backend parameters, with nvme.*'s kinds, defaults, units and ranges",
          "[params][virtio_backend]") {
  const ParamRegistry& reg = ParamRegistry::builtin();
  // The values the storage backend has always had (the nvme.* lines before
  // they moved to StorageBackend::Params).
  const ParamSpec* kind = reg.find("virtio.backend");
  REQUIRE(kind);
  CHECK(kind->kind == ParamKind::Choice);
  CHECK(kind->default_value == "null");
  CHECK(kind->choices == std::vector<std::string>{"null", "latency", "ram"});
  const ParamSpec* latency = reg.find("virtio.backend_latency");
  REQUIRE(latency);
  CHECK(latency->kind == ParamKind::Time);
  CHECK(latency->default_value == "10us");
  CHECK(latency->min == 0);
  CHECK(latency->max == 1e9);  // 1 s in ns
  const ParamSpec* concurrency = reg.find("virtio.backend_concurrency");
  REQUIRE(concurrency);
  CHECK(concurrency->kind == ParamKind::Integer);
  CHECK(concurrency->unit == "I/Os");
  CHECK(concurrency->default_value == "0");
  CHECK(concurrency->max == 65536);
  const ParamSpec* bandwidth = reg.find("virtio.backend_bandwidth");
  REQUIRE(bandwidth);
  CHECK(bandwidth->kind == ParamKind::Real);
  CHECK(bandwidth->unit == "MB/s");
  CHECK(bandwidth->max == 1e6);
  CHECK(bandwidth->min_nonzero == 0.001);
  CHECK(bandwidth->help.find("nvme.") == std::string::npos);  // names no device
  const ParamSpec* capacity = reg.find("virtio.capacity");
  REQUIRE(capacity);
  CHECK(capacity->kind == ParamKind::Size);
  CHECK(capacity->default_value == "1g");
  CHECK(capacity->min == 1024.0 * 1024);
  CHECK(capacity->max == 16.0 * 1024 * 1024 * 1024 * 1024);
  // Each the same as the NVMe controller's, help included (one visit line).
  for (const char* f : kFields) {
    INFO(f);
    const ParamSpec* n = reg.find(std::string("nvme.") + f);
    const ParamSpec* v = reg.find(std::string("virtio.") + f);
    REQUIRE(n);
    REQUIRE(v);
    CHECK(v->kind == n->kind);
    CHECK(v->default_value == n->default_value);
    CHECK(v->unit == n->unit);
    CHECK(v->min == n->min);
    CHECK(v->max == n->max);
    CHECK(v->choices == n->choices);
    CHECK(v->min_nonzero == n->min_nonzero);
    CHECK(v->help == n->help);
  }
  // Order: the nvme.* block where it was (after nvme.cqe_post), the virtio.*
  // block after virtio-blk's costs, before virtio.busy_poll.
  const size_t n0 = index_of(reg, "nvme.backend"), v0 = index_of(reg, "virtio.backend");
  CHECK(n0 == index_of(reg, "nvme.cqe_post") + 1);
  CHECK(v0 == index_of(reg, "virtio.done_cost") + 1);
  for (size_t k = 0; k < 5; ++k) {
    CHECK(reg.all()[n0 + k].name == std::string("nvme.") + kFields[k]);
    CHECK(reg.all()[v0 + k].name == std::string("virtio.") + kFields[k]);
  }
  CHECK(reg.all()[v0 + 5].name == "virtio.busy_poll");
}

TEST_CASE("virtio backend: --list-params shows the virtio.* lines with their ranges and --help the old spellings", "[binary][virtio_backend]") {
  const auto p = run_nvmesim("--list-params");
  REQUIRE(p.exit_code == 0);
  auto line = [&](const std::string& name) {
    const size_t at = p.out.find("\n" + name + " ");
    REQUIRE(at != std::string::npos);
    return p.out.substr(at + 1, p.out.find('\n', at + 1) - at - 1);
  };
  CHECK(line("virtio.backend").find(" null|latency|ram ") != std::string::npos);
  CHECK(line("virtio.backend_latency").find(" 0ns..1s ") != std::string::npos);
  CHECK(line("virtio.backend_concurrency").find(" 0..65536 ") != std::string::npos);
  CHECK(line("virtio.backend_bandwidth").find(" 0..1000000 ") != std::string::npos);
  CHECK(line("virtio.capacity").find(" 1m..16t ") != std::string::npos);
  // --help says whose parameters they are and what the old spellings do.
  const auto help = run_nvmesim("--help");
  CHECK(help.out.find("With device=virtio-blk the old spellings nvme.backend*\nand nvme.capacity still set "
                      "virtio-blk's") != std::string::npos);
  CHECK(help.out.find("verify (not off) needs nvme.backend=ram (device=virtio-blk: virtio.backend) [refused]") !=
        std::string::npos);
}

TEST_CASE("virtio backend: virtio.backend* gives the old spelling's output byte for byte, the old one warns",
          "[binary][virtio_backend]") {
  const std::string run = "--device=virtio-blk --iodepth=1 --number_ios=2000 --single-run ";
  const auto now = run_nvmesim(run + "--virtio.backend=latency --virtio.backend_latency=20us");
  const auto old = run_nvmesim(run + "--nvme.backend=latency --nvme.backend_latency=20us");
  REQUIRE(now.exit_code == 0);
  REQUIRE(old.exit_code == 0);
  CHECK(now.out == old.out);
  CHECK(now.out.find("backend=latency, device=virtio-blk") != std::string::npos);
  CHECK(now.err.empty());
  CHECK(old.err ==
        "nvmesim: warning: --nvme.backend with device virtio-blk sets virtio.backend (the old spelling; use "
        "--virtio.backend)\n"
        "nvmesim: warning: --nvme.backend_latency with device virtio-blk sets virtio.backend_latency (the old "
        "spelling; use --virtio.backend_latency)\n");
}

// At iodepth 1 the main loop sleeps while the request is at the backend.
// With a null backend the request completes in the pass that started it;
// with latency it completes backend_latency later and wakes the thread,
// which starts after hv.dispatch_latency and pays hv.dispatch_cost before
// completing it (hv.wakeup=fixed: every I/O the same).
TEST_CASE("virtio backend: a QD1 I/O takes virtio.backend_latency plus the completion's wake-up",
          "[binary][virtio_backend]") {
  const std::string run = "--device=virtio-blk --iodepth=1 --number_ios=200 --single-run --output-format=json "
                          "--hv.wakeup=fixed --hv.dispatch_latency=3us --hv.dispatch_cost=1us ";
  auto lat = [&](const std::string& backend) {
    const auto p = run_nvmesim(run + backend);
    REQUIRE(p.exit_code == 0);
    const nlohmann::json j = nlohmann::json::parse(p.out)["lat_ns"];
    CHECK(j["min"] == j["max"]);
    return j["min"].get<double>();
  };
  const double null_lat = lat("");
  const double with_backend = lat("--virtio.backend=latency --virtio.backend_latency=20us");
  CHECK(with_backend == null_lat + 20000 + 3000 + 1000);
  // The NVMe controller's backend is not virtio-blk's: nvme.* set beside
  // virtio.* does nothing (warned).
  CHECK(lat("--virtio.backend=latency --virtio.backend_latency=20us --nvme.backend_latency=50us") == with_backend);
}

TEST_CASE("virtio backend: virtio.capacity limits size, and an unset one grows to it", "[binary][virtio_backend]") {
  check_refused("--device=virtio-blk --virtio.capacity=1m --size=2m",
                "nvmesim: error: --size: 2m is larger than virtio.capacity (1m)");
  // The old spelling is virtio-blk's capacity too.
  check_refused("--device=virtio-blk --nvme.capacity=1m --size=2m",
                "nvmesim: error: --size: 2m is larger than virtio.capacity (1m)");
  // The NVMe controller's limit is still nvme.capacity.
  check_refused("--nvme.capacity=1m --size=2m", "nvmesim: error: --size: 2m is larger than nvme.capacity (1m)");
  // fio's size just works: the device's own capacity grows, whole 4 KiB pages.
  const auto p = run_nvmesim("--device=virtio-blk --size=3000001k --number_ios=64 --single-run --output-format=json");
  REQUIRE(p.exit_code == 0);
  CHECK(p.err.empty());
  const nlohmann::json config = nlohmann::json::parse(p.out)["config"];
  CHECK(config["virtio.capacity"] == format_size((3000001ull * 1024 + 4095) / 4096 * 4096));
  CHECK(config["nvme.capacity"] == "1g");
}

TEST_CASE("virtio backend: bad values are refused in one line naming the virtio.* option", "[binary][virtio_backend]") {
  check_refused("--device=virtio-blk --virtio.backend=disk",
                "nvmesim: error: --virtio.backend: 'disk' is not one of null, latency, ram");
  check_refused("--device=virtio-blk --virtio.backend_bandwidth=-1",
                "nvmesim: error: --virtio.backend_bandwidth: -1 is out of range (0..1000000)");
  check_refused("--device=virtio-blk --virtio.capacity=512k",
                "nvmesim: error: --virtio.capacity: 512k is out of range (1m..16t)");
  check_refused("--device=virtio-blk --virtio.backend_latency=2s",
                "nvmesim: error: --virtio.backend_latency: 2s is out of range (0ns..1s)");
}

TEST_CASE("virtio backend: verify=pattern with virtio-blk needs virtio.backend=ram", "[binary][virtio_backend]") {
  const std::string why = " (it is null: only the ram backend keeps the data written)";
  check_refused("--device=virtio-blk --verify=pattern --rw=randwrite",
                "nvmesim: error: --verify: pattern needs virtio.backend ram" + why);
  // virtio.* wins over the old spelling.
  check_refused("--device=virtio-blk --nvme.backend=ram --virtio.backend=null --verify=pattern --rw=randwrite",
                "nvmesim: error: --verify: pattern needs virtio.backend ram" + why);
  check_refused("--verify=pattern --rw=randwrite", "nvmesim: error: --verify: pattern needs nvme.backend ram" + why);
  const auto p = run_nvmesim(
      "--device=virtio-blk --virtio.backend=ram --verify=pattern --rw=randwrite --size=256k --number_ios=200 "
      "--single-run");
  CHECK(p.exit_code == 0);
  CHECK(p.err.empty());
}

TEST_CASE("virtio backend: the old spellings apply to virtio-blk (warned), with both set virtio.* wins (warned)",
          "[params][virtio_backend]") {
  Config c;
  c.set("device", "virtio-blk");
  c.set("nvme.backend", "latency");
  c.set("nvme.backend_latency", "20us");
  c.set("virtio.backend_latency", "30us");
  c.set("nvme.capacity", "2g");
  c.validate_all();
  CHECK(backend_param(c, "backend") == "virtio.backend");
  CHECK(backend_value_param(c, "backend") == "nvme.backend");
  CHECK(backend_value_param(c, "backend_latency") == "virtio.backend_latency");
  CHECK(backend_value_param(c, "capacity") == "nvme.capacity");
  CHECK(backend_value_param(c, "backend_concurrency") == "virtio.backend_concurrency");
  const SystemParams p = load_system_params(c, {});
  CHECK(p.virtio.backend.kind == models::BackendKind::Latency);
  CHECK(p.virtio.backend.latency == sc_core::sc_time(30, sc_core::SC_US));
  CHECK(p.virtio.backend.capacity == 2ull << 30);
  CHECK(p.virtio.firmware.capacity_sectors == (2ull << 30) / 512);
  CHECK(check_param_requirements(c) ==
        std::vector<std::string>{
            "nvmesim: warning: --nvme.backend with device virtio-blk sets virtio.backend (the old spelling; use "
            "--virtio.backend)",
            "nvmesim: warning: --nvme.backend_latency: device virtio-blk reads virtio.backend_latency (set to 30us); "
            "the old spelling nvme.backend_latency=20us does nothing",
            "nvmesim: warning: --nvme.capacity with device virtio-blk sets virtio.capacity (the old spelling; use "
            "--virtio.capacity)"});

  // device=nvme: nvme.* is the controller's own, virtio.* does nothing.
  Config n;
  n.set("nvme.backend", "latency");
  n.set("virtio.backend", "ram");
  n.validate_all();
  CHECK(backend_value_param(n, "backend") == "nvme.backend");
  const SystemParams q = load_system_params(n, {});
  CHECK(q.nvme.backend.kind == models::BackendKind::Latency);
  CHECK(check_param_requirements(n) ==
        std::vector<std::string>{"nvmesim: warning: --virtio.backend: needs device virtio-blk (it is nvme: the NVMe "
                                 "controller's backend is nvme.backend); the setting does nothing"});
}

TEST_CASE("virtio backend: a JSON document of an old-spelling run read back runs the same, with the same warning",
          "[binary][virtio_backend]") {
  const std::string file = "/tmp/nvmesim_virtio_backend_" + std::to_string(::getpid()) + ".json";
  const auto first = run_nvmesim("--device=virtio-blk --nvme.backend=latency --number_ios=500 --single-run "
                                 "--output-format=json --output=" + file);
  REQUIRE(first.exit_code == 0);
  const auto again = run_nvmesim("--config " + file + " --single-run --output-format=json");
  std::ifstream in(file);
  const std::string first_json{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  std::remove(file.c_str());
  REQUIRE(again.exit_code == 0);
  CHECK(again.out == first_json);
  // (Read back, a single run's document also sets nvme.dbbuf, which
  // virtio-blk warns about: config_dump.h.)
  CHECK(again.err.rfind(first.err, 0) == 0);
  CHECK(first.err.find("--nvme.backend with device virtio-blk sets virtio.backend") != std::string::npos);
  const nlohmann::json j = nlohmann::json::parse(again.out);
  CHECK(j["config"]["nvme.backend"] == "latency");
  CHECK(j["config"]["virtio.backend"] == "null");
  CHECK(j["stats"]["virtio_blk"]["backend"]["completed"].get<double>() > 0);
}

// platform/config/sim_time_range.cpp: the bound of the device's backend
// names the device's parameter (10^7 rounds of 1 s: 115.7 days).
TEST_CASE("virtio backend: the simulated-time bound names virtio.backend_latency", "[binary][virtio_backend]") {
  const std::string because =
      "1s per round of iodepth 1 I/Os and number_ios 10000000 need at least 115.7 days of simulated time";
  for (const char* spelling : {"virtio", "nvme"}) {
    const std::string s = spelling;
    const auto p = run_nvmesim("--device=virtio-blk --" + s + ".backend=latency --" + s +
                               ".backend_latency=1s --iodepth=1 --number_ios=10000000");
    INFO(p.err);
    CHECK(p.exit_code == 2);
    CHECK(p.err.find("nvmesim: error: --virtio.backend_latency: " + because) != std::string::npos);
  }
}
