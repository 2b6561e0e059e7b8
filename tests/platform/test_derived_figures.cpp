// One statistics channel (platform/report/derived_figures.h): every derived
// figure is a row of one table, listed once; the JSON writes exactly the
// table's figures (each JSON figure is a row, each row is in the JSON, with
// the row's value and format); the text report and the sweep CSV show the
// same values; docs/metrics.md lists every row with its formula. So a new
// derived figure is one row in derived_figures.cpp and one in the docs.
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <nlohmann/json.hpp>

#include "nvmesim/platform/config/params.h"
#include "nvmesim/platform/report/derived_figures.h"
#include "nvmesim/platform/report/results.h"
#include "nvmesim/platform/sweep/sweep_json.h"
#include "nvmesim/platform/sweep/sweep_output.h"
#include "nvmesim/platform/system/system.h"

using namespace nvmesim;
using namespace nvmesim::platform;

namespace {

// A run with every kind of array figure: two vCPUs, two host threads (the
// main loop and an iothread), two job sections, the host figures.
RunResults run_with_every_section() {
  Config c;
  for (const auto& [k, v] : std::vector<std::pair<const char*, const char*>>{
           {"numjobs", "2"}, {"iodepth", "4"}, {"number_ios", "200"}, {"nvme.dbbuf", "spec"},
           {"hv.device_thread", "iothread"}, {"pcie.mode", "link"}})
    c.set(k, v);
  c.validate_all();
  System s(c);
  RunResults r = s.run();
  r.sections = {{"first", {}, 0, {}, {0}}, {"second", {}, 1, {"first"}, {1}}};
  r.has_host = true;
  r.wall_s = 0.5;
  r.activations = {{"method", 1000}, {"thread", 10}};
  return r;
}

// "utilization.vcpu.1.busy" -> the table's key "utilization.vcpu.busy" and
// the element 1; a run figure's key as it is, element 0.
std::pair<std::string, unsigned> figure_of(const std::string& leaf) {
  for (const char* array : {"utilization.vcpu.", "utilization.device.", "job_results."}) {
    const std::string a = array;
    if (leaf.rfind(a, 0) != 0) continue;
    const size_t dot = leaf.find('.', a.size());
    return {a + leaf.substr(dot + 1), unsigned(std::stoul(leaf.substr(a.size(), dot - a.size())))};
  }
  return {leaf, 0};
}

// The run document's leaves that are not derived figures: the layout's own
// (outcome, configuration, latency distributions, bring-up's outcome, the
// stall, the statistics tree, ...) and each array element's name.
bool layout_leaf(const std::string& leaf) {
  for (const char* prefix : {"version", "outcome", "headline", "config.", "jobs.", "lat_ns.", "slat_ns.",
                             "clat_ns.", "driver_lat_ns.", "iodepth_", "bringup.ok", "bringup.error",
                             "bringup.sim_time_ns", "bringup.dbbuf_", "pcie.", "stall", "interrupted",
                             "host.wall_s", "host.peak_rss_bytes", "host.activations.", "stats."})
    if (leaf.rfind(prefix, 0) == 0) return true;
  const auto [key, element] = figure_of(leaf);
  return key == "utilization.vcpu.vcpu" || key == "utilization.device.thread" || key == "job_results.name";
}

std::string json_text(const report::Json& v) { return report::dump(v); }

}  // namespace

TEST_CASE("figures: each key is listed once, and every figure is found by it", "[figures]") {
  std::set<std::string> keys;
  for (const figures::Figure& f : figures::all()) {
    INFO(f.key);
    CHECK(keys.insert(f.key).second);
    CHECK(&figures::find(f.key) == &f);
    CHECK_FALSE(f.definition.empty());
  }
  CHECK(keys.size() > 60);
  CHECK_THROWS_AS(figures::find("per_io.no_such_figure"), std::out_of_range);
}

