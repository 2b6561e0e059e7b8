// The device's side of the doorbell buffer as ordered steps: one SQ pass
// (Controller::process_sq: the shadow tail, then per command the fetch and
// the accesses of DbbufDeviceOrder::sq) and one CQ posting run
// (Controller::post_completions: per CQE the accesses of
// DbbufDeviceOrder::cq, the room check and the CQE). The controller walks
// a DbbufDevicePass from start to end in one call, making each step's
// access through its ControllerEnv; `nvmesim verify` walks the same object
// one access at a time against its own memory model, interleaved with the
// driver's fw::DbbufPublish, so both execute the same order. What a
// LoadShadow or StoreEventIdx step does is fw::DbbufStepCode (below): the
// controller and verify call the same functions, each with its own memory.
#pragma once

#include <cstdint>

#include "nvmesim/firmware/nvme/dbbuf_policy.h"

namespace nvmesim::fw {

enum class DbbufDeviceStep : uint8_t {
  LoadShadow,     // the shadow SQ tail / CQ head (checked, then taken as the device's)
  StoreEventIdx,  // the EventIdx entry, by nvme.sq_eventidx / nvme.cq_eventidx
  Barrier,        // device_barrier(): what was stored is visible before what is loaded next
  FetchSqe,       // SQ pass: the next command, if the pass takes one; else finish()
  CqePending,     // posting: a completion waits; else finish()
  WriteCqe,       // posting: the CQE; finish() instead when the CQ is full
  Done,
};

// The doorbell-buffer accesses around one queue entry, in order: only
// LoadShadow, StoreEventIdx and Barrier, at most kMaxAccesses.
struct DbbufAccessOrder {
  static constexpr unsigned kMaxAccesses = 3;
  DbbufDeviceStep access[kMaxAccesses];
  uint8_t count;
};
// The firmware's (QEMU's nvme_process_sq / nvme_post_cqes): publish the
// EventIdx, make it visible, then re-read the shadow, so a value the driver
// stored before it loaded the new EventIdx is seen (else its doorbell was
// suppressed for nothing: a lost wake-up).
inline constexpr DbbufAccessOrder kEventIdxBarrierReread{
    {DbbufDeviceStep::StoreEventIdx, DbbufDeviceStep::Barrier, DbbufDeviceStep::LoadShadow}, 3};

// After each fetched command (sq) and before each CQE (cq), when the buffer
// covers the queue. ControllerConfig::dbbuf_order; tests and `nvmesim verify
// --device-order` give other orders to show what each access is for.
struct DbbufDeviceOrder {
  DbbufAccessOrder sq = kEventIdxBarrierReread;
  DbbufAccessOrder cq = kEventIdxBarrierReread;
};

constexpr bool valid_access_order(const DbbufAccessOrder& o) {
  if (o.count > DbbufAccessOrder::kMaxAccesses) return false;
  for (unsigned i = 0; i < o.count; ++i)
    if (o.access[i] != DbbufDeviceStep::LoadShadow && o.access[i] != DbbufDeviceStep::StoreEventIdx &&
        o.access[i] != DbbufDeviceStep::Barrier)
      return false;
  return true;
}
// An order that is not one (another step, more than kMaxAccesses) is
// replaced by the firmware's, as the controller fixes its other settings.
constexpr DbbufDeviceOrder sanitized_order(DbbufDeviceOrder o) {
  if (!valid_access_order(o.sq)) o.sq = kEventIdxBarrierReread;
  if (!valid_access_order(o.cq)) o.cq = kEventIdxBarrierReread;
  return o;
}

// A cursor over one pass. Its position is a small number (kPositions
// values, then done), so a checker can store it and rebuild the cursor.
//   SQ pass:  0 LoadShadow (covered only), 1 FetchSqe, 2.. the sq accesses, back to 1
//   posting:  0 CqePending, 1.. the cq accesses (covered only), kWriteAt WriteCqe, back to 0
// Coverage is asked for where it decides the way (the pass's start, after a
// fetch, after a pending completion): the admin pass that executes Doorbell
// Buffer Config turns the buffer on in mid-pass, and the next command's
// accesses follow (as QEMU's nvme_process_sq checks it per command).
class DbbufDevicePass {
 public:
  static constexpr uint8_t kPositions = 2 + DbbufAccessOrder::kMaxAccesses;
  static constexpr uint8_t kDoneAt = 0xFF;

  // `covered`: the buffer covers the queue (device_dbbuf_covers); without it
  // a pass makes no shadow or EventIdx access.
  static DbbufDevicePass sq_pass(bool covered, const DbbufDeviceOrder& order) {
    return DbbufDevicePass(true, order.sq, covered ? 0 : 1);
  }
  static DbbufDevicePass cq_post(const DbbufDeviceOrder& order) { return DbbufDevicePass(false, order.cq, 0); }
  // The cursor at `position` (from position() of a cursor of the same kind
  // and order).
  static DbbufDevicePass at(bool sq, const DbbufDeviceOrder& order, uint8_t position) {
    return DbbufDevicePass(sq, sq ? order.sq : order.cq, position);
  }

