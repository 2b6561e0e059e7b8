#include "nvmesim/traces/timeline_writer.h"

#include <algorithm>
#include <cstring>
#include <systemc>

namespace nvmesim::traces {

namespace {

enum ArgsKind : uint8_t { kNoArgs, kIoArgs, kBurstArgs, kDoorbellShadow, kDoorbellDirect, kMsixArgs };

// One event's line, built in a fixed buffer and written at once. Appending
// to a std::string piece by piece cost more than the rest of a traced run;
// literals here carry their length. A line is a few hundred bytes at most
// (names are ours); a longer one is written in parts, in order.
class Line {
 public:
  explicit Line(std::FILE* out) : out_(out) {}
  template <size_t N>
  Line& operator+=(const char (&literal)[N]) {
    return append(literal, N - 1);
  }
  Line& operator+=(char c) { return append(&c, 1); }
  Line& append(const char* p, size_t n) {
    if (n_ + n > sizeof b_) {
      write_out();
      if (n > sizeof b_) {
        std::fwrite(p, 1, n, out_);
        return *this;
      }
    }
    std::memcpy(b_ + n_, p, n);
    n_ += n;
    return *this;
  }
  Line& str(const char* p) { return append(p, std::strlen(p)); }
  void write_out() {
    std::fwrite(b_, 1, n_, out_);
    n_ = 0;
  }

