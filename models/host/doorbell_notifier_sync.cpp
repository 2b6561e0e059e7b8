#include "nvmesim/models/host/doorbell_notifier_sync.h"

#include "nvmesim/models/host/host_thread.h"

using namespace sc_core;

namespace nvmesim::models {

void SyncNotifier::doorbell_written(uint16_t qid, bool, sc_time& delay) {
  const unsigned index = target_.thread_of(qid);
  if (!target_.emulating(index) &&
      sc_get_curr_process_kind() == SC_THREAD_PROC_) {
    // The vCPU waits for it; `delay` stays an offset from the (possibly
    // advanced) present.
    target_.emulate_inline(index, delay);
    return;
  }
  target_.thread(index).kick(delay);
}

}  // namespace nvmesim::models
