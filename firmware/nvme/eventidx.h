// The EventIdx math of the shadow-doorbell extension and the ring arithmetic
// of an NVMe queue: the single source of truth for driver, controller, CLI.
#pragma once

#include <cstdint>

#include "nvmesim/firmware/sim/enum_table.h"

namespace nvmesim::fw {

// Which form of the "must I ring the doorbell?" test a driver uses.
enum class NeedEventForm : uint8_t {
  Linux,      // nvme_dbbuf_need_event / vring_need_event: (u16)(new - ei - 1) < (u16)(new - old)
  Inclusive,  // the spec's example (SPDK): (u16)(new - ei) <= (u16)(new - old)
};

// Linux/virtio form: ring iff EventIdx lies in [old, new) cyclically mod 2^16.
constexpr bool need_event_linux(uint16_t eventidx, uint16_t new_idx, uint16_t old_idx) {
  return uint16_t(new_idx - eventidx - 1) < uint16_t(new_idx - old_idx);
}

// Spec-example (inclusive) form: ring iff EventIdx lies in [old, new]
// cyclically mod 2^16; for new == old that is {old}, not a full lap.
constexpr bool need_event_inclusive(uint16_t eventidx, uint16_t new_idx, uint16_t old_idx) {
  return uint16_t(new_idx - eventidx) <= uint16_t(new_idx - old_idx);
}

constexpr bool need_event(NeedEventForm form, uint16_t eventidx, uint16_t new_idx,
                          uint16_t old_idx) {
  return form == NeedEventForm::Linux ? need_event_linux(eventidx, new_idx, old_idx)
                                      : need_event_inclusive(eventidx, new_idx, old_idx);
}

// The names guest.need_event takes.
inline constexpr EnumEntry<NeedEventForm> need_event_forms[] = {
    {NeedEventForm::Linux, "linux"}, {NeedEventForm::Inclusive, "inclusive"}};
inline const char* to_string(NeedEventForm form) { return enum_name(need_event_forms, form); }

// Byte offsets, inside the shadow doorbell buffer and the EventIdx buffer, of
// queue qid's SQ tail and CQ head entries (32-bit little-endian each).
constexpr uint32_t dbbuf_sq_offset(uint16_t qid, uint32_t dstrd) {
  return (2u * qid) * (4u << dstrd);
}
constexpr uint32_t dbbuf_cq_offset(uint16_t qid, uint32_t dstrd) {
  return (2u * qid + 1u) * (4u << dstrd);
}
// Bytes a buffer needs to hold entries for queue ids 0..max_qid.
constexpr uint64_t dbbuf_bytes_needed(uint16_t max_qid, uint32_t dstrd) {
  return uint64_t(2u * max_qid + 2u) * (4u << dstrd);
}

// Ring arithmetic for a queue of `size` entries (2..65536). Indices are in
// [0, size). One slot stays empty: a full queue holds size - 1 entries.
struct Ring {
  uint32_t size;

  constexpr uint32_t advance(uint32_t idx, uint32_t n = 1) const { return (idx + n) % size; }
  // Entries from `from` forward to `to` (0..size-1).
  constexpr uint32_t distance(uint32_t from, uint32_t to) const {
    return (to + size - from) % size;
  }
  constexpr bool empty(uint32_t head, uint32_t tail) const { return head == tail; }
  constexpr bool full(uint32_t head, uint32_t tail) const { return advance(tail) == head; }
  constexpr uint32_t used(uint32_t head, uint32_t tail) const { return distance(head, tail); }
  constexpr uint32_t free_slots(uint32_t head, uint32_t tail) const {
    return size - 1 - used(head, tail);
  }
  constexpr bool valid_index(uint32_t idx) const { return idx < size; }
};

}  // namespace nvmesim::fw
