#include "nvmesim/traces/tracer.h"

namespace nvmesim::traces {

Tracer* g_active_tracer = nullptr;

const char* to_string(QueueSignal s) {
  switch (s) {
    case QueueSignal::DriverSqTail: return "driver_sq_tail";
    case QueueSignal::ShadowSqTail: return "shadow_sq_tail";
    case QueueSignal::SqEventIdx: return "sq_eventidx";
    case QueueSignal::DeviceSqHead: return "device_sq_head";
    case QueueSignal::DriverCqHead: return "driver_cq_head";
    case QueueSignal::ShadowCqHead: return "shadow_cq_head";
    case QueueSignal::CqEventIdx: return "cq_eventidx";
    case QueueSignal::Outstanding: return "outstanding";
  }
  return "?";
}

// Iterative glob with backtracking to the last '*': linear in practice.
bool glob_match(const char* p, const char* n) {
  const char* star = nullptr;
  const char* resume = nullptr;
  while (*n) {
    if (*p == '*') {
      star = p++;
      resume = n;
    } else if (*p == '?' || *p == *n) {
      ++p;
      ++n;
    } else if (star) {
      p = star + 1;
      n = ++resume;
    } else {
      return false;
    }
  }
  while (*p == '*') ++p;
  return *p == 0;
}

bool TraceOptions::selected(const std::string& name) const {
  if (signals.empty()) return true;
  if (matched_.size() != signals.size()) matched_.assign(signals.size(), false);
  bool any = false;
  for (size_t i = 0; i < signals.size(); ++i)
    if (glob_match(signals[i].c_str(), name.c_str())) any = matched_[i] = true;
  return any;
}

std::string TraceOptions::unmatched() const {
  for (size_t i = 0; i < signals.size(); ++i)
    if (i >= matched_.size() || !matched_[i]) return signals[i];
  return "";
}

}  // namespace nvmesim::traces
