// A whole system assembled from a configuration: guest memory, PCIe root
// complex, NVMe controller with its backend and host emulation thread, the
// hypervisor, and one vCPU per job running the guest driver.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <systemc>
#include <vector>

#include "nvmesim/firmware/sim/statistics.h"
#include "nvmesim/platform/report/results.h"

namespace nvmesim::models {
class GuestMemory;
class PcieLink;
class PcieRootComplex;
class NvmeControllerModel;
class VirtioBlkModel;
class HostThread;
class HostCpus;
class BigLock;
class Hypervisor;
class Guest;
class Vcpu;
}  // namespace nvmesim::models

namespace nvmesim::platform {

class Config;
struct SystemParams;
class SystemDevice;

class System {
 public:
  // Elaborates the modules (SystemC elaborates once per process: build one
  // System per process). Throws ConfigError for combinations that cannot run.
  // `job_configs` (fio job files whose sections differ): vCPU j runs the
  // workload (rw, bs, iodepth, ...) of *job_configs[j], one vCPU per entry;
  // empty: numjobs vCPUs with the flat options of `config`.
  // vcpu_waits_for[v]: the vCPUs whose jobs must finish before vCPU v's
  // starts (fio's stonewall / wait_for; empty: all start together).
  explicit System(const Config& config, std::vector<const Config*> job_configs = {},
                  const std::vector<std::vector<unsigned>>& vcpu_waits_for = {});
  // The system keeps a reference to its configuration: a temporary would dangle.
  explicit System(const Config&& config, std::vector<const Config*> job_configs = {},
                  const std::vector<std::vector<unsigned>>& vcpu_waits_for = {}) = delete;
  ~System();

  // Simulates until every job is done (or a stall is detected) and returns
  // the figures.
  RunResults run();

  // The device's model, for a caller that knows its kind (tests):
  // controller() for device=nvme only, virtio() null unless device=virtio-blk.
  models::NvmeControllerModel& controller();
  models::VirtioBlkModel* virtio();
  SystemDevice& device() { return *device_; }  // either, as System uses it
  models::Guest& guest() { return *guest_; }
  models::GuestMemory& memory() { return *memory_; }
  models::Hypervisor& hypervisor() { return *hypervisor_; }
  std::vector<std::unique_ptr<models::Vcpu>>& vcpus() { return vcpus_; }
  // The device tracks of a trace, ids 0..n-1: the host threads, or the
  // controller's hardware engine (hv.passthrough: track 0).
  size_t host_thread_count() const;
  // Every component's statistics group, by name ("vcpu0", "nvme", ...);
  // reset when measurement starts.
  stats::Group& stats() { return stats_; }

 private:
  void link_stats();
  void set_passthrough_traps(const SystemParams& p);
  void start_measurement();
  void watchdog();
  sc_core::sc_time next_watchdog_tick(uint64_t outstanding) const;
 public:
  // Called at each watchdog tick (every sim.stall_timeout of simulated
  // time) with the I/Os completed so far: progress on a terminal.
  void on_progress(std::function<void(uint64_t ios)> report) { progress_ = std::move(report); }

 private:
  std::function<void(uint64_t)> progress_;
  bool work_under_way() const;  // some component will make progress as time passes

  const Config& config_;
  std::vector<const Config*> job_configs_;
  std::unique_ptr<models::PcieLink> link_;
  std::unique_ptr<models::GuestMemory> memory_;
  std::unique_ptr<models::PcieRootComplex> root_complex_;
  std::unique_ptr<models::HostCpus> host_cpus_;
  std::unique_ptr<models::BigLock> bql_;
  std::vector<std::unique_ptr<models::HostThread>> host_threads_;  // [0]: main loop
  std::unique_ptr<SystemDevice> device_;  // NVMe or virtio-blk: the kind is chosen once, in the constructor
  std::unique_ptr<models::Hypervisor> hypervisor_;
  std::unique_ptr<models::Guest> guest_;
  std::vector<std::unique_ptr<models::Vcpu>> vcpus_;
  stats::Group stats_;
  stats::GroupValues bringup_stats_;  // the whole tree when measurement started
  struct Watchdog;
  std::unique_ptr<Watchdog> watchdog_;
  bool stall_ = false;
  std::string stall_report_;
};

}  // namespace nvmesim::platform
