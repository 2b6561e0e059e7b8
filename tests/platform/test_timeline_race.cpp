// One I/O's race in the timeline: each doorbell update carries the values the
// shadow-doorbell rule decided with (new, old, EventIdx), the HTML page shows
// them on hover and links an I/O to its doorbell updates and interrupt, its
// axis starts at --trace-start, its colours come from one fixed table; the
// JSON keeps to Perfetto's importer rules (scripts/check_perfetto_json.py).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/platform/run_binary.h"
#include "tests/platform/temp_dir.h"
#include "tests/platform/text_file.h"

using nvmesim::test::run_nvmesim;
using nvmesim::test::slurp;
using Json = nlohmann::json;

namespace {

// The rule as NVMe's shadow doorbell states it, for a queue of `qsize`
// entries: ring iff EventIdx lies in [old, new) cyclically, i.e.
// (new - EventIdx - 1) mod qsize < (new - old) mod qsize.
bool rings(int64_t new_value, int64_t old_value, int64_t eventidx, int64_t qsize) {
  auto mod = [qsize](int64_t v) { return ((v % qsize) + qsize) % qsize; };
  return mod(new_value - eventidx - 1) < mod(new_value - old_value);
}

// The element of `page` whose attribute `attr` is `value`, up to its </rect>.
std::string element(const std::string& page, const std::string& attr, const std::string& value) {
  const size_t at = page.find(attr + "=\"" + value + "\"");
  if (at == std::string::npos) return "";
  const size_t open = page.rfind("<rect", at);
  return page.substr(open, page.find("</rect>", at) + 7 - open);
}

// The legend of a page: kind -> colour.
std::map<std::string, std::string> legend(const std::string& page) {
  std::map<std::string, std::string> m;
  for (size_t at = page.find("<rect class=\"legend\""); at != std::string::npos;
       at = page.find("<rect class=\"legend\"", at + 1)) {
    const size_t f = page.find("fill=\"", at) + 6;
    const size_t t = page.find("<text", at);
    const size_t s = page.find('>', t) + 1;
    m[page.substr(s, page.find('<', s) - s)] = page.substr(f, page.find('"', f) - f);
  }
  return m;
}

int python_check(const std::string& files) {
  return std::system(("python3 " NVMESIM_SOURCE_DIR "/scripts/check_perfetto_json.py " + files).c_str());
}

}  // namespace

