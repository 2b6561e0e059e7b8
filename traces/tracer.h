// What the models report to traces as a run goes. The models call the
// active tracer only through `if (auto* t = traces::active())`, so with no
// trace asked for the cost is one predictable branch.
//
// Times are absolute simulated times in picoseconds. A vCPU runs ahead of
// the kernel's time by at most one quantum (temporal decoupling), so calls
// arrive roughly, not strictly, in time order: writers reorder.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nvmesim::traces {

enum class VcpuState : uint8_t { Guest, Exit, Idle };
enum class ThreadState : uint8_t { Sleeping, Working, Polling };

// Per-queue values shown in waveforms.
enum class QueueSignal : uint8_t {
  DriverSqTail,   // the tail the driver has built up to
  ShadowSqTail,   // the shadow doorbell's SQ tail entry in guest memory
  SqEventIdx,     // the EventIdx buffer's SQ entry
  DeviceSqHead,   // the next SQ entry the device fetches
  DriverCqHead,   // the CQ head the driver has consumed up to
  ShadowCqHead,
  CqEventIdx,
  Outstanding,    // commands submitted and not completed, as the driver counts them
};
constexpr unsigned QUEUE_SIGNAL_COUNT = 8;
const char* to_string(QueueSignal s);

// Spans that a model reports only when they end, and inside which it may
// wait (so their start falls behind the kernel's time).
// VcpuExit: a VM exit with device work inside; DeviceBurst: a device's pass
// on a host thread; VcpuSubmit: a job's submission, whose I/Os are reported
// as started when fio started them, before the kernel's work on them.
enum class Hold : uint8_t { VcpuExit, DeviceBurst, VcpuSubmit };

class Tracer {
 public:
  virtual ~Tracer() = default;
  // Called once after elaboration with the shape of the system.
  virtual void begin(unsigned vcpus, unsigned queues, unsigned host_threads) = 0;
  virtual void end(uint64_t t_ps) = 0;

  // Guest <-> Idle transitions (HLT); exits are reported by vm_exit, and a
  // vCPU is in state Exit during each of them.
  virtual void vcpu_state(unsigned vcpu, uint64_t t_ps, VcpuState state) = 0;
  // One VM exit of `kind` (models::to_string(ExitKind)) on `vcpu`.
  virtual void vm_exit(unsigned vcpu, const char* kind, uint64_t start_ps, uint64_t end_ps) = 0;
  // One I/O begins: the driver starts to build it (io() reports its end).
  virtual void io_start(uint16_t qid, uint32_t tag, bool write, uint64_t t_ps) = 0;
  // One I/O, from the driver starting to build it to the driver finishing it.
  virtual void io(uint16_t qid, uint32_t tag, bool write, uint64_t start_ps, uint64_t end_ps) = 0;
  // One SQ or CQ doorbell update: written to BAR0 (mmio) or suppressed.
  // `value` is the index published, `old_value` the one before it (the
  // shadow's, with the doorbell buffer; else the last published), `eventidx`
  // the EventIdx the driver loaded (via_shadow only): the three values the
  // shadow-doorbell rule decided with.
  virtual void doorbell_update(uint16_t qid, bool sq, uint64_t t_ps, uint16_t value, uint16_t old_value,
                               bool mmio, bool via_shadow, uint16_t eventidx) = 0;
  virtual void queue_value(uint16_t qid, QueueSignal signal, uint64_t t_ps, uint32_t value) = 0;
  virtual void thread_state(unsigned thread, uint64_t t_ps, ThreadState state) = 0;
  // A device processing burst on a host thread (one emulation pass).
  virtual void device_burst(unsigned thread, uint64_t start_ps, uint64_t end_ps,
                            unsigned commands, unsigned completions) = 0;
  virtual void msix(uint16_t vector, uint64_t t_ps) = 0;
  virtual void interrupt(unsigned vcpu, uint64_t t_ps) = 0;  // taken by the vCPU
  // Writers flush in time order: a span of kind `hold` on `index` (a vCPU or
  // a host thread) that started at t_ps and will be reported when it ends
  // keeps every later event buffered until hold_end.
  virtual void hold_begin(Hold hold, unsigned index, uint64_t t_ps) = 0;
  virtual void hold_end(Hold hold, unsigned index) = 0;
};

