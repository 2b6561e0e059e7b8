// The tag the controller gives each command it hands to the backend
// (IoRequest::tag): the command slot in the low 24 bits, the slot's
// generation above. The generation changes whenever a slot is released, so a
// completion for an abandoned command (reset, SQ deletion) is recognised.
// Models that route backend completions by slot read it through tag_slot().
#pragma once

#include <cstdint>

namespace nvmesim::fw {

inline constexpr uint32_t TAG_SLOT_BITS = 24;
inline constexpr uint32_t TAG_SLOT_MASK = (1u << TAG_SLOT_BITS) - 1;
// Slots a controller can hold at once (every SQ entry of every SQ).
inline constexpr uint32_t TAG_SLOT_COUNT = 1u << TAG_SLOT_BITS;

constexpr uint32_t make_tag(uint8_t generation, uint32_t slot) {
  return (uint32_t(generation) << TAG_SLOT_BITS) | (slot & TAG_SLOT_MASK);
}
constexpr uint32_t tag_slot(uint32_t tag) { return tag & TAG_SLOT_MASK; }
constexpr uint8_t tag_generation(uint32_t tag) { return uint8_t(tag >> TAG_SLOT_BITS); }

static_assert(tag_slot(make_tag(3, 0x123456)) == 0x123456);
static_assert(tag_generation(make_tag(0xAB, 7)) == 0xAB);

}  // namespace nvmesim::fw
