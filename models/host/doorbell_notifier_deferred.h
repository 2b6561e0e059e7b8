// hv.notify=deferred: the exit schedules the doorbell's processing on the
// queue's host thread (QEMU's main loop, or its iothread) and returns.
#pragma once

#include "nvmesim/models/host/doorbell_notifier.h"

namespace nvmesim::models {

class DeferredNotifier : public DoorbellNotifier {
 public:
  explicit DeferredNotifier(NotifyTarget& target) : target_(target) {}
  NotifyMode mode() const override { return NotifyMode::Deferred; }
  void doorbell_written(uint16_t qid, bool sq, sc_core::sc_time& delay) override;

 private:
  NotifyTarget& target_;
};

}  // namespace nvmesim::models