// What the user asked to trace: --trace-start, --trace-stop, --trace-signals.
// The open holds of a trace writer (VM exits with device work inside,
// submissions, device bursts), one slot per vCPU for each of the first two,
// then one per host thread, and how far the writer may
// flush its reorder buffer: nothing is reported dated before the kernel's
// time except inside an open hold, and a vCPU runs at most one quantum ahead.
class OpenHolds {
 public:
  void reset(unsigned vcpus, unsigned host_threads) {
    vcpus_ = vcpus;
    start_.assign(2 * size_t(vcpus) + host_threads, UINT64_MAX);
    open_ = 0;
  }
  void begin(Hold hold, unsigned index, uint64_t t_ps) {
    const size_t i = slot(hold, index);
    if (i >= start_.size()) return;
    if (start_[i] == UINT64_MAX) ++open_;
    start_[i] = t_ps;
  }
  // True when a hold closed (the writer may flush further).
  bool end(Hold hold, unsigned index) {
    const size_t i = slot(hold, index);
    if (i >= start_.size() || start_[i] == UINT64_MAX) return false;
    start_[i] = UINT64_MAX;
    --open_;
    return true;
  }
  uint64_t flush_horizon(uint64_t now_ps, uint64_t quantum_ps) const {
    uint64_t horizon = now_ps > quantum_ps ? now_ps - quantum_ps : 0;
    if (open_)
      for (uint64_t h : start_) horizon = h < horizon ? h : horizon;
    return horizon;
  }

 private:
  size_t slot(Hold hold, unsigned index) const {
    switch (hold) {
      case Hold::VcpuExit: return index;
      case Hold::VcpuSubmit: return size_t(vcpus_) + index;
      case Hold::DeviceBurst: break;
    }
    return 2 * size_t(vcpus_) + index;
  }
  unsigned vcpus_ = 0, open_ = 0;
  std::vector<uint64_t> start_;
};

struct TraceOptions {
  uint64_t start_ps = 0;
  uint64_t stop_ps = UINT64_MAX;
  std::vector<std::string> signals;  // glob patterns (* and ?); empty: every signal
  uint64_t quantum_ps = 0;           // sim.quantum: how far a vCPU runs ahead
  // Whether `name` ("q1.shadow_sq_tail") is selected; notes the patterns
  // that matched, for unmatched().
  bool selected(const std::string& name) const;
  // The first pattern that has matched no name so far, or "".
  std::string unmatched() const;

 private:
  mutable std::vector<bool> matched_;
};

bool glob_match(const char* pattern, const char* name);

// Forwards every call to several tracers (--vcd and --timeline together).
class TracerTee : public Tracer {
 public:
  void add(Tracer* t) { tracers_.push_back(t); }
  void begin(unsigned v, unsigned q, unsigned h) override { for (auto* t : tracers_) t->begin(v, q, h); }
  void end(uint64_t t_ps) override { for (auto* t : tracers_) t->end(t_ps); }
  void vcpu_state(unsigned v, uint64_t t, VcpuState s) override { for (auto* x : tracers_) x->vcpu_state(v, t, s); }
  void vm_exit(unsigned v, const char* k, uint64_t s, uint64_t e) override { for (auto* x : tracers_) x->vm_exit(v, k, s, e); }
  void io_start(uint16_t q, uint32_t tag, bool w, uint64_t t) override { for (auto* x : tracers_) x->io_start(q, tag, w, t); }
  void io(uint16_t q, uint32_t tag, bool w, uint64_t s, uint64_t e) override { for (auto* x : tracers_) x->io(q, tag, w, s, e); }
  void doorbell_update(uint16_t q, bool sq, uint64_t t, uint16_t v, uint16_t old, bool mmio, bool via_shadow,
                       uint16_t eventidx) override {
    for (auto* x : tracers_) x->doorbell_update(q, sq, t, v, old, mmio, via_shadow, eventidx);
  }
  void queue_value(uint16_t q, QueueSignal s, uint64_t t, uint32_t v) override { for (auto* x : tracers_) x->queue_value(q, s, t, v); }
  void thread_state(unsigned th, uint64_t t, ThreadState s) override { for (auto* x : tracers_) x->thread_state(th, t, s); }
  void device_burst(unsigned th, uint64_t s, uint64_t e, unsigned c, unsigned k) override {
    for (auto* x : tracers_) x->device_burst(th, s, e, c, k);
  }
  void msix(uint16_t v, uint64_t t) override { for (auto* x : tracers_) x->msix(v, t); }
  void interrupt(unsigned v, uint64_t t) override { for (auto* x : tracers_) x->interrupt(v, t); }
  void hold_begin(Hold h, unsigned i, uint64_t t) override { for (auto* x : tracers_) x->hold_begin(h, i, t); }
  void hold_end(Hold h, unsigned i) override { for (auto* x : tracers_) x->hold_end(h, i); }

 private:
  std::vector<Tracer*> tracers_;
};

// The tracer of this run, or nullptr (the default: no tracing).
extern Tracer* g_active_tracer;
inline Tracer* active() { return g_active_tracer; }
inline void set_active(Tracer* tracer) { g_active_tracer = tracer; }

}  // namespace nvmesim::traces
