#include "nvmesim/platform/verify/report.h"

#include <cstdio>
#include <ostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "nvmesim/traces/tracer.h"
#include "nvmesim/traces/vcd_writer.h"

namespace nvmesim::platform::verify {

namespace {

std::string seconds_text(double s) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f s", s);
  return b;
}

std::string interrupted_text(const ReportOptions& o) { return "INTERRUPTED by " + o.interrupted_by; }

// A search a signal ended stored `states` but expanded only some: no
// violation among the expanded ones' steps, no verdict on the rest.
std::string outcome(const Checked& r, const ReportOptions& o) {
  std::ostringstream s;
  if (!r.searched) {
    s << "not searched (" << interrupted_text(o) << ")";
  } else if (r.result.interrupted) {
    s << interrupted_text(o) << " after " << r.result.states << " states (" << r.result.expanded
      << " of them expanded): no violation among them; the search is incomplete";
    if (o.show_time) s << " (" << seconds_text(r.seconds) << ")";
  } else if (r.result.property == Property::None) {
    s << (r.result.truncated ? "no violation in the first " : "no violation in ") << r.result.states
      << " states";
    if (r.result.truncated) s << " (" << o.truncated_note << ")";
    if (o.show_time) s << " (" << seconds_text(r.seconds) << ")";
  } else {
    s << "violation: " << to_string(r.result.property) << " after " << r.result.steps.size() << " steps ("
      << r.result.states << " states";
    if (o.show_time) s << ", " << seconds_text(r.seconds);
    s << ")";
  }
  return s.str();
}

void counterexample_text(std::ostream& out, const Checked& r) {
  const size_t width = std::to_string(r.result.steps.size()).size();
  for (size_t i = 0; i < r.result.steps.size(); ++i) {
    std::string n = std::to_string(i + 1);
    out << "  " << std::string(width - n.size(), ' ') << n << ". " << r.result.steps[i].text << '\n';
  }
  out << "  " << r.result.why << '\n';
}

}  // namespace

void write_text(std::ostream& out, const std::vector<Checked>& runs, const ReportOptions& o, double seconds) {
  if (runs.size() == 1) {
    const Checked& r = runs[0];
    out << outcome(r, o) << '\n';
    if (r.result.property != Property::None) counterexample_text(out, r);
    return;
  }
  uint64_t states = 0;
  unsigned violations = 0, complete = 0;
  bool truncated = false;
  for (const Checked& r : runs) {
    out << r.label << ": " << outcome(r, o) << '\n';
    if (r.result.property != Property::None) {
      counterexample_text(out, r);
      ++violations;
    }
    states += r.result.states;
    truncated = truncated || r.result.truncated;
    complete += r.searched && !r.result.interrupted;
  }
  if (complete < runs.size()) {  // a signal: what was searched, and no verdict on the rest
    out << interrupted_text(o) << ": " << complete << " of " << runs.size() << " combinations searched, "
        << violations << " violate, " << states << " states";
    if (o.show_time) out << " (" << seconds_text(seconds) << ")";
    out << "; the search is incomplete\n";
  } else if (violations == 0) {
    out << (truncated ? "no violation in the first " : "no violation in ") << states << " states";
    if (o.show_time) out << " (" << seconds_text(seconds) << ")";
    out << ", " << runs.size() << " combinations\n";
  } else {
    out << violations << " of " << runs.size() << " combinations violate";
    if (o.show_time) out << " (" << seconds_text(seconds) << ")";
    out << '\n';
  }
}