  bool sq() const { return sq_; }
  uint8_t position() const { return pos_; }
  bool done() const { return pos_ == kDoneAt; }

  DbbufDeviceStep step() const {
    if (done()) return DbbufDeviceStep::Done;
    if (sq_) {
      if (pos_ == 0) return DbbufDeviceStep::LoadShadow;
      return pos_ == 1 ? DbbufDeviceStep::FetchSqe : order_.access[pos_ - 2];
    }
    if (pos_ == 0) return DbbufDeviceStep::CqePending;
    return pos_ == kWriteAt ? DbbufDeviceStep::WriteCqe : order_.access[pos_ - 1];
  }
  // The step after the current one, were it made.
  DbbufDeviceStep next_step(bool covered) const {
    DbbufDevicePass n = *this;
    n.advance(covered);
    return n.step();
  }

  // The current step was made (FetchSqe: a command fetched; CqePending: a
  // completion waits; WriteCqe: the CQE written). `covered`: whether the
  // buffer covers the queue now.
  void advance(bool covered) {
    if (done()) return;
    const uint8_t accesses = covered ? order_.count : 0;
    if (sq_) {
      if (pos_ == 0) pos_ = 1;
      else if (pos_ == 1) pos_ = accesses > 0 ? 2 : 1;
      else pos_ = pos_ - 2 + 1 < order_.count ? pos_ + 1 : 1;
      return;
    }
    if (pos_ == kWriteAt) pos_ = 0;
    else if (pos_ == 0) pos_ = accesses > 0 ? 1 : kWriteAt;
    else pos_ = pos_ < order_.count ? pos_ + 1 : kWriteAt;
  }
  // FetchSqe, CqePending: nothing (more) to do; WriteCqe: the CQ is full.
  void finish() { pos_ = kDoneAt; }
  // The current step is an access that comes right after a Barrier of the
  // order (a checker's step texts say so).
  bool follows_barrier() const {
    const int index = done() ? -1 : sq_ ? pos_ - 2 : (pos_ == kWriteAt ? -1 : pos_ - 1);
    return index >= 1 && order_.access[index - 1] == DbbufDeviceStep::Barrier;
  }

 private:
  static constexpr uint8_t kWriteAt = 1 + DbbufAccessOrder::kMaxAccesses;
  DbbufDevicePass(bool sq, const DbbufAccessOrder& order, uint8_t position)
      : order_(order), sq_(sq), pos_(position) {}

  DbbufAccessOrder order_;
  bool sq_;
  uint8_t pos_;
};

// One queue's doorbell state as a doorbell-buffer step reads and changes it
// (the controller's Sq or Cq; verify's State).
struct DbbufQueue {
  uint32_t size;
  uint32_t head;  // SQ: the fetch head; CQ: the head the device knows
  uint32_t tail;  // SQ: the tail the device knows; CQ: the next entry the device posts
  bool eventidx_parked;
};

// The device's accesses to one queue's doorbell-buffer entries: the
// controller's DMA (ControllerEnv) or verify's memory model.
class DbbufDeviceMemory {
 public:
  // The queue's shadow entry; false: the read failed (nothing read).
  virtual bool load_shadow(uint32_t& value) = 0;
  // The queue's EventIdx entry.
  virtual void store_eventidx(uint32_t value) = 0;
  // The shadow held a value the check refused (Invalid Doorbell Write Value).
  virtual void invalid_shadow_value() = 0;

 protected:
  ~DbbufDeviceMemory() = default;
};

// The code of the LoadShadow and StoreEventIdx steps (controller_dbbuf.cpp):
// the controller's shadow_read_sq_tail / shadow_read_cq_head /
// apply_sq_eventidx / apply_cq_eventidx call these on their queue, and
// `nvmesim verify` calls the same ones on its states, so a change in what a
// step does is a change in what verify explores. A table so that tests can
// hand both a mutant (ControllerConfig::dbbuf_step_code,
// verify::ModelConfig::step_code_override).
struct DbbufStepCode {
  // The shadow tail / head, checked (sq_tail_acceptable /
  // cq_head_acceptable), then taken as the device's.
  void (*load_shadow_sq_tail)(DbbufQueue& sq, DbbufDeviceMemory& memory);
  void (*load_shadow_cq_head)(DbbufQueue& cq, DbbufDeviceMemory& memory);
  // The EventIdx entry the policy asks for (eventidx_update of the SQ's
  // known tail / the CQ's known head), if any.
  void (*store_sq_eventidx)(EventIdxPolicy policy, DbbufQueue& sq, DbbufDeviceMemory& memory);
  void (*store_cq_eventidx)(EventIdxPolicy policy, DbbufQueue& cq, DbbufDeviceMemory& memory);
};
// The firmware's.
extern const DbbufStepCode kDbbufStepCode;

}  // namespace nvmesim::fw
