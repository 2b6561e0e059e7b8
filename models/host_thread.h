// A host thread that runs device emulation (QEMU's main loop or an
// iothread): it sleeps until kicked, starts after a dispatch latency when it
// was asleep (at once when it is already running), runs the work until none
// is left, and accounts its busy time.
#pragma once

#include <cstdint>
#include <functional>
#include <systemc>

namespace nvmesim::models {

class HostThread : public sc_core::sc_module {
 public:
  // The work: runs until nothing is left, adding the CPU time it spends to
  // `local` (an offset from sc_time_stamp()); it may sync with sync().
  using Work = std::function<void(sc_core::sc_time& local)>;

  struct Params {
    sc_core::sc_time dispatch_latency = sc_core::sc_time(2, sc_core::SC_US);  // asleep -> running
    sc_core::sc_time dispatch_cost = sc_core::SC_ZERO_TIME;  // CPU time per dispatch (main-loop overhead)
  };

  HostThread(sc_core::sc_module_name name, const Params& params);

  void set_work(Work work) { work_ = std::move(work); }
  // Ask for the work to run `delay` after sc_time_stamp(). While the thread
  // is asleep this adds the dispatch latency.
  void kick(const sc_core::sc_time& delay);
  // Bring `local` to zero by letting simulated time pass (an ordering point).
  static void sync(sc_core::sc_time& local);

  bool busy() const { return busy_; }
  uint64_t dispatches() const { return dispatches_; }
  sc_core::sc_time busy_time() const { return busy_time_; }
  const Params& params() const { return params_; }

 private:
  void run();

  Params params_;
  Work work_;
  sc_core::sc_event kick_event_;
  bool has_request_ = false;
  sc_core::sc_time request_time_;  // absolute
  bool busy_ = false;
  uint64_t dispatches_ = 0;
  sc_core::sc_time busy_time_;
};

}  // namespace nvmesim::models
