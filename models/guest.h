// The guest operating system around the NVMe driver: one driver instance
// (firmware/driver) shared by the vCPUs, brought up by vCPU 0 before the
// jobs start; guest memory seen directly by the vCPUs; the measured phase.
#pragma once

#include <cstdint>
#include <memory>
#include <systemc>
#include <vector>

#include "firmware/driver.h"
#include "models/guest_memory.h"
#include "models/hypervisor.h"

namespace nvmesim::models {

class Vcpu;

class Guest : public sc_core::sc_module, public fw::DriverEnv {
 public:
  Guest(sc_core::sc_module_name name, const fw::DriverConfig& config, GuestMemory& memory,
        Hypervisor& hypervisor);

  void add_vcpu(Vcpu& vcpu) { vcpus_.push_back(&vcpu); }
  // The vCPU whose thread runs now; each vCPU sets it whenever it resumes
  // (SystemC runs one process at a time), so driver calls reach it.
  void set_current(Vcpu* vcpu) { current_ = vcpu; }
  void set_doorbell_stride(uint32_t dstrd) { dstrd_ = dstrd; }  // for traces
  fw::Driver& driver() { return *driver_; }
  const fw::Driver& driver() const { return *driver_; }
  GuestMemory& memory() { return memory_; }
  Hypervisor& hypervisor() { return hypervisor_; }

  // Bring-up, by vCPU 0; the others wait for it.
  void bring_up();
  bool ready() const { return ready_; }
  const sc_core::sc_event& ready_event() const { return ready_event_; }
  const fw::BringUpResult& bringup() const { return bringup_; }
  sc_core::sc_time bringup_time() const { return bringup_time_; }
  sc_core::sc_time measure_start() const { return measure_start_; }
  // Hooks called when the measured phase starts (snapshot counters).
  void on_measure_start(std::function<void()> hook) { measure_hooks_.push_back(std::move(hook)); }

  void vcpu_finished();
  // Traces: a store to the shadow doorbell buffer became visible now.
  void trace_shadow_store(uint64_t gpa, uint32_t value);
  unsigned vcpus_running() const { return running_; }

  // fw::DriverEnv: dispatched to the vCPU whose thread is running.
  uint8_t* guest_memory(uint64_t gpa, uint32_t len) override;
  uint32_t mmio_read32(uint32_t offset) override;
  uint64_t mmio_read64(uint32_t offset) override;
  void mmio_write32(uint32_t offset, uint32_t value) override;
  void mmio_write64(uint32_t offset, uint64_t value) override;
  void write_barrier() override;
  void full_barrier() override;
  uint32_t load_shadow(uint64_t gpa) override;
  void store_shadow(uint64_t gpa, uint32_t value) override;
  uint32_t load_eventidx(uint64_t gpa) override;
  void wait_ns(uint64_t ns) override;

 private:
  Vcpu& current();

  GuestMemory& memory_;
  Hypervisor& hypervisor_;
  std::unique_ptr<fw::Driver> driver_;
  std::vector<Vcpu*> vcpus_;
  Vcpu* current_ = nullptr;
  bool ready_ = false;
  sc_core::sc_event ready_event_;
  fw::BringUpResult bringup_;
  sc_core::sc_time bringup_time_, measure_start_;
  std::vector<std::function<void()>> measure_hooks_;
  unsigned running_ = 0;
  uint32_t dstrd_ = 0;
  uint8_t scratch_[64] = {};
};

}  // namespace nvmesim::models
