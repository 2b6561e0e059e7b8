// --timeline FILE: Chrome trace-event JSON (the JSON Object Format), for the
// Perfetto UI and chrome://tracing (traces/README.md).
//
// One process (pid 1) with one track (tid) per vCPU ("vcpu<N>"), per host
// thread ("host<N>") and per I/O queue ("q<N>"):
//   vcpu<N>  X spans for VM exits (name = exit kind), B/E "idle" (HLT),
//            i "interrupt"
//   host<N>  B/E "working" (a dispatch) and "polling" (adaptive busy polling),
//            X "burst" (one emulation pass; args commands, completions)
//   q<N>     i "sq_doorbell_mmio", "cq_doorbell_mmio", "sq_suppressed",
//            "cq_suppressed" (args value, eventidx), i "msix" (vector N);
//            every I/O as an async span b/e named "q<N> read" / "q<N> write",
//            id = qid << 16 | tag (I/Os overlap on a queue; ids keep the pairs)
// ts and dur are microseconds with six decimals (exact picoseconds).
// --trace-signals names: vcpu<N>.exit, .idle, .interrupt; host<N>.burst,
// .working, .polling; q<N>.io, .sq_doorbell_mmio, .cq_doorbell_mmio, .sq_suppressed,
// .cq_suppressed, .msix. --trace-start/--trace-stop clip spans to the window.
//
// Streaming: a min-heap reorders events (as in VcdWriter) and writes them in
// time order; only open spans and the reorder window stay in memory.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <unordered_map>
#include <vector>

#include "nvmesim/traces/reorder_buffer.h"
#include "nvmesim/traces/tracer.h"

namespace nvmesim::traces {

class TimelineWriter : public Tracer {
 public:
  TimelineWriter(std::FILE* out, const TraceOptions& options);

  void begin(unsigned vcpus, unsigned queues, unsigned host_threads) override;
  void end(uint64_t t_ps) override;
  void vcpu_state(unsigned vcpu, uint64_t t_ps, VcpuState state) override;
  void vm_exit(unsigned vcpu, const char* kind, uint64_t start_ps, uint64_t end_ps) override;
  void io_start(uint16_t qid, uint32_t tag, bool write, uint64_t t_ps) override;
  void io(uint16_t qid, uint32_t tag, bool write, uint64_t start_ps, uint64_t end_ps) override;
  void doorbell_update(uint16_t qid, bool sq, uint64_t t_ps, uint16_t value, bool mmio,
                       bool via_shadow, uint16_t eventidx) override;
  void queue_value(uint16_t, QueueSignal, uint64_t, uint32_t) override {}
  void thread_state(unsigned thread, uint64_t t_ps, ThreadState state) override;
  void device_burst(unsigned thread, uint64_t start_ps, uint64_t end_ps, unsigned commands,
                    unsigned completions) override;
  void msix(uint16_t vector, uint64_t t_ps) override;
  void interrupt(unsigned vcpu, uint64_t t_ps) override;
  void hold_begin(Hold hold, unsigned index, uint64_t t_ps) override;
  void hold_end(Hold hold, unsigned index) override;

  uint64_t late_events() const { return buffer_.late(); }
  // After begin(): whether --trace-signals left any track to write.
  bool selects_anything() const {
    for (uint16_t s : sel_)
      if (s) return true;
    return false;
  }

 private:
  enum class Ph : uint8_t { Complete, Begin, End, AsyncBegin, AsyncEnd, Instant };
  struct Event {
    uint64_t t, seq;
    Ph ph;
    uint32_t tid;
    const char* name;
    const char* cat;
    uint64_t dur;  // Complete
    uint64_t id;   // async; B/E: the tid
    uint32_t a0, a1;
    uint8_t args;  // which args block (ArgsKind)
  };
  struct Open {
    Event begin;
    bool written;
  };
  // Per-track selection bits (--trace-signals).
  enum Sel : uint16_t {
    kExit = 1, kIdle = 2, kIrq = 4, kBurst = 8, kWorking = 16, kIo = 32, kSqMmio = 64,
    kCqMmio = 128, kSqSupp = 256, kCqSupp = 512, kMsix = 1024, kPolling = 2048
  };

  bool on(uint32_t tid, uint16_t bit) const { return tid < sel_.size() && (sel_[tid] & bit); }
  uint32_t vcpu_tid(unsigned v) const { return 1 + v; }
  uint32_t host_tid(unsigned h) const { return 1 + vcpus_ + h; }
  uint32_t queue_tid(unsigned q) const { return vcpus_ + threads_ + q; }  // q >= 1
  void push(Event e);
  void flush_ready();
  void flush(uint64_t horizon);
  void emit(const Event& e);
  void cross(uint64_t t);
  void write(const Event& e, Ph ph, uint64_t ts, uint64_t dur);
  void metadata(uint32_t tid, const char* what, const std::string& name, unsigned sort);

  std::FILE* out_;
  const TraceOptions& options_;
  unsigned vcpus_ = 0, threads_ = 0, queues_ = 0;
  std::vector<uint16_t> sel_;               // by tid
  std::vector<std::string> names_;          // stable storage for track-specific names
  ReorderBuffer<Event> buffer_;
  std::unordered_map<uint64_t, Open> open_;  // B/E by tid, b/e by id | 1 << 63
  bool started_ = false, stopped_ = false, first_ = true;
  OpenHolds holds_;
};

}  // namespace nvmesim::traces
