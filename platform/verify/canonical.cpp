#include "nvmesim/platform/verify/canonical.h"

#include <cstdio>

namespace nvmesim::platform::verify {

ModelConfig canonical(const ModelConfig& in) {
  ModelConfig c = in;
  c.cq_entries = in.cq_size();
  const bool active = in.dbbuf != fw::DbbufMode::Off;
  const bool covers = fw::device_dbbuf_covers(active, in.dbbuf, in.qid);
  const bool shadow = fw::driver_uses_shadow(active, in.admin_shadow, in.qid);
  // The model reads the mode only through these two (model.cpp Ctx). The
  // driver shadowing a queue the device does not cover is only the vendor
  // device's admin queue.
  c.dbbuf = covers ? fw::DbbufMode::Spec : shadow ? fw::DbbufMode::Vendor : fw::DbbufMode::Off;
  c.admin_shadow = shadow && in.qid == 0;
  if (!covers) {
    // The device never reaches an EventIdx store or a shadow re-read, and
    // takes every MMIO value.
    c.sq_eventidx = c.cq_eventidx = fw::EventIdxPolicy::Echo;
    c.mmio_doorbell_value = fw::MmioDoorbellValue::Use;
    c.device_order = DeviceOrder::StoreBarrierLoad;
    c.order_override = nullptr;
  } else if (in.qid == 0) {
    c.mmio_doorbell_value = fw::MmioDoorbellValue::Use;  // the admin queue always takes the value
  }
  if (!shadow) {
    // Every publish is an MMIO write: no barrier, no EventIdx load, no decision.
    c.full_barrier = true;
    c.need_event = fw::NeedEventForm::Linux;
    c.need_event_override = nullptr;
  }
  return c;
}

std::string model_key(const ModelConfig& in) {
  const ModelConfig c = canonical(in);
  char b[160];
  std::snprintf(b, sizeof b, "%u/%u/%u/%u/%d/%d/%d/%d/%d/%d/%d/%d/%d/%d/%p/%p", c.qsize, c.cq_entries, c.commands,
                c.qid, int(c.dbbuf), int(c.sq_eventidx), int(c.cq_eventidx), int(c.mmio_doorbell_value),
                int(c.full_barrier), int(c.need_event), int(c.admin_shadow), int(c.memory), int(c.device_order),
                int(c.reset), reinterpret_cast<void*>(c.need_event_override),
                static_cast<const void*>(c.order_override));
  return b;
}

}  // namespace nvmesim::platform::verify
