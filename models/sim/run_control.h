// A request to stop issuing I/O, as fio's jobs stop on SIGINT/SIGTERM
// (td->terminate): each job issues nothing new and finishes once its I/Os in
// flight complete, so the run ends at a consistent point (every update
// counted as MMIO or suppressed, every CQE consumed counted, no vCPU time
// ahead of the kernel's). platform/cli/interrupt.h sets it from its watcher
// thread (hence atomic); a run without a signal never sees it set, so its
// output stays byte-identical.
#pragma once

#include <atomic>

namespace nvmesim::models::run_control {

inline std::atomic<bool> stop_issuing{false};

inline bool stop_requested() { return stop_issuing.load(std::memory_order_relaxed); }

}  // namespace nvmesim::models::run_control
