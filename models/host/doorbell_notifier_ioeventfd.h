// hv.notify=ioeventfd: with the doorbell buffer active, KVM signals an
// eventfd for an I/O queue's doorbell write and the exit returns at once;
// the eventfd wakes the queue's host thread, which reads the values from
// the shadow doorbells (the write's value is not passed). Other doorbell
// writes (the admin queue, no buffer) are plain MMIO handed to the thread.
// With an eventfd fault (EventfdFault), the handler never clears its fd.
#pragma once

#include <vector>

#include "nvmesim/models/host/doorbell_notifier.h"

namespace nvmesim::models {

class IoeventfdNotifier : public DoorbellNotifier {
 public:
  IoeventfdNotifier(NotifyTarget& target, uint16_t queues, EventfdFault fault);
  NotifyMode mode() const override { return NotifyMode::Ioeventfd; }
  void doorbell_written(uint16_t qid, bool sq, sc_core::sc_time& delay) override;
  bool accepts_ioeventfd() const override { return true; }
  bool eventfd_signalled(uint32_t index, uint16_t qid, const sc_core::sc_time& delay) override;
  unsigned on_emulation_start(unsigned index) override;
  void on_controller_reset() override;

  bool eventfd_set(uint32_t index) const { return eventfd_set_.at(index) != 0; }

 private:
  NotifyTarget& target_;
  EventfdFault fault_;
  std::vector<uint8_t> eventfd_set_;             // by doorbell index: still set after its handler ran
  std::vector<std::vector<uint32_t>> stuck_;     // by thread: doorbell indexes whose fd stays readable (Spin)
};

}  // namespace nvmesim::models
