// --vcd X.vcd also writes X.gtkw: every signal it lists resolves in GTKWave
// (checked by GTKWave itself under Xvfb, through its Tcl interface), and the
// view opens on the first I/Os.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "run_binary.h"
#include "nvmesim/traces/gtkwave_save.h"
#include "text_file.h"

using nvmesim::test::slurp;

using nvmesim::test::run_nvmesim;
using namespace nvmesim::traces;

namespace {

std::string scratch(const std::string& name) {
  return "/tmp/nvmesim_gtkw_" + std::to_string(::getpid()) + "_" + name;
}

std::vector<std::string> lines_starting(const std::string& text, const std::string& prefix) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(prefix, 0) == 0) out.push_back(line);
  return out;
}

// The VCD's variables as GTKWave names them: nvmesim.<scope>.<name>, with
// [w-1:0] for a vector.
std::vector<std::string> vcd_signal_names(const std::string& vcd) {
  std::vector<std::string> out, scopes;
  std::istringstream in(vcd);
  for (std::string line; std::getline(in, line);) {
    std::istringstream w(line);
    std::string a, b, c, d, e;
    w >> a;
    if (a == "$scope") {
      w >> b >> c;
      scopes.push_back(c);
    } else if (a == "$upscope") {
      scopes.pop_back();
    } else if (a == "$var") {
      w >> b >> c >> d >> e;
      std::string n;
      for (const std::string& s : scopes) n += s + ".";
      n += e;
      if (b == "wire" && std::stoi(c) > 1) n += "[" + std::to_string(std::stoi(c) - 1) + ":0]";
      out.push_back(n);
    } else if (a == "$enddefinitions") {
      break;
    }
  }
  return out;
}

// Times (ps) at which the named 1-bit VCD variable pulses to 1.
std::vector<uint64_t> pulses(const std::string& vcd, const std::string& scope, const std::string& name) {
  std::string id, open;
  std::istringstream in(vcd);
  std::vector<uint64_t> out;
  uint64_t t = 0;
  bool defs = true;
  for (std::string line; std::getline(in, line);) {
    if (defs) {
      std::istringstream w(line);
      std::string a, b, c, d, e;
      w >> a >> b >> c >> d >> e;
      if (a == "$scope") open = c;
      if (a == "$var" && open == scope && e == name) id = d;
      if (a == "$enddefinitions") defs = false;
      continue;
    }
    if (!line.empty() && line[0] == '#') t = std::stoull(line.substr(1));
    else if (line == "1" + id) out.push_back(t);
  }
  return out;
}

struct GtkwaveWindow {
  std::vector<std::string> displayed;
  uint64_t start = 0, end = 0;
  bool ran = false;
};

// Loads the VCD with its save file in GTKWave on a virtual X server and asks
// it, through its Tcl interface, which signals it displays and the window.
GtkwaveWindow ask_gtkwave(const std::string& vcd, const std::string& gtkw) {
  const std::string tcl = scratch("probe.tcl"), log = scratch("probe.log");
  {
    std::ofstream t(tcl);
    t << "puts \"DISPLAYED [gtkwave::getDisplayedSignals]\"\n"
         "puts \"WINDOW [gtkwave::getWindowStartTime] [gtkwave::getWindowEndTime]\"\n"
         "gtkwave::/File/Quit\n";
  }
  const std::string cmd = "timeout 120 xvfb-run -a -s '-screen 0 1400x900x24' gtkwave -S " + tcl + " " + vcd +
                          " " + gtkw + " > " + log + " 2>&1";
  GtkwaveWindow v;
  v.ran = std::system(cmd.c_str()) == 0;
  for (const std::string& line : lines_starting(slurp(log), "DISPLAYED ")) {
    std::istringstream w(line.substr(10));
    for (std::string s; w >> s;) v.displayed.push_back(s);
  }
  for (const std::string& line : lines_starting(slurp(log), "WINDOW ")) {
    std::istringstream w(line.substr(7));
    w >> v.start >> v.end;
  }
  std::remove(tcl.c_str());
  std::remove(log.c_str());
  return v;
}

}  // namespace

