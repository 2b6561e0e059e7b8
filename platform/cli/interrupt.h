// SIGINT, SIGTERM and SIGHUP: stop at the next safe point and keep the results, as
// fio does (fio's sig_int() sets a flag; the jobs stop and the figures so
// far are reported).
//
// The handlers only record the signal (and pass it on to the child
// processes a run is waiting for). While a simulation runs, a watcher thread
// turns the recorded signal into a drain, as fio's jobs do: no job issues a
// new I/O (models/sim/run_control.h) and the run ends once the I/Os in flight
// complete, so its figures are consistent (every doorbell update counted,
// every completion consumed counted, no vCPU ahead of the kernel). If the
// drain has not ended after kDrainWallMs of wall time, or a second signal
// arrives, the watcher stops the simulation at once with sc_stop() through
// SystemC's async_request_update() (the thread-safe way into the kernel),
// between two evaluation phases. The traces close cleanly either way.
// Without a signal the watcher adds no event, so results stay byte-identical.
// The process then exits with 128 + the signal (130 SIGINT, 143 SIGTERM,
// 129 SIGHUP).
#pragma once

#include <sys/types.h>

namespace nvmesim::platform::interrupt {

// Installs the handlers (SA_RESTART: system calls of the waiting parent go on).
void install();
// The signal received so far (SIGINT, SIGTERM or SIGHUP), or 0.
int received();
// How many signals arrived (a second one stops a draining run at once).
int received_count();
// "SIGINT", "SIGTERM", "SIGHUP" (received() must be non-zero).
const char* signal_name(int sig);
// 128 + received().
int exit_code();

// Child processes a signal is passed on to (a run's comparison child, a
// sweep's running points). At most kMaxChildren at a time.
constexpr int kMaxChildren = 256;
void add_child(pid_t pid);
void remove_child(pid_t pid);

// Whether a SimulationStopper ended the run (set by it; platform/system/
// simulation_stopper.cpp holds the SystemC half, this file the signals).
void note_stopped();
void clear_stopped();
bool stopped();

// Alive around one sc_start(): drains, then stops, the simulation when a
// signal arrives.
constexpr int kDrainWallMs = 2000;
// Create it during elaboration (before sc_start).
class SimulationStopper {
 public:
  SimulationStopper();
  ~SimulationStopper();
  SimulationStopper(const SimulationStopper&) = delete;
  SimulationStopper& operator=(const SimulationStopper&) = delete;
  // True once a signal ended (drained or stopped) the simulation.
  static bool stopped();

 private:
  struct Impl;
  Impl* impl_;
};

}  // namespace nvmesim::platform::interrupt
