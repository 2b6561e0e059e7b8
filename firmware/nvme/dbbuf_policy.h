// Doorbell-buffer modes and the device's EventIdx policies.
#pragma once

#include <cstdint>

#include "nvmesim/firmware/sim/enum_table.h"

namespace nvmesim::fw {

// Which doorbell-buffer extension the controller offers.
enum class DbbufMode : uint8_t {
  Off,     // none
  Spec,    // NVMe 1.3 Doorbell Buffer Config (0x7C), Identify OACS bit 8
  Vendor,  // the Google vendor extension (0xC0), PCI vendor id 0x1AE0
};

// How the device moves an EventIdx entry (SQ and CQ chosen apart).
enum class EventIdxPolicy : uint8_t {
  Echo,   // QEMU: SQ EventIdx = tail consumed; CQ EventIdx = head seen, before each CQE
  Lag,    // FEMU: publish one entry behind, so a guest never rings while the device polls
  Park,   // SPDK-style: an index the guest crosses only once per lap
  Never,  // never written (the historical QEMU CQ bug)
};

// What a doorbell MMIO write tells the device while the buffer is on.
enum class MmioDoorbellValue : uint8_t {
  Use,     // QEMU: the written value is the new tail/head
  Ignore,  // the Google vendor-extension device: only a wake-up; read the shadow
};

// Park: a u16 index no driver index reaches in [0, size) for size < 65536,
// so need_event fires only when the guest's update wraps the ring (for
// size 65536 it is the last slot, crossed once per lap as well).
constexpr uint32_t EVENTIDX_PARK_INDEX = 0xFFFF;

// One EventIdx update by policy: whether the device writes the entry, and
// the value. `index` is the SQ tail the device knows (SQ) or the CQ head it
// has seen (CQ); `parked` is the queue's Park state (set once written, until
// the buffer is configured again). The controller (apply_sq_eventidx,
// apply_cq_eventidx) and `nvmesim verify` both step through this.
struct EventIdxWrite {
  bool write = false;
  uint32_t value = 0;
};
EventIdxWrite eventidx_update(EventIdxPolicy policy, uint32_t index, uint32_t size, bool& parked);

// Whether the device reads the shadow and writes EventIdx for queue `qid`:
// Spec mode covers every queue, the admin queue included (as QEMU); the
// Google vendor-extension device covers the I/O queues only.
constexpr bool device_dbbuf_covers(bool active, DbbufMode mode, uint16_t qid) {
  return active && (qid != 0 || mode == DbbufMode::Spec);
}
// Whether the driver publishes queue `qid` through the shadow: Linux never
// points the admin queue at the buffer (nvme_dbbuf_init skips qid 0).
constexpr bool driver_uses_shadow(bool active, bool admin_shadow, uint16_t qid) {
  return active && (qid != 0 || admin_shadow);
}

// The device's checks of a new SQ tail / CQ head (MMIO or shadow) for a
// queue of `size` entries with fetch head `head` and known tail `tail` (SQ),
// or known head `head` and post tail `tail` (CQ). A tail may only move
// forward over free entries, a head only over posted entries (NVMe: Invalid
// Doorbell Write Value).
constexpr bool sq_tail_acceptable(uint32_t size, uint32_t head, uint32_t tail, uint32_t new_tail) {
  return new_tail < size && (new_tail + size - head) % size >= (tail + size - head) % size;
}
constexpr bool cq_head_acceptable(uint32_t size, uint32_t head, uint32_t tail, uint32_t new_head) {
  return new_head < size && (new_head + size - head) % size <= (tail + size - head) % size;
}

// The names nvme.dbbuf, nvme.sq_eventidx / nvme.cq_eventidx and
// nvme.mmio_doorbell_value take (models/nvme/nvme_controller.h).
inline constexpr EnumEntry<DbbufMode> dbbuf_modes[] = {
    {DbbufMode::Off, "off"}, {DbbufMode::Spec, "spec"}, {DbbufMode::Vendor, "vendor"}};
inline constexpr EnumEntry<EventIdxPolicy> eventidx_policies[] = {
    {EventIdxPolicy::Echo, "echo"}, {EventIdxPolicy::Lag, "lag"},
    {EventIdxPolicy::Park, "park"}, {EventIdxPolicy::Never, "never"}};
inline constexpr EnumEntry<MmioDoorbellValue> mmio_doorbell_values[] = {
    {MmioDoorbellValue::Use, "use"}, {MmioDoorbellValue::Ignore, "ignore"}};

inline const char* to_string(DbbufMode mode) { return enum_name(dbbuf_modes, mode); }
inline const char* to_string(EventIdxPolicy policy) { return enum_name(eventidx_policies, policy); }
inline const char* to_string(MmioDoorbellValue value) { return enum_name(mmio_doorbell_values, value); }

}  // namespace nvmesim::fw
