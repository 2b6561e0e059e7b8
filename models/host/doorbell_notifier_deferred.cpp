#include "nvmesim/models/host/doorbell_notifier_deferred.h"

#include "nvmesim/models/host/host_thread.h"

namespace nvmesim::models {

void DeferredNotifier::doorbell_written(uint16_t qid, bool, sc_core::sc_time& delay) {
  target_.thread(target_.thread_of(qid)).kick(delay);
}

}  // namespace nvmesim::models