 private:
  std::FILE* out_;
  size_t n_ = 0;
  char b_[512];
};

void append_u64(Line& s, uint64_t v) {
  char b[24];
  char* p = b + sizeof b;
  do {
    *--p = char('0' + v % 10);
    v /= 10;
  } while (v);
  s.append(p, size_t(b + sizeof b - p));
}

// Picoseconds as microseconds with six decimals: exact, no rounding.
void append_us(Line& s, uint64_t ps) {
  append_u64(s, ps / 1000000);
  char f[8];
  uint64_t r = ps % 1000000;
  for (int i = 6; i >= 1; --i) {
    f[i] = char('0' + r % 10);
    r /= 10;
  }
  f[0] = '.';
  s.append(f, 7);
}

// Names here are ours (no quotes or backslashes to escape).
template <size_t N>
void append_str(Line& s, const char (&key)[N], const char* value) {
  s += '"';
  s += key;
  s += "\":\"";
  s.str(value);
  s += '"';
}

}  // namespace

TimelineWriter::TimelineWriter(std::FILE* out, const TraceOptions& options)
    : out_(out), options_(options) {}

void TimelineWriter::metadata(uint32_t tid, const char* what, const std::string& name, unsigned sort) {
  std::fprintf(out_, "%s{\"ph\":\"M\",\"name\":\"%s\",\"pid\":1,\"tid\":%u,\"args\":{\"name\":\"%s\"}}",
               first_ ? "\n" : ",\n", what, tid, name.c_str());
  first_ = false;
  if (tid)
    std::fprintf(out_, ",\n{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":1,\"tid\":%u,"
                       "\"args\":{\"sort_index\":%u}}", tid, sort);
}

void TimelineWriter::begin(unsigned vcpus, unsigned queues, unsigned host_threads) {
  vcpus_ = vcpus;
  threads_ = host_threads;
  queues_ = queues;
  holds_.reset(vcpus, host_threads);
  sel_.assign(1 + vcpus + host_threads + queues, 0);
  names_.reserve(2 * queues);
  auto pick = [&](const std::string& track, const char* what, uint16_t bit) {
    return options_.selected(track + "." + what) ? bit : uint16_t(0);
  };
  std::fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", out_);
  metadata(0, "process_name", "nvmesim", 0);
  for (unsigned v = 0; v < vcpus; ++v) {
    const std::string n = "vcpu" + std::to_string(v);
    sel_[vcpu_tid(v)] = pick(n, "exit", kExit) | pick(n, "idle", kIdle) | pick(n, "interrupt", kIrq);
    metadata(vcpu_tid(v), "thread_name", n, vcpu_tid(v));
  }
  for (unsigned h = 0; h < host_threads; ++h) {
    const std::string n = "host" + std::to_string(h);
    sel_[host_tid(h)] = pick(n, "burst", kBurst) | pick(n, "working", kWorking) | pick(n, "polling", kPolling);
    metadata(host_tid(h), "thread_name", n, host_tid(h));
  }
  for (unsigned q = 1; q <= queues; ++q) {
    const std::string n = "q" + std::to_string(q);
    sel_[queue_tid(q)] = pick(n, "io", kIo) | pick(n, "sq_doorbell_mmio", kSqMmio) |
                         pick(n, "cq_doorbell_mmio", kCqMmio) | pick(n, "sq_suppressed", kSqSupp) |
                         pick(n, "cq_suppressed", kCqSupp) | pick(n, "msix", kMsix);
    names_.push_back(n + " read");
    names_.push_back(n + " write");
    metadata(queue_tid(q), "thread_name", n, queue_tid(q));
  }
}

void TimelineWriter::push(Event e) {
  if (stopped_) return;  // past --trace-stop: spans are closed, nothing more to write
  buffer_.push(e);
  flush_ready();
}

void TimelineWriter::flush_ready() {
  const uint64_t horizon =
      holds_.flush_horizon(sc_core::sc_time_stamp().value(), options_.quantum_ps);
  flush(horizon);
}

void TimelineWriter::flush(uint64_t horizon) {
  buffer_.flush(horizon, [this](const Event& e) { emit(e); });
}

void TimelineWriter::write(const Event& e, Ph ph, uint64_t ts, uint64_t dur) {
  static const char* const kPh[] = {"X", "B", "E", "b", "e", "i"};
  Line s(out_);
  if (first_) s += "\n{";
  else s += ",\n{";
  first_ = false;
  append_str(s, "ph", kPh[unsigned(ph)]);
  s += ',';
  append_str(s, "name", e.name);
  s += ',';
  append_str(s, "cat", e.cat);
  s += ",\"pid\":1,\"tid\":";
  append_u64(s, e.tid);
  s += ",\"ts\":";
  append_us(s, ts);
  if (ph == Ph::Complete) {
    s += ",\"dur\":";
    append_us(s, dur);
  }
  if (ph == Ph::AsyncBegin || ph == Ph::AsyncEnd) {
    s += ",\"id\":\"0x";
    char b[20];
    s.append(b, size_t(std::snprintf(b, sizeof b, "%llx", static_cast<unsigned long long>(e.id))));
    s += '"';
  }
  if (ph == Ph::Instant) s += ",\"s\":\"t\"";
  if (ph != Ph::End && ph != Ph::AsyncEnd) {
    switch (e.args) {
      case kIoArgs:
        s += ",\"args\":{\"qid\":";
        append_u64(s, e.a1);
        s += ",\"tag\":";
        append_u64(s, e.a0);
        s += '}';
        break;
      case kBurstArgs:
        s += ",\"args\":{\"commands\":";
        append_u64(s, e.a0);
        s += ",\"completions\":";
        append_u64(s, e.a1);
        s += '}';
        break;
      case kDoorbellShadow:
      case kDoorbellDirect:
        s += ",\"args\":{\"value\":";
        append_u64(s, e.a0);
        if (e.args == kDoorbellShadow) {
          s += ",\"eventidx\":";
          append_u64(s, e.a1);
        }
        s += '}';
        break;
      case kMsixArgs:
        s += ",\"args\":{\"vector\":";
        append_u64(s, e.a0);
        s += '}';
        break;
      default: break;
    }
  }
  s += '}';
  s.write_out();
}

// Passing --trace-start opens the spans already running; passing
// --trace-stop closes the ones still open, so every span is balanced.
void TimelineWriter::cross(uint64_t t) {
  if (!started_ && t >= options_.start_ps) {
    started_ = true;
    std::vector<Open*> spans;
    for (auto& [key, o] : open_) spans.push_back(&o);
    std::sort(spans.begin(), spans.end(), [](const Open* a, const Open* b) { return a->begin.seq < b->begin.seq; });
    for (Open* o : spans) {
      write(o->begin, o->begin.ph, options_.start_ps, 0);
      o->written = true;
    }
  }
  if (!stopped_ && t > options_.stop_ps) {
    stopped_ = true;
    std::vector<Open*> spans;
    for (auto& [key, o] : open_)
      if (o.written) spans.push_back(&o);
    std::sort(spans.begin(), spans.end(), [](const Open* a, const Open* b) { return a->begin.seq > b->begin.seq; });
    for (Open* o : spans)
      write(o->begin, o->begin.ph == Ph::Begin ? Ph::End : Ph::AsyncEnd, options_.stop_ps, 0);
    open_.clear();
  }
}

void TimelineWriter::emit(const Event& e) {
  cross(e.t);
  const bool inside = started_ && !stopped_;
  switch (e.ph) {
    case Ph::Complete: {
      const uint64_t s = std::max(e.t, options_.start_ps);
      const uint64_t f = std::min(e.t + e.dur, options_.stop_ps);
      if (!stopped_ && e.t + e.dur >= options_.start_ps && s <= f) write(e, Ph::Complete, s, f - s);
      break;
    }
    case Ph::Begin:
    case Ph::AsyncBegin: {
      if (stopped_) break;
      const uint64_t key = e.ph == Ph::Begin ? e.id : e.id | (1ull << 63);
      auto it = open_.find(key);
      if (it != open_.end() && std::strcmp(it->second.begin.name, e.name) == 0) break;  // goes on
      if (it != open_.end() && it->second.written)  // a new state: the old one ends
        write(it->second.begin, e.ph == Ph::Begin ? Ph::End : Ph::AsyncEnd, e.t, 0);
      open_[key] = Open{e, inside};
      if (inside) write(e, e.ph, e.t, 0);
      break;
    }
    case Ph::End:
    case Ph::AsyncEnd: {
      const uint64_t key = e.ph == Ph::End ? e.id : e.id | (1ull << 63);
      auto it = open_.find(key);
      if (it == open_.end()) break;
      if (it->second.written && !stopped_) write(it->second.begin, e.ph, e.t, 0);
      open_.erase(it);
      break;
    }
    case Ph::Instant:
      if (inside) write(e, Ph::Instant, e.t, 0);
      break;
  }
}

void TimelineWriter::end(uint64_t t_ps) {
  flush(UINT64_MAX);
  cross(t_ps);
  // Spans still open when the run ends (a vCPU asleep at the last event).
  std::vector<Open*> spans;
  for (auto& [key, o] : open_)
    if (o.written) spans.push_back(&o);
  std::sort(spans.begin(), spans.end(), [](const Open* a, const Open* b) { return a->begin.seq > b->begin.seq; });
  const uint64_t last = std::max(std::min(t_ps, options_.stop_ps), buffer_.emitted());
  for (Open* o : spans) write(o->begin, o->begin.ph == Ph::Begin ? Ph::End : Ph::AsyncEnd, last, 0);
  open_.clear();
  std::fputs("\n]}\n", out_);
  std::fflush(out_);
}

// ---------------------------------------------------------------- hooks
void TimelineWriter::vcpu_state(unsigned vcpu, uint64_t t_ps, VcpuState state) {
  const uint32_t tid = vcpu_tid(vcpu);
  if (vcpu >= vcpus_ || !on(tid, kIdle) || state == VcpuState::Exit) return;
  push(Event{t_ps, 0, state == VcpuState::Idle ? Ph::Begin : Ph::End, tid, "idle", "idle", 0, tid,
             0, 0, kNoArgs});
}

void TimelineWriter::vm_exit(unsigned vcpu, const char* kind, uint64_t start_ps, uint64_t end_ps) {
  const uint32_t tid = vcpu_tid(vcpu);
  if (vcpu >= vcpus_ || !on(tid, kExit)) return;
  push(Event{start_ps, 0, Ph::Complete, tid, kind, "exit", end_ps - start_ps, 0, 0, 0, kNoArgs});
}

void TimelineWriter::io_start(uint16_t qid, uint32_t tag, bool write, uint64_t t_ps) {
  if (qid == 0 || qid > queues_ || !on(queue_tid(qid), kIo)) return;
  push(Event{t_ps, 0, Ph::AsyncBegin, queue_tid(qid), names_[(qid - 1u) * 2 + write].c_str(), "io", 0,
             (uint64_t(qid) << 16) | tag, tag, qid, kIoArgs});
}

void TimelineWriter::io(uint16_t qid, uint32_t tag, bool write, uint64_t, uint64_t end_ps) {
  if (qid == 0 || qid > queues_ || !on(queue_tid(qid), kIo)) return;
  push(Event{end_ps, 0, Ph::AsyncEnd, queue_tid(qid), names_[(qid - 1u) * 2 + write].c_str(), "io", 0,
             (uint64_t(qid) << 16) | tag, tag, qid, kNoArgs});
}

void TimelineWriter::doorbell_update(uint16_t qid, bool sq, uint64_t t_ps, uint16_t value, bool mmio,
                                     bool via_shadow, uint16_t eventidx) {
  if (qid == 0 || qid > queues_) return;
  const uint16_t bit = mmio ? (sq ? kSqMmio : kCqMmio) : (sq ? kSqSupp : kCqSupp);
  if (!on(queue_tid(qid), bit)) return;
  const char* name = mmio ? (sq ? "sq_doorbell_mmio" : "cq_doorbell_mmio")
                          : (sq ? "sq_suppressed" : "cq_suppressed");
  push(Event{t_ps, 0, Ph::Instant, queue_tid(qid), name, "doorbell", 0, 0, value, eventidx,
             uint8_t(via_shadow ? kDoorbellShadow : kDoorbellDirect)});
}

// One B/E span per working or polling period; a new state ends the last.
void TimelineWriter::thread_state(unsigned thread, uint64_t t_ps, ThreadState state) {
  const uint32_t tid = host_tid(thread);
  if (thread >= threads_) return;
  if (state == ThreadState::Sleeping || !on(tid, state == ThreadState::Working ? kWorking : kPolling)) {
    push(Event{t_ps, 0, Ph::End, tid, "", "host", 0, tid, 0, 0, kNoArgs});
    return;
  }
  push(Event{t_ps, 0, Ph::Begin, tid, state == ThreadState::Working ? "working" : "polling", "host", 0,
             tid, 0, 0, kNoArgs});
}

void TimelineWriter::device_burst(unsigned thread, uint64_t start_ps, uint64_t end_ps,
                                  unsigned commands, unsigned completions) {
  const uint32_t tid = host_tid(thread);
  if (thread >= threads_ || !on(tid, kBurst)) return;
  push(Event{start_ps, 0, Ph::Complete, tid, "burst", "device", end_ps - start_ps, 0, commands,
             completions, kBurstArgs});
}

void TimelineWriter::msix(uint16_t vector, uint64_t t_ps) {
  if (vector == 0 || vector > queues_ || !on(queue_tid(vector), kMsix)) return;
  push(Event{t_ps, 0, Ph::Instant, queue_tid(vector), "msix", "irq", 0, 0, vector, 0, kMsixArgs});
}

void TimelineWriter::interrupt(unsigned vcpu, uint64_t t_ps) {
  const uint32_t tid = vcpu_tid(vcpu);
  if (vcpu >= vcpus_ || !on(tid, kIrq)) return;
  push(Event{t_ps, 0, Ph::Instant, tid, "interrupt", "irq", 0, 0, 0, 0, kNoArgs});
}

void TimelineWriter::hold_begin(Hold hold, unsigned index, uint64_t t_ps) {
  holds_.begin(hold, index, t_ps);
}

void TimelineWriter::hold_end(Hold hold, unsigned index) {
  if (holds_.end(hold, index)) flush_ready();
}

}  // namespace nvmesim::traces