TEST_CASE("gtkwave save file: vectors carry their range, groups per queue, zoom from the span", "[traces]") {
  const std::vector<VcdSignal> signals = {{"q1", "driver_sq_tail", 16}, {"q1", "sq_eventidx", 32},
                                          {"q1", "sq_doorbell_mmio", 1}, {"vcpu0", "state", 2},
                                          {"vcpu0", "state_name", 0},     {"msix", "vector0", 1},
                                          {"msix", "vector1", 1}};
  const std::string text = gtkwave_save_file(signals, "r.vcd", {80'000'000, 160'000'000});
  CHECK(lines_starting(text, "nvmesim.") ==
        std::vector<std::string>{"nvmesim.q1.driver_sq_tail[15:0]", "nvmesim.q1.sq_eventidx[31:0]",
                                 "nvmesim.q1.sq_doorbell_mmio", "nvmesim.msix.vector1",
                                 "nvmesim.vcpu0.state[1:0]", "nvmesim.vcpu0.state_name",
                                 "nvmesim.msix.vector0"});
  CHECK(lines_starting(text, "-") == std::vector<std::string>{"-q1", "-q1", "-vcpu0", "-vcpu0", "-admin queue",
                                                              "-admin queue"});
  CHECK(lines_starting(text, "[dumpfile]") == std::vector<std::string>{"[dumpfile] \"r.vcd\""});
  CHECK(lines_starting(text, "[timestart]") == std::vector<std::string>{"[timestart] 80000000"});
  // 160 us over 4.2 * 2^-z: z = -log2(160e6 / 4.2) = -25.183...
  CHECK(gtkwave_zoom(160'000'000) == Approx(-std::log2(160e6 / 4.2)));
  CHECK(lines_starting(text, "*-25.183") .size() == 1);
  CHECK(gtkwave_save_path("a/run.vcd") == "a/run.gtkw");
  CHECK(gtkwave_save_path("run.dump") == "run.dump.gtkw");
}

TEST_CASE("gtkwave save file: beside the VCD, every listed signal resolves in GTKWave, the view opens on the first I/Os",
          "[traces]") {
  for (const std::string jobs : {"1", "2"}) {
    INFO("numjobs " << jobs);
    const std::string vcd = scratch("run" + jobs + ".vcd"), gtkw = scratch("run" + jobs + ".gtkw");
    const auto r = run_nvmesim("--nvme.dbbuf=spec --numjobs=" + jobs + " --number_ios=500 --vcd " + vcd);
    REQUIRE(r.exit_code == 0);
    const std::string save = slurp(gtkw), dump = slurp(vcd);
    REQUIRE(!save.empty());
    // Every VCD variable is listed, each exactly as GTKWave names it.
    std::vector<std::string> listed = lines_starting(save, "nvmesim."), names = vcd_signal_names(dump);
    std::sort(listed.begin(), listed.end());
    std::sort(names.begin(), names.end());
    CHECK(listed == names);
    CHECK(names.size() == (jobs == "1" ? 19u : 35u));

    // The window starts before the first I/O queue doorbell update and ends
    // after the second I/O interrupt's MSI-X message (of any queue).
    std::vector<uint64_t> updates, msix;
    for (unsigned q = 1; q <= std::stoul(jobs); ++q) {
      const std::string s = "q" + std::to_string(q);
      for (const char* n : {"sq_doorbell_mmio", "sq_suppressed"})
        for (uint64_t t : pulses(dump, s, n)) updates.push_back(t);
      for (uint64_t t : pulses(dump, "msix", "vector" + std::to_string(q))) msix.push_back(t);
    }
    std::sort(updates.begin(), updates.end());
    std::sort(msix.begin(), msix.end());
    REQUIRE(updates.size() > 0);
    REQUIRE(msix.size() >= 2);
    const uint64_t start = std::stoull(lines_starting(save, "[timestart] ").at(0).substr(12));
    const double zoom = std::stod(lines_starting(save, "*").at(0).substr(1));
    const double span = kGtkwaveZoomSpan * std::pow(2.0, -zoom);
    CHECK(start < updates.front());
    CHECK(updates.front() - start < span / 10);  // the first I/Os, not bring-up
    CHECK(start + span > msix[1]);

    // GTKWave itself: every listed signal is displayed (none dropped), and
    // the window is the one asked for.
    const GtkwaveWindow v = ask_gtkwave(vcd, gtkw);
    REQUIRE(v.ran);
    CHECK(v.displayed == lines_starting(save, "nvmesim."));
    // (GTKWave aligns the left edge to its time grid: within a pixel.)
    CHECK(double(v.start) == Approx(start).margin(span / 800));
    CHECK(double(v.end - v.start) == Approx(span).epsilon(0.02));
    std::remove(vcd.c_str());
    std::remove(gtkw.c_str());
  }
}
