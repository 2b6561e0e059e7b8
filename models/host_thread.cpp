#include "models/host_thread.h"

using namespace sc_core;

namespace nvmesim::models {

HostThread::HostThread(sc_module_name name, const Params& params)
    : sc_module(name), params_(params) {
  SC_HAS_PROCESS(HostThread);
  SC_THREAD(run);
}

void HostThread::kick(const sc_time& delay) {
  sc_time at = sc_time_stamp() + delay;
  if (!busy_) at += params_.dispatch_latency;
  if (!has_request_ || at < request_time_) {
    has_request_ = true;
    request_time_ = at;
    kick_event_.notify(at - sc_time_stamp());
  }
}

void HostThread::sync(sc_time& local) {
  if (local != SC_ZERO_TIME) {
    sc_core::wait(local);
    local = SC_ZERO_TIME;
  }
}

void HostThread::run() {
  for (;;) {
    // Requests are kept in variables, not only in the event, so a kick that
    // fires while the thread is working is not lost.
    while (!has_request_ || request_time_ > sc_time_stamp()) {
      if (has_request_)
        wait(request_time_ - sc_time_stamp(), kick_event_);
      else
        wait(kick_event_);
    }
    has_request_ = false;
    busy_ = true;
    ++dispatches_;
    const sc_time start = sc_time_stamp();
    sc_time local = params_.dispatch_cost;
    if (work_) work_(local);
    sync(local);
    busy_time_ += sc_time_stamp() - start;
    busy_ = false;
  }
}

}  // namespace nvmesim::models