TEST_CASE("timeline race: a doorbell update shows its new, old and EventIdx values, as the rule decides them",
          "[traces][binary]") {
  nvmesim::test::TempDir d("nvmesim_tlrace", "");
  // A 16-entry queue and 20 I/Os, one per submission: the SQ tail wraps.
  constexpr int64_t kEntries = 16;
  const auto r = run_nvmesim("--preset=none --number_ios=20 --nvme.dbbuf=spec --guest.io_queue_entries=16 --iodepth=8 "
                             "--trace-start 150us --timeline " + d / "t.json >/dev/null");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  REQUIRE(run_nvmesim("timeline-html " + d / "t.json " + d / "t.html").exit_code == 0);
  const Json trace = Json::parse(slurp(d / "t.json"));
  const std::string page = slurp(d / "t.html");
  // --timeline FILE.html writes the same page straight away (its title
  // names the file).
  REQUIRE(run_nvmesim("--preset=none --number_ios=20 --nvme.dbbuf=spec --guest.io_queue_entries=16 --iodepth=8 "
                      "--trace-start 150us --timeline " + d / "direct.html >/dev/null").exit_code == 0);
  const std::string direct = slurp(d / "direct.html");
  const std::string from_json = "nvmesim timeline " + d / "t.json", from_run = "nvmesim timeline " + d / "direct.html";
  std::string expected = page;
  for (size_t at = expected.find(from_json); at != std::string::npos; at = expected.find(from_json, at + 1))
    expected.replace(at, from_json.size(), from_run);
  CHECK(direct == expected);

  // Every update through the shadow: the rule, computed here, decides MMIO
  // write or suppressed; each value is what the last update published.
  std::map<std::string, int64_t> last;  // "sq"/"cq" -> the value published before
  int suppressed = 0, rang = 0, sq_updates = 0;
  Json wrap;  // the SQ update that publishes tail 0 after 15
  for (const Json& e : trace["traceEvents"]) {
    if (e.value("cat", "") != "doorbell") continue;
    const std::string name = e["name"];
    const std::string dir = name.substr(0, 2);
    const Json& a = e["args"];
    INFO(e.dump());
    REQUIRE(a.contains("eventidx"));
    const int64_t nv = a["value"], old = a["old"], ei = a["eventidx"];
    if (last.count(dir)) CHECK(old == last[dir]);
    last[dir] = nv;
    const bool mmio = name.find("mmio") != std::string::npos;
    CHECK(mmio == rings(nv, old, ei, kEntries));
    (mmio ? rang : suppressed)++;
    if (dir == "sq") {
      // One command per submission: the n-th update publishes tail n mod 16.
      ++sq_updates;
      CHECK(a["n"] == sq_updates);
      CHECK(nv == sq_updates % kEntries);
      if (nv == 0 && old == kEntries - 1) wrap = e;
    }
  }
  CHECK(sq_updates == 20);
  CHECK(rang >= 3);
  CHECK(suppressed >= 10);
  // The wrapping update, worked out here: new 0, old 15; the device had
  // consumed up to 8 (its EventIdx), so (0 - 8 - 1) mod 16 = 7 is not below
  // (0 - 15) mod 16 = 1: suppressed.
  REQUIRE(!wrap.is_null());
  CHECK(wrap["args"]["eventidx"] == 8);
  CHECK(!rings(0, 15, 8, kEntries));
  CHECK(wrap["name"] == "sq_suppressed");
  // Its tooltip holds the three values and the outcome.
  const std::string tick = element(page, "data-k", "q1.sq16");
  INFO(tick);
  CHECK(tick.find("<title>q1 SQ tail doorbell update #16: suppressed (no MMIO write)\n"
                  "new (published) 0, old 15, EventIdx 8\n"
                  "rings iff (u16)(new - EventIdx - 1) &lt; (u16)(new - old): 65527 &gt;= 65521\n") !=
        std::string::npos);
  CHECK(tick.find("fill=\"#ff9da7\"") != std::string::npos);
  // The first update rang: new 1, old 0, EventIdx 0.
  CHECK(element(page, "data-k", "q1.sq1").find("update #1: MMIO write\nnew (published) 1, old 0, EventIdx 0\n") !=
        std::string::npos);

  // The axis starts at the window's start.
  CHECK(page.find("data-axis-start-us=\"150.000000\"") != std::string::npos);
  CHECK(page.find("<text class=\"axis\" x=\"132.0\" y=\"12\">150.0 us</text>") != std::string::npos);
  CHECK(trace["otherData"]["trace_start_us"] == "150.000000");

  // Links: each I/O names its SQ update, its interrupt (and MSI-X) and its
  // CQ update, and they came in that order around it.
  std::map<std::string, double> at;  // link key -> time (us)
  for (const Json& e : trace["traceEvents"]) {
    if (e["ph"] != "i" || !e.contains("args") || !e["args"].contains("n")) continue;
    const std::string n = std::to_string(int(e["args"]["n"]));
    const std::string name = e["name"];
    const std::string key = e["tid"] == 1 ? "vcpu0.irq" + n
                            : name == "msix" ? "q1.msix" + n
                                             : "q1." + name.substr(0, 2) + n;
    at[key] = e["ts"].get<double>();
  }
  std::map<std::string, double> begun;
  int linked = 0;
  for (const Json& e : trace["traceEvents"]) {
    if (e["ph"] == "b") begun[e["id"].get<std::string>()] = e["ts"];
    if (e["ph"] != "e") continue;
    const Json& b_args = e["args"];
    INFO(e.dump());
    REQUIRE(b_args.contains("cq_doorbell"));
    REQUIRE(b_args.contains("interrupt"));
    const std::string cq = "q1.cq" + std::to_string(int(b_args["cq_doorbell"]));
    const std::string irq = "vcpu0.irq" + std::to_string(int(b_args["interrupt"]));
    const std::string msix = "q1.msix" + std::to_string(int(b_args["msix"]));
    REQUIRE(at.count(cq));
    REQUIRE(at.count(irq));
    REQUIRE(at.count(msix));
    CHECK(at[msix] <= at[irq]);
    CHECK(at[irq] <= double(e["ts"]));
    CHECK(at[cq] >= double(e["ts"]));
    if (begun.count(e["id"].get<std::string>())) CHECK(at[irq] >= begun[e["id"].get<std::string>()]);
    ++linked;
  }
  CHECK(linked == 20);
  for (const Json& e : trace["traceEvents"])
    if (e["ph"] == "b") {
      const std::string sq = "q1.sq" + std::to_string(int(e["args"]["sq_doorbell"]));
      REQUIRE(at.count(sq));
      CHECK(at[sq] >= double(e["ts"]));
    }
  // In the page: the I/O of tag 0 lists them, and they carry those keys.
  const size_t io0 = page.find("data-name=\"q1 tag 0\"");
  REQUIRE(io0 != std::string::npos);
  const size_t l = page.find("data-l=\"", io0) + 8;
  const std::string links = page.substr(l, page.find('"', l) - l);
  CHECK(links == "q1.sq1 vcpu0.irq1 q1.msix1 q1.cq1");
  for (const std::string key : {"q1.sq1", "vcpu0.irq1", "q1.msix1", "q1.cq1"}) {
    INFO(key);
    CHECK(!element(page, "data-k", key).empty());
  }
  // Self-contained: no external script or fetch.
  CHECK(page.find("src=") == std::string::npos);
  CHECK(page.find("fetch(") == std::string::npos);
  CHECK(page.find("XMLHttpRequest") == std::string::npos);

  // In a browser (when one is installed): the tooltip is in the DOM the page
  // builds, and a click on the I/O lights its doorbell updates and interrupt.
  if (std::system("command -v chromium >/dev/null 2>&1") == 0) {
    std::string clicked = page;
    clicked.replace(clicked.rfind("</body>"), 7,
                    "<script>//<![CDATA[\ndocument.querySelector('[data-name=\"q1 tag 0\"] rect.io')"
                    ".dispatchEvent(new MouseEvent('click',{bubbles:true}));\n//]]></script></body>");
    std::ofstream(d / "clicked.html") << clicked;
    const auto dom = run_nvmesim("--version >/dev/null; timeout 60 chromium --headless --no-sandbox --disable-gpu "
                                 "--dump-dom file://" + d / "clicked.html");
    REQUIRE(dom.exit_code == 0);
    CHECK(dom.out.find("new (published) 0, old 15, EventIdx 8") != std::string::npos);
    for (const std::string key : {"q1.sq1", "vcpu0.irq1", "q1.msix1", "q1.cq1"}) {
      INFO(key);
      CHECK(element(dom.out, "data-k", key).find(" hl\"") != std::string::npos);
    }
    CHECK(element(dom.out, "data-k", "q1.sq2").find(" hl\"") == std::string::npos);
  } else {
    WARN("chromium not installed: the page's DOM not checked in a browser");
  }
}

