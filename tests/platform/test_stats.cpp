// The statistics tree of a whole system: invariants across groups, the reset
// at measurement start, figures that were never reported before, and the
// docs/metrics.md table checked against the groups themselves.
#include <catch2/catch.hpp>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "nvmesim/models/hv/vm_exit.h"
#include "nvmesim/platform/config/params.h"
#include "nvmesim/platform/report/stats_doc.h"
#include "nvmesim/platform/system/system.h"
#include "run_binary.h"

using namespace nvmesim;
using namespace nvmesim::platform;

namespace {

Config config_of(std::initializer_list<std::pair<const char*, const char*>> settings) {
  Config c;
  for (const auto& [k, v] : settings) c.set(k, v);
  c.validate_all();
  return c;
}

std::string vcpu(unsigned j, const std::string& stat) { return "vcpu" + std::to_string(j) + "." + stat; }

}  // namespace

TEST_CASE("stats: doorbell exits, updates and interrupts agree across groups", "[stats]") {
  const Config c = config_of({{"nvme.dbbuf", "spec"}, {"numjobs", "2"}, {"iodepth", "8"},
                              {"number_ios", "400"}});
  System s(c);
  const RunResults r = s.run();
  REQUIRE(r.count("ios") == 800);
  const stats::GroupValues& t = r.stats;
  uint64_t sq_mmio = 0, cq_mmio = 0, ios = 0;
  for (unsigned j = 0; j < 2; ++j) {
    const std::string sq = "driver.sq" + std::to_string(j + 1) + ".",
                      cq = "driver.cq" + std::to_string(j + 1) + ".";
    INFO("vcpu" << j);
    // Counted by the hypervisor (exits) and by the driver (doorbell writes).
    CHECK(t.at(vcpu(j, "exits.mmio_doorbell")) == t.at(sq + "mmio") + t.at(cq + "mmio"));
    CHECK(t.at(sq + "updates") == t.at(sq + "mmio") + t.at(sq + "suppressed"));
    CHECK(t.at(cq + "updates") == t.at(cq + "mmio") + t.at(cq + "suppressed"));
    CHECK(t.at(sq + "suppressed") > 0);
    CHECK(t.at(cq + "invalid_completions") == 0);
    CHECK(t.at(cq + "completions") == t.at(vcpu(j, "ios")));  // every CQE consumed is an I/O finished
    sq_mmio += t.at(sq + "mmio");
    cq_mmio += t.at(cq + "mmio");
    ios += t.at(vcpu(j, "ios"));
  }
  // The figures of PRODUCT.md come from the same groups.
  CHECK(r.count("doorbells.sq.mmio") == sq_mmio);
  CHECK(r.count("doorbells.cq.mmio") == cq_mmio);
  CHECK(ios == r.count("ios"));
  // Every command fetched in the measured phase is an I/O of the jobs.
  CHECK(t.at("nvme.commands_fetched") == 800);
  CHECK(t.at("nvme.io_commands") == 800);
  CHECK(t.at("nvme.completions_posted") == 800);
  CHECK(t.at("nvme.backend.completed") == 800);
  // One MSI-X message each: sent by the device, carried by the root
  // complex, delivered by the hypervisor.
  CHECK(t.at("nvme.msix_sent") == r.count("controller.interrupts"));
  CHECK(t.at("root_complex.msi_messages") == t.at("nvme.msix_sent"));
  CHECK(t.at("hv.interrupts_delivered") + t.at("hv.lost_interrupts") == t.at("nvme.msix_sent"));
  CHECK(t.at("hv.lost_interrupts") == 0);
  CHECK(t.at("root_complex.mmio_errors") == 0);
  CHECK(t.at("nvme.invalid_doorbell_writes") == 0);
  CHECK(t.at("nvme.msix_masked") == 0);
}

