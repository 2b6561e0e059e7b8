// How often the SystemC kernel runs the model's own processes: every
// SC_THREAD resume (its start and each return from wait()) and every
// SC_METHOD run, by kind of process. --host-stats reports them per I/O:
// the machine-independent cost of a simulated I/O, which is what speed
// work moves (each activation is a kernel scheduling step, a context switch
// for a thread). Plain increments: the kernel runs one process at a time.
#pragma once

#include <cstdint>
#include <systemc>
#include <utility>

namespace nvmesim::models::activations {

enum Kind : unsigned {
  VcpuThread,         // a vCPU's thread (guest driver and fio job)
  VcpuStoreCommit,    // a vCPU's store-buffer drain (SC_METHOD)
  HostThread,         // a host emulation thread (main loop, iothreads)
  BackendCompletion,  // the storage backend's completion timer (SC_METHOD)
  ControllerMethod,   // the controller's enable and coalescing timers (SC_METHODs), its hardware engine (SC_THREAD)
  Watchdog,           // the stall watchdog (SC_METHOD)
  KIND_COUNT
};

inline constexpr const char* kind_names[KIND_COUNT] = {"vcpu_thread", "vcpu_store_commit", "host_thread",
                                                       "backend_completion", "controller_method",
                                                       "watchdog"};

// The counts since the last reset (System resets them when measurement starts).
inline uint64_t counts[KIND_COUNT] = {};

// The kind of the process running now: set as each one starts, restored
// when a thread returns from wait (helpers that wait, such as a host thread's
// sync or the BQL, run in whichever thread calls them).
inline Kind current = VcpuThread;

// Changes whenever another process may have run or the model has cancelled
// an event: while it stands still, what the kernel has pending can only have
// grown by the model's own notifications, which update the kept answer below
// (models/sim/lookahead.h keeps its answer for that long).
inline uint64_t epoch = 0;

// What the lookahead (models/sim/lookahead.h) last learnt from the kernel:
// the time from its present to its next pending activity, kept while
// `epoch` and the delta cycle stand still. (At namespace scope, not a
// function's static: no guard to test per call.)
struct KeptLookahead {
  uint64_t epoch = ~uint64_t(0);
  sc_dt::uint64 delta = 0;
  sc_core::sc_time to_next;
};
inline KeptLookahead kept_lookahead;

// A thread's start or an SC_METHOD's run.
inline void begin(Kind k) {
  current = k;
  ++counts[k];
  ++epoch;
}
// Every event notification and cancellation of the model goes through these.
inline void notify(sc_core::sc_event& e, const sc_core::sc_time& delay) {
  e.notify(delay);
  // A notification only adds activity: the event keeps the earlier of its
  // pending notification and this one (sc_event::notify), so the kernel's
  // next activity becomes the earlier of the kept one and `delay`, and the
  // kept answer stays exact without asking the kernel again.
  if (delay < kept_lookahead.to_next) kept_lookahead.to_next = delay;
}
inline void cancel(sc_core::sc_event& e) {
  e.cancel();
  ++epoch;
}
// sc_core::wait, counted as a resume of the calling thread.
template <class... A>
void wait(A&&... a) {
  const Kind me = current;
  sc_core::wait(std::forward<A>(a)...);
  begin(me);
}
inline void reset() {
  for (uint64_t& c : counts) c = 0;
}
inline uint64_t total() {
  uint64_t t = 0;
  for (uint64_t c : counts) t += c;
  return t;
}

}  // namespace nvmesim::models::activations
