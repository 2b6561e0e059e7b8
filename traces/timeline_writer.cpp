#include "nvmesim/traces/timeline_writer.h"

#include <algorithm>
#include <cstring>
#include <systemc>

namespace nvmesim::traces {

namespace {

enum ArgsKind : uint8_t {
  kNoArgs, kIoArgs, kBurstArgs, kDoorbellShadow, kDoorbellDirect, kMsixArgs, kIoEndArgs, kIrqArgs, kEventIdxArgs
};

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
  qlinks_.assign(queues, QueueLinks{});
  vlinks_.assign(vcpus, VcpuLinks{});
  // displayTimeUnit first: Perfetto's importer reads it only from the file's
  // first chunk. otherData's values are strings, as the format's own example.
  std::fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"trace_start_us\":\"", out_);
  {
    Line s(out_);
    append_us(s, options_.start_ps);
    s += "\",\"trace_stop_us\":\"";
    if (options_.stop_ps != UINT64_MAX) append_us(s, options_.stop_ps);
    s.write_out();
  }
  std::fputs("\"},\"traceEvents\":[", out_);
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
                         pick(n, "cq_suppressed", kCqSupp) | pick(n, "msix", kMsix) |
                         pick(n, "sq_eventidx", kSqEi) | pick(n, "cq_eventidx", kCqEi);
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
  // Ordinals (n, sq_doorbell, ...) are 0 when unknown: left out.
  auto link = [&s](const char* key, size_t len, uint32_t n) {
    if (!n) return;
    s += ",\"";
    s.append(key, len);
    s += "\":";
    append_u64(s, n);
  };
#define NVMESIM_LINK(key, n) link(key, sizeof(key) - 1, n)
  if (ph == Ph::AsyncEnd && e.args == kIoEndArgs) {
    // The I/O's CQ doorbell update and the interrupt it completed in.
    s += ",\"args\":{\"qid\":";
    append_u64(s, e.a3);
    NVMESIM_LINK("cq_doorbell", e.a0);
    NVMESIM_LINK("interrupt", e.a1);
    NVMESIM_LINK("msix", e.a2);
    s += '}';
  }
  if (ph != Ph::End && ph != Ph::AsyncEnd) {
    switch (e.args) {
      case kIoArgs:
        s += ",\"args\":{\"qid\":";
        append_u64(s, e.a1);
        s += ",\"tag\":";
        append_u64(s, e.a0);
        NVMESIM_LINK("sq_doorbell", e.a2);
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
        s += ",\"old\":";
        append_u64(s, e.a2);
        if (e.args == kDoorbellShadow) {
          s += ",\"eventidx\":";
          append_u64(s, e.a1);
        }
        NVMESIM_LINK("n", e.a3);
        s += '}';
        break;
      case kMsixArgs:
        s += ",\"args\":{\"vector\":";
        append_u64(s, e.a0);
        NVMESIM_LINK("n", e.a1);
        s += '}';
        break;
      case kIrqArgs:
        s += ",\"args\":{\"n\":";
        append_u64(s, e.a0);
        NVMESIM_LINK("msix", e.a1);
        s += '}';
        break;
      case kEventIdxArgs:
        s += ",\"args\":{\"value\":";
        append_u64(s, e.a0);
        s += ",\"old\":";
        append_u64(s, e.a1);
        s += '}';
        break;
      default: break;
    }
  }
#undef NVMESIM_LINK
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
      if (it->second.written && !stopped_) {
        Event w = it->second.begin;  // its name and id; the end's own args
        w.args = e.args;
        w.a0 = e.a0, w.a1 = e.a1, w.a2 = e.a2, w.a3 = e.a3;
        write(w, e.ph, e.t, 0);
      }
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

// Links: an I/O is begun (io_start) once its command is in the SQ, and the
// driver's next update of that SQ's doorbell publishes it (one vCPU drives a
// queue, so its calls come in program order); it completes (io) inside the
// handler of the interrupt its vCPU took last, when that came after it began
// (else it was polled), and the next CQ update returns its CQ entry.
void TimelineWriter::io_start(uint16_t qid, uint32_t tag, bool write, uint64_t t_ps) {
  if (qid == 0 || qid > queues_) return;
  QueueLinks& l = qlinks_[qid - 1u];
  if (tag >= l.io_begun.size()) l.io_begun.resize(size_t(tag) + 1);
  l.io_begun[tag] = ++calls_;
  if (!on(queue_tid(qid), kIo)) return;
  Event e{t_ps, 0, Ph::AsyncBegin, queue_tid(qid), names_[(qid - 1u) * 2 + write].c_str(), "io", 0,
          (uint64_t(qid) << 16) | tag, tag, qid, kIoArgs};
  e.a2 = l.sq_updates + 1;
  push(e);
}

void TimelineWriter::io(uint16_t qid, uint32_t tag, bool write, uint64_t, uint64_t end_ps) {
  if (qid == 0 || qid > queues_ || !on(queue_tid(qid), kIo)) return;
  const QueueLinks& l = qlinks_[qid - 1u];
  Event e{end_ps, 0, Ph::AsyncEnd, queue_tid(qid), names_[(qid - 1u) * 2 + write].c_str(), "io", 0,
          (uint64_t(qid) << 16) | tag, l.cq_updates + 1, 0, kIoEndArgs};
  e.a3 = qid;
  if (qid <= vcpus_ && tag < l.io_begun.size()) {
    const VcpuLinks& v = vlinks_[qid - 1u];  // one I/O queue per vCPU
    if (v.interrupts && v.call > l.io_begun[tag]) e.a1 = v.interrupts, e.a2 = v.msix;
  }
  push(e);
}

void TimelineWriter::doorbell_update(uint16_t qid, bool sq, uint64_t t_ps, uint16_t value, uint16_t old_value,
                                     bool mmio, bool via_shadow, uint16_t eventidx) {
  if (qid == 0 || qid > queues_) return;
  QueueLinks& l = qlinks_[qid - 1u];
  const uint32_t n = sq ? ++l.sq_updates : ++l.cq_updates;
  ++calls_;
  const uint16_t bit = mmio ? (sq ? kSqMmio : kCqMmio) : (sq ? kSqSupp : kCqSupp);
  if (!on(queue_tid(qid), bit)) return;
  const char* name = mmio ? (sq ? "sq_doorbell_mmio" : "cq_doorbell_mmio")
                          : (sq ? "sq_suppressed" : "cq_suppressed");
  Event e{t_ps, 0, Ph::Instant, queue_tid(qid), name, "doorbell", 0, 0, value, eventidx,
          uint8_t(via_shadow ? kDoorbellShadow : kDoorbellDirect)};
  e.a2 = old_value;
  e.a3 = n;
  push(e);
}

// The device writing an EventIdx entry (its DMA; models/nvme): an instant
// with the value before it, so a suppressed update can be read against it.
// A write of the value already there changes nothing the driver can read
// (QEMU rewrites the CQ's before every CQE): left out.
void TimelineWriter::queue_value(uint16_t qid, QueueSignal signal, uint64_t t_ps, uint32_t value) {
  if (signal != QueueSignal::SqEventIdx && signal != QueueSignal::CqEventIdx) return;
  if (qid == 0 || qid > queues_) return;
  const bool sq = signal == QueueSignal::SqEventIdx;
  uint32_t& last = qlinks_[qid - 1u].eventidx[sq ? 0 : 1];
  const uint32_t old = last;
  last = value;
  if (old == value || !on(queue_tid(qid), sq ? kSqEi : kCqEi)) return;
  push(Event{t_ps, 0, Ph::Instant, queue_tid(qid), sq ? "sq_eventidx" : "cq_eventidx", "eventidx", 0, 0, value,
             old, kEventIdxArgs});
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
  if (vector == 0 || vector > queues_) return;
  QueueLinks& l = qlinks_[vector - 1u];
  const uint32_t n = ++l.msix;
  l.msix_t[n % 4] = t_ps;
  l.msix_n[n % 4] = n;
  if (!on(queue_tid(vector), kMsix)) return;
  push(Event{t_ps, 0, Ph::Instant, queue_tid(vector), "msix", "irq", 0, 0, vector, n, kMsixArgs});
}

// The interrupt answers the last MSI-X message of its queue's vector sent
// by then (the device may have sent a later one already: its time decides).
void TimelineWriter::interrupt(unsigned vcpu, uint64_t t_ps) {
  const uint32_t tid = vcpu_tid(vcpu);
  if (vcpu >= vcpus_) return;
  VcpuLinks& v = vlinks_[vcpu];
  v.msix = 0;
  if (vcpu < queues_) {
    const QueueLinks& l = qlinks_[vcpu];
    uint64_t best_t = 0;
    for (unsigned k = 0; k < 4; ++k)
      if (l.msix_n[k] && l.msix_t[k] <= t_ps && (!v.msix || l.msix_t[k] >= best_t))
        best_t = l.msix_t[k], v.msix = uint32_t(l.msix_n[k]);
  }
  ++v.interrupts;
  v.call = ++calls_;
  if (!on(tid, kIrq)) return;
  push(Event{t_ps, 0, Ph::Instant, tid, "interrupt", "irq", 0, 0, v.interrupts, v.msix, kIrqArgs});
}

void TimelineWriter::hold_begin(Hold hold, unsigned index, uint64_t t_ps) {
  holds_.begin(hold, index, t_ps);
}

void TimelineWriter::hold_end(Hold hold, unsigned index) {
  if (holds_.end(hold, index)) flush_ready();
}

}  // namespace nvmesim::traces
