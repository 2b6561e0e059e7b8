#include "nvmesim/models/engine/device_engine.h"

#include "nvmesim/models/host/host_thread.h"
#include "nvmesim/models/sim/kernel_time.h"
#include "nvmesim/models/sim/lookahead.h"

using namespace sc_core;

namespace nvmesim::models {

void DeviceEngine::sync() {
  if (!running_) return;
  // Nothing can run before the work's present: the write lands and the next
  // read sees memory as they would after the wait, so the work keeps its
  // offset. (A policy that reads the kernel's present to decide what is
  // due, hv.notify=timer, syncs.)
  if (sync_lookahead_ && !activity_due_within(running_->local)) return;
  if (sc_get_curr_process_kind() != SC_THREAD_PROC_) return;
  Context* const keep = running_;  // another context's work may run meanwhile
  HostThread::sync(keep->local);
  running_ = keep;
}

void DeviceEngine::pass_time() {
  if (!running_) return;
  Context* const keep = running_;
  HostThread::sync(keep->local);
  running_ = keep;
}

void DeviceEngine::run_work(Context& c, sc_time& local) {
  c.local = local;
  c.in_work = true;
  running_ = &c;
  device_.work_started(c.index, on_work_start(c.index));
  do {
    run_passes(c);
  } while (device_.after_passes(c.index));
  on_work_end(c.index);
  running_ = nullptr;
  c.in_work = false;
  local = c.local;
}

void DeviceEngine::run_passes(Context& c) {
  bool progress = true;
  while (progress) {
    progress = false;
    const sc_time start = kernel_now() + c.local;
    device_.pass_started(c.index, start);
    on_pass_start(c.index);
    const unsigned commands = serve_sqs(c);
    if (commands) progress = true;
    const unsigned completions = device_.finish_pass(c.index, progress);
    device_.pass_ended(c.index, start, kernel_now() + c.local, progress, commands, completions);
  }
}

}  // namespace nvmesim::models
