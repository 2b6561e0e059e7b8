// hv.notify=sync: the doorbell's processing runs inside the vCPU's exit, on
// the vCPU's time (QEMU handling the MMIO write in the vCPU thread). When
// the emulation already runs (or the caller cannot wait), its thread is
// kicked instead.
#pragma once

#include "nvmesim/models/host/doorbell_notifier.h"

namespace nvmesim::models {

class SyncNotifier : public DoorbellNotifier {
 public:
  explicit SyncNotifier(NotifyTarget& target) : target_(target) {}
  NotifyMode mode() const override { return NotifyMode::Sync; }
  void doorbell_written(uint16_t qid, bool sq, sc_core::sc_time& delay) override;

 private:
  NotifyTarget& target_;
};

}  // namespace nvmesim::models
