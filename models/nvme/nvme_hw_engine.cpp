#include "nvmesim/models/nvme/nvme_hw_engine.h"

#include <stdexcept>

#include "nvmesim/models/sim/activations.h"
#include "nvmesim/models/sim/kernel_time.h"
#include "nvmesim/traces/tracer.h"

using namespace sc_core;

namespace nvmesim::models {

NvmeHwEngine::NvmeHwEngine(sc_module_name name, const NvmeHwEngineParams& params)
    : sc_module(name), params_(params) {
  if (!(params_.clock_ghz > 0)) throw std::invalid_argument("nvme.clock: must be above 0 GHz");
  cycle_ = sc_time(1.0 / params_.clock_ghz, SC_NS);
  doorbell_time_ = cycles(params_.doorbell_decode);
  command_time_ = cycles(params_.sqe_fetch + params_.command_parse);
  handoff_time_ = cycles(params_.backend_handoff);
  cqe_time_ = cycles(params_.cqe_post);
  msix_time_ = cycles(params_.msix);
  SC_HAS_PROCESS(NvmeHwEngine);
  SC_THREAD(run);
}

void NvmeHwEngine::kick(const sc_time& delay) {
  const sc_time at = kernel_now() + delay;
  if (!has_request_ || at < request_time_) {
    has_request_ = true;
    request_time_ = at;
    activations::notify(kick_event_, delay);
  }
}

// Requests live in variables, not only in the event, so one made while the
// work runs (or while its time passes) is not lost.
void NvmeHwEngine::run() {
  activations::begin(activations::ControllerMethod);
  for (;;) {
    while (!has_request_ || request_time_ > kernel_now()) {
      if (has_request_)
        activations::wait(request_time_ - kernel_now(), kick_event_);
      else
        activations::wait(kick_event_);
    }
    has_request_ = false;
    busy_ = true;
    ++runs_;
    const sc_time start = kernel_now();
    if (auto* t = traces::active()) t->thread_state(kTraceId, start.value(), traces::ThreadState::Working);
    sc_time local = SC_ZERO_TIME;
    if (work_) work_(local);
    if (local != SC_ZERO_TIME) activations::wait(local);
    busy_time_ += kernel_now() - start;
    busy_ = false;
    if (auto* t = traces::active()) t->thread_state(kTraceId, kernel_now().value(), traces::ThreadState::Sleeping);
  }
}

}  // namespace nvmesim::models
