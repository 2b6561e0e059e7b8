#include "nvmesim/traces/vcd_writer.h"

#include <algorithm>
#include <cstring>
#include <systemc>

namespace nvmesim::traces {

namespace {

constexpr unsigned kQueueVars = 12;  // QueueSignal values, then the 4 pulses
constexpr unsigned kSqMmio = 8, kCqMmio = 9, kSqSuppressed = 10, kCqSuppressed = 11;

const char* vcpu_state_name(VcpuState s) {
  switch (s) {
    case VcpuState::Guest: return "guest";
    case VcpuState::Exit: return "exit";
    case VcpuState::Idle: return "idle";
  }
  return "?";
}

const char* thread_state_name(ThreadState s) {
  switch (s) {
    case ThreadState::Sleeping: return "sleeping";
    case ThreadState::Working: return "working";
    case ThreadState::Polling: return "polling";
  }
  return "?";
}

// VCD identifiers: base 94 over the printable characters '!'..'~'.
std::string vcd_id(size_t n) {
  std::string s;
  do {
    s += char('!' + n % 94);
    n /= 94;
  } while (n);
  return s;
}

void put_u64(std::FILE* f, uint64_t v) {
  char b[24];
  char* p = b + sizeof b;
  *--p = 0;
  do {
    *--p = char('0' + v % 10);
    v /= 10;
  } while (v);
  std::fputs(p, f);
}

}  // namespace

VcdWriter::VcdWriter(std::FILE* out, const TraceOptions& options) : out_(out), options_(options) {}

uint32_t VcdWriter::add_var(const std::string& scope, const std::string& name, unsigned width) {
  if (!options_.selected(scope + "." + name)) return kNone;
  Var v;
  v.scope = scope;
  v.name = name;
  v.width = width;
  v.id = vcd_id(vars_.size());
  vars_.push_back(v);
  return uint32_t(vars_.size() - 1);
}

void VcdWriter::begin(unsigned vcpus, unsigned queues, unsigned host_threads) {
  vcpus_ = vcpus;
  threads_ = host_threads;
  queues_ = queues;
  holds_.reset(vcpus, host_threads);
  // Initial values: rings empty, vCPUs in guest code, host threads asleep.
  for (unsigned q = 1; q <= queues; ++q) {
    const std::string s = "q" + std::to_string(q);
    for (unsigned k = 0; k < QUEUE_SIGNAL_COUNT; ++k) {
      const auto sig = QueueSignal(k);
      const bool entry = sig == QueueSignal::ShadowSqTail || sig == QueueSignal::SqEventIdx ||
                         sig == QueueSignal::ShadowCqHead || sig == QueueSignal::CqEventIdx;
      queue_vars_.push_back(add_var(s, to_string(sig), entry ? 32 : 16));
    }
    queue_vars_.push_back(add_var(s, "sq_doorbell_mmio", 1));
    queue_vars_.push_back(add_var(s, "cq_doorbell_mmio", 1));
    queue_vars_.push_back(add_var(s, "sq_suppressed", 1));
    queue_vars_.push_back(add_var(s, "cq_suppressed", 1));
  }
  for (unsigned v = 0; v < vcpus; ++v) {
    const std::string s = "vcpu" + std::to_string(v);
    vcpu_vars_.push_back(add_var(s, "state", 2));
    vcpu_vars_.push_back(add_var(s, "state_name", 0));
    vcpu_vars_.push_back(add_var(s, "interrupt", 1));
    if (vcpu_vars_[vcpu_vars_.size() - 2] != kNone)
      vars_[vcpu_vars_[vcpu_vars_.size() - 2]].written_s = "guest";
  }
  for (unsigned h = 0; h < host_threads; ++h) {
    const std::string s = "host" + std::to_string(h);
    host_vars_.push_back(add_var(s, "state", 2));
    host_vars_.push_back(add_var(s, "state_name", 0));
    if (host_vars_.back() != kNone) vars_[host_vars_.back()].written_s = "sleeping";
  }
  for (unsigned m = 0; m <= queues; ++m) msix_vars_.push_back(add_var("msix", "vector" + std::to_string(m), 1));
  for (Var& v : vars_) v.pending_s = v.written_s;

  // Header. No $date: the same run gives the same bytes.
  put("$version nvmesim $end\n$timescale 1ps $end\n$scope module nvmesim $end\n");
  std::string open;
  for (const Var& v : vars_) {
    if (v.scope != open) {
      if (!open.empty()) put("$upscope $end\n");
      std::fprintf(out_, "$scope module %s $end\n", v.scope.c_str());
      open = v.scope;
    }
    std::fprintf(out_, "$var %s %u %s %s $end\n", v.width ? "wire" : "string", v.width ? v.width : 1,
                 v.id.c_str(), v.name.c_str());
  }
  if (!open.empty()) put("$upscope $end\n");
  put("$upscope $end\n$enddefinitions $end\n");
}

void VcdWriter::push(uint64_t t, uint32_t var, Op op, uint32_t value, const char* text) {
  if (var == kNone || stopped_) return;  // past --trace-stop: nothing more to write
  buffer_.push(Event{t, 0, var, op, value, text});
  flush_ready();
}

// Nothing is reported dated before the kernel's time except inside a hold;
// one quantum of slack on top of that.
void VcdWriter::flush_ready() {
  const uint64_t horizon =
      holds_.flush_horizon(sc_core::sc_time_stamp().value(), options_.quantum_ps);
  flush(horizon);
}

void VcdWriter::flush(uint64_t horizon) {
  buffer_.flush(horizon, [this](const Event& e) { apply(e); });
}

void VcdWriter::apply(const Event& e) {
  if (gathering_ && e.t != now_) commit();
  now_ = e.t;
  gathering_ = true;
  Var& v = vars_[e.var];
  switch (e.op) {
    case Op::Set: v.pending = e.value; break;
    case Op::SetString: v.pending_s = e.text; break;
    case Op::Pulse:
      v.pending = 1;
      buffer_.push(Event{e.t + kPulsePs, 0, e.var, Op::Set, 0, nullptr});
      break;
  }
  if (!v.dirty) {
    v.dirty = true;
    dirty_.push_back(e.var);
  }
}

// One line per value change, built in a buffer and written at once: a
// character at a time through stdio's locked calls cost more than the rest
// of a traced run.
void VcdWriter::write_value(const Var& v) {
  if (v.width == 0) {  // strings: state names, rare
    std::fprintf(out_, "s%s %s\n", v.written_s, v.id.c_str());
    return;
  }
  // "b" + 32 bits + " " + identifier + newline; an identifier (vcd_id) is
  // at most 10 characters: base 94 of a 64-bit index.
  char line[48];
  size_t n = 0;
  if (v.width == 1) {
    line[n++] = v.written ? '1' : '0';
  } else {
    char bits[32];
    int k = 0;
    uint32_t x = v.written;
    do {
      bits[k++] = char('0' + (x & 1));
      x >>= 1;
    } while (x);
    line[n++] = 'b';
    while (k) line[n++] = bits[--k];
    line[n++] = ' ';
  }
  std::memcpy(line + n, v.id.data(), v.id.size());
  n += v.id.size();
  line[n++] = '\n';
  std::fwrite(line, 1, n, out_);
}

void VcdWriter::commit() {
  const uint64_t t = now_;
  gathering_ = false;
  if (!stopped_ && t > options_.stop_ps) stopped_ = true;
  const bool visible = !stopped_ && t >= options_.start_ps;
  if (visible && !dumped_) {
    // Values as they stand at --trace-start (this time's changes included
    // when it is the start itself).
    const bool at_start = t == options_.start_ps;
    if (!at_start) {
      put("#");
      put_u64(out_, options_.start_ps);
      put("\n");
    }
    for (uint32_t i : dirty_)
      if (at_start) {
        vars_[i].written = vars_[i].pending;
        vars_[i].written_s = vars_[i].pending_s;
        vars_[i].dirty = false;
      }
    if (at_start) {
      dirty_.clear();
      put("#");
      put_u64(out_, t);
      put("\n");
    }
    put("$dumpvars\n");
    for (const Var& v : vars_) write_value(v);
    put("$end\n");
    dumped_ = true;
    if (at_start) return;
  }
  bool stamped = false;
  for (uint32_t i : dirty_) {
    Var& v = vars_[i];
    v.dirty = false;
    const bool changed = v.width ? v.pending != v.written : std::strcmp(v.pending_s, v.written_s) != 0;
    if (!changed || stopped_) continue;
    v.written = v.pending;
    v.written_s = v.pending_s;
    if (!visible) continue;  // before the window: state only
    if (!stamped) {
      put("#");
      put_u64(out_, t);
      put("\n");
      stamped = true;
    }
    write_value(v);
  }
  dirty_.clear();
}

std::vector<VcdSignal> VcdWriter::signal_list() const {
  std::vector<VcdSignal> out;
  for (const Var& v : vars_) out.push_back({v.scope, v.name, v.width});
  return out;
}

GtkwaveView VcdWriter::first_ios_view(uint64_t end_ps) const {
  const uint64_t lo = options_.start_ps, hi = std::min(end_ps, options_.stop_ps);
  GtkwaveView view;
  if (hi <= lo) return view;
  uint64_t first = first_io_ps_ == UINT64_MAX ? lo : std::clamp(first_io_ps_, lo, hi);
  uint64_t last = first_io_msix_.size() == kFirstCompletions ? first_io_msix_.back() : hi;
  last = std::clamp(last, first, hi);
  // A margin of a twentieth of the span on both sides (at least a nanosecond).
  const uint64_t margin = std::max<uint64_t>((last - first) / 20, 1000);
  view.start_ps = first - std::min(first - lo, margin);
  view.span_ps = std::min(last + margin, hi) - view.start_ps;
  return view;
}

void VcdWriter::end(uint64_t t_ps) {
  flush(UINT64_MAX);
  if (gathering_) commit();
  const uint64_t last = std::min(t_ps, options_.stop_ps);
  if (!dumped_ && last >= options_.start_ps) {
    now_ = options_.start_ps;
    commit();  // the $dumpvars of a window without changes
  }
  if (dumped_ && last > now_) {
    put("#");
    put_u64(out_, last);
    put("\n");
  }
  std::fflush(out_);
}

// ---------------------------------------------------------------- hooks
void VcdWriter::vcpu_state(unsigned vcpu, uint64_t t_ps, VcpuState state) {
  if (vcpu >= vcpus_) return;
  push(t_ps, vcpu_vars_[vcpu * 3], Op::Set, uint32_t(state));
  push(t_ps, vcpu_vars_[vcpu * 3 + 1], Op::SetString, 0, vcpu_state_name(state));
}

void VcdWriter::vm_exit(unsigned vcpu, const char* kind, uint64_t start_ps, uint64_t end_ps) {
  if (vcpu >= vcpus_) return;
  push(start_ps, vcpu_vars_[vcpu * 3], Op::Set, uint32_t(VcpuState::Exit));
  push(start_ps, vcpu_vars_[vcpu * 3 + 1], Op::SetString, 0, kind);
  push(end_ps, vcpu_vars_[vcpu * 3], Op::Set, uint32_t(VcpuState::Guest));
  push(end_ps, vcpu_vars_[vcpu * 3 + 1], Op::SetString, 0, "guest");
}

void VcdWriter::doorbell_update(uint16_t qid, bool sq, uint64_t t_ps, uint16_t, uint16_t, bool mmio, bool,
                                uint16_t) {
  if (qid == 0 || qid > queues_) return;
  if (sq) first_io_ps_ = std::min(first_io_ps_, t_ps);
  const unsigned k = mmio ? (sq ? kSqMmio : kCqMmio) : (sq ? kSqSuppressed : kCqSuppressed);
  push(t_ps, queue_vars_[(qid - 1u) * kQueueVars + k], Op::Pulse, 1);
}

void VcdWriter::queue_value(uint16_t qid, QueueSignal signal, uint64_t t_ps, uint32_t value) {
  if (qid == 0 || qid > queues_) return;
  push(t_ps, queue_vars_[(qid - 1u) * kQueueVars + unsigned(signal)], Op::Set, value);
}

void VcdWriter::thread_state(unsigned thread, uint64_t t_ps, ThreadState state) {
  if (thread >= threads_) return;
  push(t_ps, host_vars_[thread * 2], Op::Set, uint32_t(state));
  push(t_ps, host_vars_[thread * 2 + 1], Op::SetString, 0, thread_state_name(state));
}

void VcdWriter::msix(uint16_t vector, uint64_t t_ps) {
  // Events arrive nearly in order: keep the few earliest.
  if (vector > 0 && (first_io_msix_.size() < kFirstCompletions || t_ps < first_io_msix_.back())) {
    first_io_msix_.insert(std::upper_bound(first_io_msix_.begin(), first_io_msix_.end(), t_ps), t_ps);
    if (first_io_msix_.size() > kFirstCompletions) first_io_msix_.pop_back();
  }
  if (vector < msix_vars_.size()) push(t_ps, msix_vars_[vector], Op::Pulse, 1);
}

void VcdWriter::interrupt(unsigned vcpu, uint64_t t_ps) {
  if (vcpu < vcpus_) push(t_ps, vcpu_vars_[vcpu * 3 + 2], Op::Pulse, 1);
}

void VcdWriter::hold_begin(Hold hold, unsigned index, uint64_t t_ps) {
  holds_.begin(hold, index, t_ps);
}

void VcdWriter::hold_end(Hold hold, unsigned index) {
  if (holds_.end(hold, index)) flush_ready();
}

}  // namespace nvmesim::traces
