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
//            "cq_suppressed" (args value, old, eventidx, n: the update's
//            number on its doorbell), i "sq_eventidx", "cq_eventidx" (the
//            device writing a new value to the EventIdx entry; args value, old),
//            i "msix" (args vector N, n);
//            every I/O as an async span b/e named "q<N> read" / "q<N> write",
//            id = qid << 16 | tag (I/Os overlap on a queue; ids keep the pairs);
//            b args qid, tag, sq_doorbell (the n of the SQ update that
//            published it), e args qid, cq_doorbell, and interrupt and msix when it
//            was completed in an interrupt handler
//   vcpu<N>  i "interrupt" args n, msix (the n of the MSI-X it answered)
// The top level's otherData holds the window (trace_start_us, trace_stop_us).
// ts and dur are microseconds with six decimals (exact picoseconds).
// --trace-signals names: vcpu<N>.exit, .idle, .interrupt; host<N>.burst,
// .working, .polling; q<N>.io, .sq_doorbell_mmio, .cq_doorbell_mmio, .sq_suppressed,
// .cq_suppressed, .sq_eventidx, .cq_eventidx, .msix. --trace-start/--trace-stop clip spans to the window.
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
  void doorbell_update(uint16_t qid, bool sq, uint64_t t_ps, uint16_t value, uint16_t old_value,
                       bool mmio, bool via_shadow, uint16_t eventidx) override;
  void queue_value(uint16_t qid, QueueSignal signal, uint64_t t_ps, uint32_t value) override;
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
    uint32_t a2 = 0, a3 = 0;
  };
  struct Open {
    Event begin;
    bool written;
  };
  // Per-track selection bits (--trace-signals).
  enum Sel : uint16_t {
    kExit = 1, kIdle = 2, kIrq = 4, kBurst = 8, kWorking = 16, kIo = 32, kSqMmio = 64,
    kCqMmio = 128, kSqSupp = 256, kCqSupp = 512, kMsix = 1024, kPolling = 2048, kSqEi = 4096, kCqEi = 8192
  };
  // What links an I/O to its doorbell updates and its interrupt, counted as
  // the hooks are called (one vCPU's calls come in its program order): the
  // n-th update of a queue's SQ (CQ) doorbell, MSI-X message, interrupt taken.
  struct QueueLinks {
    uint32_t sq_updates = 0, cq_updates = 0, msix = 0;
    uint64_t msix_t[4] = {}, msix_n[4] = {};  // the last few MSI-X messages: time, n
    std::vector<uint64_t> io_begun;           // by tag: the call number of its io_start
    uint32_t eventidx[2] = {};                // the last EventIdx written, SQ and CQ
  };
  struct VcpuLinks {
    uint32_t interrupts = 0, msix = 0;  // the last interrupt's n and the MSI-X's it answered
    uint64_t call = 0;                  // the call number of the last interrupt
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
  std::vector<QueueLinks> qlinks_;  // by qid - 1
  std::vector<VcpuLinks> vlinks_;
  uint64_t calls_ = 0;
};

}  // namespace nvmesim::traces
