// verify's output: the result of each checked combination as text or JSON,
// and a counterexample as a VCD with the simulator's signal names
// (traces/vcd_writer.h, so it opens with traces/nvmesim.gtkw).
#pragma once

#include "nvmesim/traces/tracer.h"

#include <cstdio>
#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

#include "nvmesim/platform/verify/search.h"

namespace nvmesim::platform::verify {

struct Checked {
  std::vector<std::pair<std::string, std::string>> settings;  // every parameter, as given
  std::string label;  // the settings that vary between combinations ("" for one)
  ModelConfig config;
  SearchResult result;
  double seconds = 0;
  bool searched = true;  // false: a signal ended the command before its search began
};

struct ReportOptions {
  bool json = false;
  bool show_time = true;
  std::string vcd_path;  // written by the caller
  std::string truncated_note = "stopped at --max-states";  // why a search stopped
  std::string interrupted_by;  // "SIGINT", "SIGTERM", "SIGHUP": a signal ended the command ("" none)
};

void write_text(std::ostream& out, const std::vector<Checked>& runs, const ReportOptions& o, double seconds);
void write_json(std::ostream& out, const std::vector<Checked>& runs, const ReportOptions& o, double seconds);
// The counterexample's steps at 10 ns each, as the simulator's q1, vcpu0,
// host0 and msix.vector1 signals.
// The counterexample through a trace writer (traces::VcdWriter or
// TimelineWriter), one access per 10 ns, with the simulator's signal names.
void write_trace(traces::Tracer& tracer, const Checked& run);
uint64_t trace_end_ps(const Checked& run);

}  // namespace nvmesim::platform::verify