TEST_CASE("stats: the groups restart at measurement, bring-up is kept apart", "[stats]") {
  const Config c = config_of({{"nvme.dbbuf", "spec"}, {"number_ios", "100"}});
  System s(c);
  const RunResults r = s.run();
  REQUIRE(r.count("ios") == 100);
  const stats::GroupValues& b = r.bringup_stats;
  // Bring-up ran admin commands (Identify, queue creation, Doorbell Buffer
  // Config) and rang the admin doorbells; the measured phase has none.
  CHECK(b.at("nvme.admin_commands") >= 5);
  CHECK(r.stats.at("nvme.admin_commands") == 0);
  CHECK(b.at("driver.sq0.updates") == b.at("nvme.admin_commands"));
  CHECK(r.stats.at("driver.sq0.updates") == 0);
  // The JSON's "bringup" exits are the vCPU group's exits when measurement started.
  for (unsigned k = 0; k < models::EXIT_KIND_COUNT; ++k) {
    const std::string kind = models::to_string(models::ExitKind(k));
    INFO(kind);
    CHECK(r.count("bringup.exits." + kind) == b.at("vcpu0.exits." + kind));
    CHECK(r.count("exits.count." + kind) == r.stats.at("vcpu0.exits." + kind));
  }
  CHECK(r.count("bringup.exits.mmio_other") > 0);  // register set-up
  CHECK(r.stats.at("vcpu0.exits.mmio_other") == 0);
}

// QEMU's global lock (hv.bql): the vCPUs' wait for it, never reported
// before, counted by the lock and per vCPU by the hypervisor.
TEST_CASE("stats: with hv.bql the lock wait is reported and is the sum over the vCPUs", "[stats]") {
  const Config c = config_of({{"hv.bql", "on"}, {"nvme.dbbuf", "spec"}, {"numjobs", "2"},
                              {"number_ios", "1000"}});
  System s(c);
  const RunResults r = s.run();
  REQUIRE(r.count("ios") == 2000);
  const uint64_t total = r.stats.at("bql.vcpu_wait");
  CHECK(total > 0);
  CHECK(total == r.stats.at("vcpu0.bql_wait") + r.stats.at("vcpu1.bql_wait"));
  CHECK(r.stats.at("vcpu0.bql_wait") > 0);
  CHECK(r.stats.at("vcpu1.bql_wait") > 0);
}

// Under TCG a vCPU takes the lock for each MMIO access handled in QEMU and,
// with hv.bql_interrupts, for each interrupt's delivery and for its EOI.
// Returns holds - MMIO writes, in units of interrupts (one System per process).
namespace {
double lock_holds_beyond_mmio_per_interrupt(const char* interrupts) {
  const Config c = config_of({{"hv.bql", "on"}, {"hv.bql_interrupts", interrupts}, {"nvme.dbbuf", "spec"},
                              {"iodepth", "8"}, {"numjobs", "2"}, {"number_ios", "500"}});
  System s(c);
  const RunResults r = s.run();
  REQUIRE(r.count("ios") == 1000);
  const uint64_t mmio = r.stats.at("vcpu0.exits.mmio_doorbell") + r.stats.at("vcpu1.exits.mmio_doorbell") +
                        r.stats.at("vcpu0.exits.mmio_other") + r.stats.at("vcpu1.exits.mmio_other");
  const uint64_t irqs = r.stats.at("vcpu0.interrupts") + r.stats.at("vcpu1.interrupts");
  CHECK(mmio == r.stats.at("driver.sq1.mmio") + r.stats.at("driver.cq1.mmio") + r.stats.at("driver.sq2.mmio") +
                    r.stats.at("driver.cq2.mmio"));
  REQUIRE(irqs > 0);
  return double(r.stats.at("bql.vcpu_holds") - mmio) / double(irqs);
}
}  // namespace

TEST_CASE("stats: without hv.bql_interrupts a vCPU takes the lock once per MMIO write", "[stats]") {
  CHECK(lock_holds_beyond_mmio_per_interrupt("off") == 0.0);
}

TEST_CASE("stats: with hv.bql_interrupts a vCPU also takes the lock twice per interrupt", "[stats]") {
  CHECK(lock_holds_beyond_mmio_per_interrupt("on") == 2.0);
}

