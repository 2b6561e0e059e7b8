// One doorbell update through the shadow doorbell buffer, as the ordered
// accesses the driver makes (Linux drivers/nvme/host/pci.c
// nvme_dbbuf_update_and_check_event): write barrier, load the old shadow
// value, store the new one, full barrier, load EventIdx, decide with
// need_event. Driver::publish runs it from start to end in one call;
// `nvmesim verify` runs it one access at a time, interleaved with the
// device, so both execute the same sequence and the same decision.
#pragma once

#include <cstdint>

#include "nvmesim/firmware/nvme/eventidx.h"

namespace nvmesim::fw {

class DbbufPublish {
 public:
  enum class Step : uint8_t {
    WriteBarrier,  // wmb(): the SQE (or the consumed CQEs) before the shadow value
    LoadShadow,    // the old value is the shadow's: what the device may have seen
    StoreShadow,   // the new value
    FullBarrier,   // mb(): absent in Google's older driver, so the load may pass the store
    LoadEventIdx,
    Decided,       // ring() tells whether the MMIO doorbell is written
  };

  DbbufPublish() = default;
  DbbufPublish(uint16_t new_value, bool full_barrier, NeedEventForm form)
      : new_value_(new_value), full_barrier_(full_barrier), form_(form) {}

  Step step() const { return step_; }
  // The current step's access was made; `loaded` is the value of a load
  // (LoadShadow, LoadEventIdx: the 32-bit entry, read as a 16-bit index).
  void advance(uint32_t loaded = 0) {
    switch (step_) {
      case Step::WriteBarrier: step_ = Step::LoadShadow; break;
      case Step::LoadShadow:
        old_value_ = uint16_t(loaded);
        step_ = Step::StoreShadow;
        break;
      case Step::StoreShadow: step_ = full_barrier_ ? Step::FullBarrier : Step::LoadEventIdx; break;
      case Step::FullBarrier: step_ = Step::LoadEventIdx; break;
      case Step::LoadEventIdx:
        eventidx_ = uint16_t(loaded);
        ring_ = need_event(form_, eventidx_, new_value_, old_value_);
        step_ = Step::Decided;
        break;
      case Step::Decided: break;
    }
  }
  bool ring() const { return ring_; }
  uint16_t new_value() const { return new_value_; }
  uint16_t old_value() const { return old_value_; }
  uint16_t eventidx() const { return eventidx_; }

  // Field by field: the object has padding, whose bytes no copy or
  // constructor need preserve, so its bytes cannot be compared.
  friend bool operator==(const DbbufPublish& a, const DbbufPublish& b) {
    return a.new_value_ == b.new_value_ && a.old_value_ == b.old_value_ && a.eventidx_ == b.eventidx_ &&
           a.step_ == b.step_ && a.full_barrier_ == b.full_barrier_ && a.ring_ == b.ring_ && a.form_ == b.form_;
  }
  friend bool operator!=(const DbbufPublish& a, const DbbufPublish& b) { return !(a == b); }

 private:
  uint16_t new_value_ = 0, old_value_ = 0, eventidx_ = 0;
  Step step_ = Step::WriteBarrier;
  bool full_barrier_ = true;
  bool ring_ = false;
  NeedEventForm form_ = NeedEventForm::Linux;
};

}  // namespace nvmesim::fw
