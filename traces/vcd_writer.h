// --vcd FILE: a Value Change Dump of the run, for GTKWave (traces/README.md).
//
// Timescale 1 ps (the models' time unit). Hierarchy under the top scope
// `nvmesim`:
//   q<N>     (I/O queue N) driver_sq_tail, device_sq_head, driver_cq_head,
//            outstanding (16-bit vectors); shadow_sq_tail, sq_eventidx,
//            shadow_cq_head, cq_eventidx (32-bit: the buffers' entries);
//            sq_doorbell_mmio, cq_doorbell_mmio, sq_suppressed,
//            cq_suppressed (1-bit pulses, one per update)
//   vcpu<N>  state (2 bits: 0 guest, 1 exit, 2 idle), state_name (string:
//            guest, idle, or the exit's kind), interrupt (pulse)
//   host<N>  state (2 bits: 0 sleeping, 1 working, 2 polling), state_name
//   msix     vector<N> (pulse per MSI-X message)
// Pulses are 1 for 1 ns. The admin queue is not traced.
//
// Events arrive roughly in time order; a min-heap holds them until the
// kernel's time minus one quantum (and any open hold) has passed, so the
// file's times never decrease and memory stays bounded.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "nvmesim/traces/gtkwave_save.h"
#include "nvmesim/traces/reorder_buffer.h"
#include "nvmesim/traces/tracer.h"

namespace nvmesim::traces {

class VcdWriter : public Tracer {
 public:
  // `out` stays owned by the caller and open until end(); `options` must
  // outlive the writer.
  VcdWriter(std::FILE* out, const TraceOptions& options);

  void begin(unsigned vcpus, unsigned queues, unsigned host_threads) override;
  void end(uint64_t t_ps) override;
  void vcpu_state(unsigned vcpu, uint64_t t_ps, VcpuState state) override;
  void vm_exit(unsigned vcpu, const char* kind, uint64_t start_ps, uint64_t end_ps) override;
  void io_start(uint16_t, uint32_t, bool, uint64_t) override {}
  void io(uint16_t, uint32_t, bool, uint64_t, uint64_t) override {}
  void doorbell_update(uint16_t qid, bool sq, uint64_t t_ps, uint16_t value, uint16_t old_value,
                       bool mmio, bool via_shadow, uint16_t eventidx) override;
  void queue_value(uint16_t qid, QueueSignal signal, uint64_t t_ps, uint32_t value) override;
  void thread_state(unsigned thread, uint64_t t_ps, ThreadState state) override;
  void device_burst(unsigned, uint64_t, uint64_t, unsigned, unsigned) override {}
  void msix(uint16_t vector, uint64_t t_ps) override;
  void interrupt(unsigned vcpu, uint64_t t_ps) override;
  void hold_begin(Hold hold, unsigned index, uint64_t t_ps) override;
  void hold_end(Hold hold, unsigned index) override;

  // Events that arrived after later ones were written (moved forward to keep
  // the file ordered); 0 unless a model reports a past time without a hold.
  uint64_t late_events() const { return buffer_.late(); }
  // After begin(): whether --trace-signals left any signal to write.
  bool selects_anything() const { return !vars_.empty(); }
  size_t signals() const { return vars_.size(); }
  uint64_t pulse_ps() const { return kPulsePs; }
  // The signals written, in order (after begin()).
  std::vector<VcdSignal> signal_list() const;
  // The window a viewer should open on: from just before the first I/O
  // queue doorbell update to the kFirstCompletions-th I/O queue MSI-X
  // message (the end of the trace if fewer), inside the trace window: the
  // first batch of submissions, its interrupt and completions.
  GtkwaveView first_ios_view(uint64_t end_ps) const;

 private:
  static constexpr uint64_t kPulsePs = 1000;
  static constexpr size_t kFirstCompletions = 2;
  static constexpr uint32_t kNone = UINT32_MAX;  // a filtered-out signal

  struct Var {
    std::string scope, name;
    unsigned width;  // 0: string
    std::string id;
    uint32_t written = 0, pending = 0;
    const char* written_s = "";
    const char* pending_s = "";
    bool dirty = false;
  };
  enum class Op : uint8_t { Set, SetString, Pulse };
  struct Event {
    uint64_t t, seq;
    uint32_t var;
    Op op;
    uint32_t value;
    const char* text;
  };

  uint32_t add_var(const std::string& scope, const std::string& name, unsigned width);
  void push(uint64_t t, uint32_t var, Op op, uint32_t value, const char* text = nullptr);
  void flush(uint64_t horizon);
  void flush_ready();
  void apply(const Event& e);
  void commit();  // writes the changes pending at now_
  void write_value(const Var& v);
  void put(const char* s) { std::fputs(s, out_); }

  std::FILE* out_;
  const TraceOptions& options_;
  std::vector<Var> vars_;
  // Var index per (entity, signal), kNone when filtered out.
  std::vector<uint32_t> queue_vars_;  // (qid - 1) * kQueueVars + k
  std::vector<uint32_t> vcpu_vars_;   // vcpu * 3 + {state, state_name, interrupt}
  std::vector<uint32_t> host_vars_;   // thread * 2 + {state, state_name}
  std::vector<uint32_t> msix_vars_;   // vector
  unsigned queues_ = 0;
  ReorderBuffer<Event> buffer_;
  uint64_t now_ = 0;      // time of the changes being gathered
  bool gathering_ = false;
  bool dumped_ = false;   // $dumpvars written
  bool stopped_ = false;  // past --trace-stop
  OpenHolds holds_;
  unsigned vcpus_ = 0, threads_ = 0;
  std::vector<uint32_t> dirty_;
  uint64_t first_io_ps_ = UINT64_MAX;     // earliest I/O queue doorbell update
  std::vector<uint64_t> first_io_msix_;   // the earliest I/O queue MSI-X times, sorted
};

}  // namespace nvmesim::traces