TEST_CASE("timeline race: one colour per kind, the same in two different runs", "[traces][binary]") {
  nvmesim::test::TempDir d("nvmesim_tlcolour", "");
  REQUIRE(run_nvmesim("--number_ios=20 --nvme.dbbuf=spec --trace-start 150us --timeline " + d / "a.json" +
                      " >/dev/null").exit_code == 0);
  REQUIRE(run_nvmesim("--single-run --number_ios=40 --numjobs=2 --hv.device_thread=iothread --hv.notify=ioeventfd "
                      "--timeline " + d / "b.json >/dev/null").exit_code == 0);
  REQUIRE(run_nvmesim("timeline-html " + d / "a.json " + d / "a.html").exit_code == 0);
  REQUIRE(run_nvmesim("timeline-html " + d / "b.json " + d / "b.html").exit_code == 0);
  const auto a = legend(slurp(d / "a.html")), b = legend(slurp(d / "b.html"));
  // The table (platform/timeline/timeline_html.cpp), as it is documented.
  const std::map<std::string, std::string> table = {
      {"idle", "#dcdcdc"},          {"working", "#59a14f"},          {"polling", "#8cd17d"},
      {"burst", "#4e79a7"},         {"read", "#76b7b2"},             {"write", "#f28e2b"},
      {"sq_doorbell_mmio", "#e15759"}, {"cq_doorbell_mmio", "#b07aa1"}, {"sq_suppressed", "#ff9da7"},
      {"cq_suppressed", "#d4a6c8"}, {"sq_eventidx", "#9c755f"},      {"cq_eventidx", "#b6992d"},
      {"msix", "#edc948"},          {"interrupt", "#1f3b73"}};
  size_t common = 0;
  for (const auto* m : {&a, &b})
    for (const auto& [kind, fill] : *m) {
      INFO(kind);
      if (table.count(kind)) CHECK(fill == table.at(kind));
      const auto& other = m == &a ? b : a;
      if (other.count(kind)) {
        CHECK(other.at(kind) == fill);
        ++common;
      }
    }
  CHECK(common >= 16);  // 8 or more kinds in both, each seen from both sides
  CHECK(a.size() != b.size());  // two different sets of kinds: no colour comes from the order
  // Distinct colours within a page.
  for (const auto* m : {&a, &b}) {
    std::map<std::string, int> uses;
    for (const auto& [kind, fill] : *m) ++uses[fill];
    for (const auto& [fill, n] : uses) CHECK(n == 1);
  }
}