void write_json(std::ostream& out, const std::vector<Checked>& runs, const ReportOptions& o, double seconds) {
  nlohmann::ordered_json doc;
  uint64_t states = 0;
  unsigned violations = 0;
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const Checked& r : runs) {
    nlohmann::ordered_json j;
    nlohmann::ordered_json settings = nlohmann::ordered_json::object();
    for (const auto& kv : r.settings) settings[kv.first] = kv.second;
    j["settings"] = settings;
    j["result"] = !r.searched                            ? "not searched"
                  : r.result.property != Property::None ? "violation"
                  : r.result.interrupted                ? "interrupted"
                                                        : "ok";
    j["states"] = r.result.states;
    if (r.result.interrupted) j["expanded"] = r.result.expanded;
    j["transitions"] = r.result.transitions;
    j["truncated"] = r.result.truncated;
    if (o.show_time) j["seconds"] = r.seconds;
    if (r.result.property != Property::None) {
      j["property"] = to_string(r.result.property);
      j["why"] = r.result.why;
      nlohmann::ordered_json steps = nlohmann::ordered_json::array();
      for (size_t i = 0; i < r.result.steps.size(); ++i) {
        const std::string& t = r.result.steps[i].text;
        const size_t colon = t.find(':');
        steps.push_back({{"step", i + 1}, {"actor", t.substr(0, colon)}, {"access", t.substr(colon + 2)}});
      }
      j["steps"] = steps;
      ++violations;
    }
    states += r.result.states;
    list.push_back(j);
  }
  doc["combinations"] = list;
  doc["states"] = states;
  doc["violations"] = violations;
  if (!o.interrupted_by.empty()) {  // the search is incomplete: no verdict on what it did not reach
    doc["interrupted"] = o.interrupted_by;
    doc["complete"] = false;
  }
  if (o.show_time) doc["seconds"] = seconds;
  out << doc.dump(2) << '\n';
}

void write_trace(traces::Tracer& vcd, const Checked& run) {
  using traces::QueueSignal;
  vcd.begin(1, 1, 1);
  constexpr uint64_t kStepPs = 10000;  // 10 ns per step: one access each
  const std::vector<State>& path = run.result.path;
  auto values = [&](uint64_t t, const State& s) {
    const unsigned outstanding = unsigned(s.next_seq - s.expect_seq);
    vcd.queue_value(1, QueueSignal::DriverSqTail, t, s.sq_tail);
    vcd.queue_value(1, QueueSignal::ShadowSqTail, t, s.shadow_sq);
    vcd.queue_value(1, QueueSignal::SqEventIdx, t, s.eventidx_sq);
    vcd.queue_value(1, QueueSignal::DeviceSqHead, t, s.dev_sq_head);
    vcd.queue_value(1, QueueSignal::DriverCqHead, t, s.cq_head);
    vcd.queue_value(1, QueueSignal::ShadowCqHead, t, s.shadow_cq);
    vcd.queue_value(1, QueueSignal::CqEventIdx, t, s.eventidx_cq);
    vcd.queue_value(1, QueueSignal::Outstanding, t, outstanding);
    vcd.thread_state(0, t, device_busy(s) ? traces::ThreadState::Working : traces::ThreadState::Sleeping);
  };
  if (!path.empty()) values(0, path[0]);
  for (size_t i = 0; i < run.result.steps.size() && i + 1 < path.size(); ++i) {
    const uint64_t t = (i + 1) * kStepPs;
    const Step& st = run.result.steps[i];
    values(t, path[i + 1]);
    // The driver's publish holds its new and old values (and, once decided,
    // the EventIdx) until the doorbell write; a suppressed one is cleared at
    // its EventIdx load, which reads the entry in memory (model.cpp).
    const fw::DbbufPublish& held = path[i].publish;
    switch (st.kind) {
      case StepKind::MmioDoorbell:
        vcd.doorbell_update(1, st.sq, t, st.arg, held.old_value(), true, true, held.eventidx());
        break;
      case StepKind::LoadEventIdx:
        if (st.arg == 0)  // suppressed
          vcd.doorbell_update(1, st.sq, t, held.new_value(), held.old_value(), false, true,
                              uint16_t(st.sq ? path[i].eventidx_sq : path[i].eventidx_cq));
        break;
      case StepKind::DevMsix: vcd.msix(1, t); break;
      case StepKind::TakeInterrupt: vcd.interrupt(0, t); break;
      default: break;
    }
  }
  vcd.end((run.result.steps.size() + 1) * kStepPs);
}

uint64_t trace_end_ps(const Checked& run) { return (run.result.steps.size() + 1) * 10000; }

}  // namespace nvmesim::platform::verify
