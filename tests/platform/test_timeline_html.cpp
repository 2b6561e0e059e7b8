// nvmesim timeline-html: a --timeline file as one self-contained HTML page
// (no network): well-formed, every track and every I/O in it, nothing loaded
// from elsewhere.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <set>
#include <string>
#include <unistd.h>

#include "run_binary.h"
#include "text_file.h"

using nvmesim::test::slurp;

using nvmesim::test::run_nvmesim;

namespace {

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("timeline-html: every track and I/O of the timeline in one self-contained page", "[traces][binary]") {
  const std::string base = "/tmp/nvmesim_tlhtml_" + std::to_string(::getpid());
  const std::string json = base + ".json", html = base + ".html";
  REQUIRE(run_nvmesim("--nvme.dbbuf=spec --number_ios=60 --iodepth=4 --numjobs=2 --timeline " + json).exit_code == 0);
  const auto r = run_nvmesim("timeline-html " + json + " " + html);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.empty());
  const std::string page = slurp(html);
  const std::string trace = slurp(json);
  // Well-formed (XHTML: an XML parser reads it whole).
  CHECK(std::system(("python3 -c \"import xml.dom.minidom,sys; xml.dom.minidom.parse(sys.argv[1])\" " + html).c_str()) == 0);
  // Every I/O the timeline holds (its async begin events) is a bar: 2 jobs x 60.
  CHECK(count(trace, "\"ph\":\"b\"") == 120);
  CHECK(count(page, "<rect class=\"io\"") == 120);
  CHECK(page.find("<h3>nvmesim timeline " + json + ": 120 I/Os, ") != std::string::npos);
  // Every track, and each queue's I/Os one row per command tag (iodepth 4).
  for (const std::string track : {"vcpu0", "vcpu1", "host0", "q1", "q2", "q1 tag 0", "q1 tag 3", "q2 tag 0", "q2 tag 3"}) {
    INFO(track);
    CHECK(count(page, "data-name=\"" + track + "\"") == 1);
  }
  CHECK(count(page, "data-name=\"q1 tag 4\"") == 0);
  // Nothing from elsewhere: no src/href/url(), only the two namespace names.
  CHECK(page.find("src=") == std::string::npos);
  CHECK(page.find("href") == std::string::npos);
  CHECK(page.find("url(") == std::string::npos);
  CHECK(count(page, "http") == 2);
  // Each name of the legend has a colour of its own (a shared colour made
  // idle and a doorbell write look alike), idle a light grey.
  std::set<std::string> fills;
  size_t legend_names = 0;
  for (size_t at = page.find("<rect class=\"legend\""); at != std::string::npos;
       at = page.find("<rect class=\"legend\"", at + 1)) {
    const size_t f = page.find("fill=\"", at) + 6;
    fills.insert(page.substr(f, page.find('"', f) - f));
    ++legend_names;
  }
  CHECK(legend_names >= 10);
  CHECK(fills.size() == legend_names);
  CHECK(fills.count("#dcdcdc") == 1);
  // Deterministic: the same timeline gives the same page.
  REQUIRE(run_nvmesim("timeline-html " + json + " " + html + "2").exit_code == 0);
  CHECK(slurp(html + "2") == page);
  std::remove(json.c_str());
  std::remove(html.c_str());
  std::remove((html + "2").c_str());
}

TEST_CASE("timeline-html: bad input is a one-line error, exit 2", "[traces][binary]") {
  const std::string bad = "/tmp/nvmesim_tlhtml_bad_" + std::to_string(::getpid()) + ".json";
  std::ofstream(bad) << "{\"x\": 1}";
  nvmesim::test::check_refused("timeline-html " + bad + " /tmp/nvmesim_tlhtml_never.html",
                               "nvmesim timeline-html: error: " + bad +
                                   ": no \"traceEvents\" array (a file written by --timeline is expected)");
  nvmesim::test::check_refused("timeline-html " + bad,
                               "nvmesim timeline-html: error: needs IN.json and OUT.html (see 'nvmesim timeline-html --help')");
  std::remove(bad.c_str());
}
