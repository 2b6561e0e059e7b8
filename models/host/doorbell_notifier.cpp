#include "nvmesim/models/host/doorbell_notifier.h"

#include <stdexcept>

#include "nvmesim/models/host/doorbell_notifier_deferred.h"
#include "nvmesim/models/host/doorbell_notifier_ioeventfd.h"
#include "nvmesim/models/host/doorbell_notifier_sync.h"
#include "nvmesim/models/host/doorbell_notifier_timer.h"

namespace nvmesim::models {

std::unique_ptr<DoorbellNotifier> make_doorbell_notifier(const NotifierParams& params,
                                                         NotifyTarget& target) {
  switch (params.mode) {
    case NotifyMode::Sync: return std::make_unique<SyncNotifier>(target);
    case NotifyMode::Deferred: return std::make_unique<DeferredNotifier>(target);
    case NotifyMode::Ioeventfd:
      return std::make_unique<IoeventfdNotifier>(target, params.queues, params.eventfd_fault);
    case NotifyMode::Timer:
      return std::make_unique<TimerNotifier>(target, params.queues, params.timer_delay);
  }
  throw std::logic_error("unknown notification mode");
}

}  // namespace nvmesim::models