TEST_CASE("timeline race: --timeline JSON keeps to Perfetto's importer rules", "[traces][binary]") {
  nvmesim::test::TempDir d("nvmesim_tlperfetto", "");
  const std::vector<std::string> runs = {
      "--number_ios=200 --nvme.dbbuf=spec --trace-start 100us --trace-stop 600us",
      "--single-run --number_ios=200 --numjobs=2 --iodepth=16 --hv.device_thread=iothread --hv.notify=ioeventfd",
      "--single-run --number_ios=100 --device=virtio-blk --numjobs=2",
  };
  std::string files;
  for (size_t i = 0; i < runs.size(); ++i) {
    INFO(runs[i]);
    const std::string file = d / ("t" + std::to_string(i) + ".json");
    REQUIRE(run_nvmesim(runs[i] + " --timeline " + file + " >/dev/null").exit_code == 0);
    files += " " + file;
  }
  CHECK(python_check(files) == 0);
  // The check finds what Perfetto's importer refuses or drops.
  const std::string good = slurp(d / "t0.json");
  auto first = [&good](const std::string& what) { return good.find(what); };
  const std::vector<std::pair<std::string, std::string>> broken = {
      {"trailing garbage", good + "x"},
      {"unknown displayTimeUnit", std::string(good).replace(first("\"ns\""), 4, "\"us\"")},
      {"an X without dur", std::string(good).replace(first(",\"dur\":"), 6, ",\"dux\":")},
      {"a ts as a string", std::string(good).replace(first("\"ts\":"), 5, "\"ts\":\"1\",\"tx\":")},
      {"a pid as a string", std::string(good).replace(first("\"pid\":1,\"tid\":1,\"ts\""), 8, "\"pid\":\"1\",")},
      {"an unknown top-level key", std::string(good).replace(0, 1, "{\"foo\":1,")},
  };
  std::string bad = "--each-bad";
  for (size_t i = 0; i < broken.size(); ++i) {
    const std::string file = d / ("bad" + std::to_string(i) + ".json");
    std::ofstream(file) << broken[i].second;
    bad += " " + file;
  }
  CHECK(python_check(bad) == 0);
}
