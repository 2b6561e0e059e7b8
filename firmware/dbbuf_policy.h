// Doorbell-buffer modes and the device's EventIdx policies.
#pragma once

#include <cstdint>

#include "firmware/enum_table.h"

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

// The names nvme.dbbuf, nvme.sq_eventidx / nvme.cq_eventidx and
// nvme.mmio_doorbell_value take (models/nvme_controller.h).
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
