// The guest operating system around the NVMe driver: one driver instance
// (firmware/driver) shared by the vCPUs, each I/O queue driven from the vCPU
// that owns it; bring-up by vCPU 0 (the boot CPU) before the jobs start;
// guest memory seen directly by the vCPUs; the measured phase.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <systemc>
#include <vector>

#include "firmware/driver.h"
#include "models/guest_memory.h"
#include "models/hypervisor.h"

namespace nvmesim::models {

class Vcpu;

class Guest : public sc_core::sc_module {
 public:
  Guest(sc_core::sc_module_name name, const fw::DriverConfig& config, GuestMemory& memory,
        Hypervisor& hypervisor);

  // The vCPU drives its I/O queue; the first one added is the boot CPU
  // (it also drives the admin queue).
  void add_vcpu(Vcpu& vcpu);
  void set_doorbell_stride(uint32_t dstrd) { dstrd_ = dstrd; }  // for traces
  fw::Driver& driver() { return *driver_; }
  const fw::Driver& driver() const { return *driver_; }
  GuestMemory& memory() { return memory_; }
  Hypervisor& hypervisor() { return hypervisor_; }

  // Bring-up, on the boot CPU `boot` (the others wait for it): the PCI core
  // programs MSI-X, then the driver brings the controller up.
  void bring_up(Vcpu& boot);
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

 private:
  // Linux's pci_alloc_irq_vectors with managed affinity: vector 0 (the
  // admin queue) to the boot CPU, vector q to the vCPU that owns I/O queue q.
  void program_msix(Vcpu& boot);

  GuestMemory& memory_;
  Hypervisor& hypervisor_;
  std::unique_ptr<fw::Driver> driver_;
  std::vector<Vcpu*> vcpus_;
  bool ready_ = false;
  sc_core::sc_event ready_event_;
  fw::BringUpResult bringup_;
  sc_core::sc_time bringup_time_, measure_start_;
  std::vector<std::function<void()>> measure_hooks_;
  unsigned running_ = 0;
  uint32_t dstrd_ = 0;
};

}  // namespace nvmesim::models