TEST_CASE("figures: the JSON writes exactly the table's figures, the text and the CSV take them from it",
          "[figures][json]") {
  const RunResults r = run_with_every_section();
  REQUIRE(r.count("ios") == 400);
  const std::string json = report::dump(results_json(r));
  std::vector<std::pair<std::string, std::string>> leaves;
  sweep::flatten(sweep::parse_json(json), "", leaves);

  // Every leaf that is not the layout's is a row of the table, written with
  // the row's value in the row's format.
  std::map<std::string, unsigned> written;  // table key -> elements seen
  for (const auto& [leaf, text] : leaves) {
    if (layout_leaf(leaf)) continue;
    INFO(leaf);
    const auto [key, element] = figure_of(leaf);
    const figures::Figure& f = figures::find(key);  // throws: a figure defined outside the table
    CHECK(f.in_json);
    const report::Json expected = figures::json_value(f, r.figure(key, element));
    // flatten gives numbers as written, null as "".
    const std::string want = expected.is_null() ? "" : json_text(expected);
    CHECK(text == want);
    ++written[key];
  }
  // Every JSON row of the table is in the document, once per element.
  for (const figures::Figure& f : figures::all()) {
    if (!f.in_json) continue;
    INFO(f.key);
    CHECK(written[f.key] == figures::instances(r, f.over));
  }
  CHECK(figures::instances(r, figures::Over::Vcpu) == 2);
  REQUIRE(figures::instances(r, figures::Over::DeviceThread) == 2);  // the main loop and iothread0
  CHECK(figures::device_thread(r, 1) == "iothread0");
  CHECK(figures::instances(r, figures::Over::JobSection) == 2);

  // The text report prints the same values.
  std::ostringstream text;
  write_normal(r, text);
  auto fixed = [](double v, int decimals) {
    char b[64];
    std::snprintf(b, sizeof b, "%.*f", decimals, v);
    return std::string(b);
  };
  const std::string t = text.str();
  CHECK(t.find("sq: updates=" + std::to_string(r.count("doorbells.sq.updates")) +
               ", mmio=" + std::to_string(r.count("doorbells.sq.mmio"))) != std::string::npos);
  CHECK(t.find("eventidx hit rate=" + fixed(100 * r.figure("eventidx.sq_hit_rate"), 2) + "%, exits/io=" +
               fixed(r.figure("per_io.sq_mmio"), 3)) != std::string::npos);
  CHECK(t.find("doorbell exits per I/O: " + fixed(r.figure("per_io.exits"), 3)) != std::string::npos);
  CHECK(t.find("MSI-X messages per I/O: " + fixed(r.figure("per_io.interrupts"), 3)) != std::string::npos);
  CHECK(t.find("vcpu1: busy " + fixed(100 * r.figure("utilization.vcpu.busy", 1), 1) + "%") != std::string::npos);
  CHECK(t.find("iothread0: busy " + fixed(100 * r.figure("utilization.device.busy", 1), 1) + "%") !=
        std::string::npos);
  CHECK(t.find("[second] group 1, vcpu1, after first:") != std::string::npos);
  CHECK(t.find(std::to_string(r.count("job_results.ios", 1)) + " I/Os (read ") != std::string::npos);

  // The sweep CSV's columns are the JSON's leaves: the same text.
  sweep::Point point;
  const sweep::Record record = sweep::make_record(point, json, "", 0);
  REQUIRE(record.status == "ok");
  std::istringstream csv(sweep::csv_text({}, {record}));
  std::string header, row;
  std::getline(csv, header);
  std::getline(csv, row);
  auto cells = [](const std::string& line) {  // RFC 4180: quoted cells may hold commas and ""
    std::vector<std::string> out(1);
    bool quoted = false;
    for (size_t i = 0; i < line.size(); ++i) {
      const char ch = line[i];
      if (quoted && ch == '"' && i + 1 < line.size() && line[i + 1] == '"') out.back() += line[++i];
      else if (ch == '"') quoted = !quoted;
      else if (ch == ',' && !quoted) out.emplace_back();
      else out.back() += ch;
    }
    return out;
  };
  const auto names = cells(header), values = cells(row);
  std::map<std::string, std::string> column;
  for (size_t i = 0; i < names.size() && i < values.size(); ++i) column[names[i]] = values[i];
  for (const char* key :
       {"iops", "per_io.exits", "eventidx.sq_hit_rate", "doorbells.cq.mmio", "controller.interrupts"}) {
    INFO(key);
    CHECK(column[key] == json_text(figures::json_value(figures::find(key), r.figure(key))));
  }
  CHECK(column["utilization.vcpu.1.busy"] ==
        json_text(figures::json_value(figures::find("utilization.vcpu.busy"), r.figure("utilization.vcpu.busy", 1))));
}