TEST_CASE("stats: without hv.bql there is no lock group and no wait", "[stats]") {
  const Config c = config_of({{"number_ios", "50"}});
  System s(c);
  const RunResults r = s.run();
  CHECK(r.stats.group("bql") == nullptr);
  CHECK(r.stats.at("vcpu0.bql_wait") == 0);
}

TEST_CASE("stats: the JSON carries the tree after the existing keys, times in exact ns", "[stats]") {
  const auto run = test::run_nvmesim("--output-format json --nvme.dbbuf spec --number_ios 100");
  REQUIRE(run.exit_code == 0);
  const auto j = nlohmann::ordered_json::parse(run.out);
  std::vector<std::string> keys;
  for (const auto& [k, v] : j.items()) keys.push_back(k);
  const std::vector<std::string> expected = {
      "version", "outcome", "headline", "config", "sim_time_ns", "ios", "read_ios", "write_ios",
      "io_errors", "first_error_status", "verify", "iops", "bw_bytes", "lat_ns", "slat_ns", "clat_ns",
      "driver_lat_ns", "iodepth_level", "iodepth_submit", "iodepth_complete", "doorbells",
      "eventidx", "exits", "per_io", "controller", "utilization", "bringup", "stall",
      "interrupted", "stats"};
  CHECK(keys == expected);
  const auto& st = j["stats"];
  CHECK(st["nvme"]["commands_fetched"] == 100);
  CHECK(st["nvme"]["invalid_doorbell_writes"] == 0);
  CHECK(st["driver"]["sq1"]["updates"] == j["doorbells"]["sq"]["updates"]);
  CHECK(st["vcpu0"]["exits"]["mmio_doorbell"] == j["exits"]["count"]["mmio_doorbell"]);
  // Times are integer picoseconds written with three decimals: the same text
  // as the exits' time_ns, which is computed from the same picoseconds.
  const std::string text = run.out;
  const auto at = text.find("\"exit_time\": {\"mmio_doorbell\": ");
  REQUIRE(at != std::string::npos);
  const auto time_ns = text.find("\"time_ns\": {\"mmio_doorbell\": ");
  REQUIRE(time_ns != std::string::npos);
  auto literal = [&](size_t from) {
    const size_t start = text.find(": ", text.find("mmio_doorbell", from)) + 2;
    return text.substr(start, text.find_first_of(",}", start) - start);
  };
  CHECK(literal(at) == literal(time_ns));
  CHECK(literal(at).find('.') == literal(at).size() - 4);
}

// docs/metrics.md's statistics table is the groups' own: a system with every
// kind of group (iothreads, the global lock, two vCPUs) must give exactly it.
TEST_CASE("stats: docs/metrics.md lists every statistic with its unit and description", "[stats][docs]") {
  const Config c = config_of({{"hv.device_thread", "iothread"}, {"hv.bql", "on"},
                              {"numjobs", "2"}, {"number_ios", "20"}});
  System s(c);
  const RunResults r = s.run();
  const std::string table = platform::report::stats_table(r.stats);
  std::ifstream in(std::string(NVMESIM_SOURCE_DIR) + "/docs/metrics.md");
  std::stringstream doc;
  doc << in.rdbuf();
  const std::string begin = "<!-- statistics table: checked by tests/platform/test_stats.cpp -->\n";
  const std::string text = doc.str();
  const size_t from = text.find(begin);
  REQUIRE(from != std::string::npos);
  const size_t start = from + begin.size();
  const size_t end = text.find("\n\n", start);
  const std::string documented = text.substr(start, end == std::string::npos ? end : end + 1 - start);
  if (documented != table) {
    std::ofstream("stats_table.md") << table;  // for pasting into the docs
    FAIL("docs/metrics.md's statistics table differs from the groups (the expected table is in "
         "stats_table.md in the test's working directory):\n" << table);
  }
  // Each row names a stat the groups have.
  CHECK(table.find("| `bql.vcpu_wait` | ns |") != std::string::npos);
  CHECK(table.find("| `vcpu<N>.bql_wait` | ns |") != std::string::npos);
  CHECK(table.find("| `iothread<N>.busy_time` | ns |") != std::string::npos);
}
