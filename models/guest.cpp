#include "models/guest.h"

#include <stdexcept>

#include "models/vcpu.h"
#include "traces/tracer.h"

using namespace sc_core;

namespace nvmesim::models {

Guest::Guest(sc_module_name name, const fw::DriverConfig& config, GuestMemory& memory,
             Hypervisor& hypervisor)
    : sc_module(name), memory_(memory), hypervisor_(hypervisor) {
  driver_ = std::make_unique<fw::Driver>(config, *this);
}

Vcpu& Guest::current() {
  if (!current_) throw std::logic_error("driver code ran outside a vCPU thread");
  return *current_;
}

void Guest::bring_up() {
  running_ = unsigned(vcpus_.size());
  bringup_ = driver_->bring_up();
  current().sync_shared_memory();
  bringup_time_ = sc_time_stamp();
  measure_start_ = sc_time_stamp();
  for (auto& hook : measure_hooks_) hook();
  ready_ = true;
  ready_event_.notify(SC_ZERO_TIME);
}

void Guest::vcpu_finished() {
  if (running_ && --running_ == 0) sc_stop();
}

void Guest::trace_shadow_store(uint64_t gpa, uint32_t value) {
  auto* t = traces::active();
  if (!t || !driver_->dbbuf_active()) return;
  const uint64_t base = driver_->shadow_buffer_addr();
  const uint32_t stride = 4u << dstrd_;
  if (gpa < base || gpa >= base + 4096) return;
  const uint64_t index = (gpa - base) / stride;
  t->queue_value(uint16_t(index / 2),
                 index % 2 ? traces::QueueSignal::ShadowCqHead : traces::QueueSignal::ShadowSqTail,
                 sc_time_stamp().value(), value);
}

uint8_t* Guest::guest_memory(uint64_t gpa, uint32_t len) {
  uint8_t* p = memory_.ptr(gpa, len);
  if (!p) throw std::logic_error("driver touched memory outside guest RAM");
  return p;
}

uint32_t Guest::mmio_read32(uint32_t offset) { return current().mmio_read32(offset); }
uint64_t Guest::mmio_read64(uint32_t offset) { return current().mmio_read64(offset); }
void Guest::mmio_write32(uint32_t offset, uint32_t value) { current().mmio_write32(offset, value); }
void Guest::mmio_write64(uint32_t offset, uint64_t value) { current().mmio_write64(offset, value); }
// x86: stores are not reordered with stores, and the SQ entry was written
// before: wmb() costs nothing and orders nothing the model could reorder.
void Guest::write_barrier() {}
void Guest::full_barrier() { current().full_barrier(); }
uint32_t Guest::load_shadow(uint64_t gpa) { return current().load_shadow(gpa); }
void Guest::store_shadow(uint64_t gpa, uint32_t value) { current().store_shadow(gpa, value); }
uint32_t Guest::load_eventidx(uint64_t gpa) { return current().load_eventidx(gpa); }
void Guest::wait_ns(uint64_t ns) { current().wait_ns(ns); }

}  // namespace nvmesim::models