TEST_CASE("figures: the derived figures agree with the statistics tree they come from", "[figures]") {
  const RunResults r = run_with_every_section();
  const stats::GroupValues& t = r.stats;
  uint64_t sq_updates = 0, cq_mmio = 0, suppressed = 0, with_dbbuf = 0;
  for (const char* q : {"1", "2"}) {
    sq_updates += t.at(std::string("driver.sq") + q + ".updates");
    cq_mmio += t.at(std::string("driver.cq") + q + ".mmio");
    suppressed += t.at(std::string("driver.sq") + q + ".suppressed");
    with_dbbuf += t.at(std::string("driver.sq") + q + ".updates_with_dbbuf");
  }
  CHECK(r.count("doorbells.sq.updates") == sq_updates);
  CHECK(r.count("doorbells.cq.mmio") == cq_mmio);
  REQUIRE(with_dbbuf > 0);
  CHECK(r.figure("eventidx.sq_hit_rate") == double(suppressed) / double(with_dbbuf));
  CHECK(r.count("ios") == t.at("vcpu0.ios") + t.at("vcpu1.ios"));
  CHECK(r.figure("per_io.cq_mmio") == double(cq_mmio) / double(r.count("ios")));
  CHECK(r.count("controller.interrupts") == t.at("nvme.msix_sent"));
  CHECK(r.count("eventidx.shadow_reads") == t.at("nvme.shadow_reads"));
  CHECK(r.figure("iops") == double(r.count("ios")) * 1e9 / r.sim_time_ns);
  CHECK(r.figure("utilization.device.work", 1) ==
        double(t.at("iothread0.busy_time")) / 1000.0 / r.figure("utilization.span_ns"));
  CHECK(r.count("job_results.ios", 0) == t.at("vcpu0.ios"));
  CHECK(r.figure("host.ios_per_wall_s") == double(r.count("ios")) / 0.5);
  CHECK(r.figure("host.activations_per_io") == 1010.0 / double(r.count("ios")));
}

TEST_CASE("figures: without the doorbell buffer the hit rates are undefined, null in the JSON", "[figures]") {
  Config c;
  c.set("nvme.dbbuf", "off");
  c.set("number_ios", "50");
  c.validate_all();
  System s(c);
  const RunResults r = s.run();
  REQUIRE(r.count("ios") == 50);
  CHECK(std::isnan(r.figure("eventidx.sq_hit_rate")));
  CHECK(json_text(figures::json_value(figures::find("eventidx.sq_hit_rate"), r.figure("eventidx.sq_hit_rate"))) ==
        "null");
  CHECK(r.count("doorbells.sq.mmio") == 50);
  CHECK(r.figure("per_io.sq_mmio") == 1.0);
  CHECK_THROWS_AS(r.count("per_io.sq_mmio"), std::logic_error);  // not a count
}

// docs/metrics.md's derived-figures table is the table's own rows.
TEST_CASE("figures: docs/metrics.md lists every derived figure with its formula", "[figures][docs]") {
  const std::string table = figures::docs_table();
  std::ifstream in(std::string(NVMESIM_SOURCE_DIR) + "/docs/metrics.md");
  std::stringstream doc;
  doc << in.rdbuf();
  const std::string begin = "<!-- derived figures: checked by tests/platform/test_derived_figures.cpp -->\n"
                            "| figure | formula |\n|---|---|\n";
  const std::string text = doc.str();
  const size_t from = text.find(begin);
  REQUIRE(from != std::string::npos);
  const size_t start = from + begin.size();
  const size_t end = text.find("\n\n", start);
  const std::string documented = text.substr(start, end == std::string::npos ? end : end + 1 - start);
  if (documented != table) {
    std::ofstream("derived_figures_table.md") << table;  // for pasting into the docs
    FAIL("docs/metrics.md's derived figures differ from platform/report/derived_figures.cpp (the expected "
         "rows are in derived_figures_table.md in the test's working directory):\n" << table);
  }
}
