// Everything System builds from: one load per component's Params, the
// values that follow from several of them, and the checks that need the
// whole system (the per-Config cross-field checks are Config::validate_all's).
#pragma once

#include <vector>

#include "nvmesim/models/guest/guest.h"
#include "nvmesim/models/mem/guest_memory.h"
#include "nvmesim/models/nvme/nvme_controller.h"
#include "nvmesim/models/pcie/pcie_link.h"
#include "nvmesim/models/guest/vcpu.h"
#include "nvmesim/models/virtio/virtio_blk_model.h"
#include "nvmesim/platform/config/device_params.h"
#include "nvmesim/platform/config/hv_params.h"
#include "nvmesim/platform/config/sim_params.h"

namespace nvmesim::platform {

class Config;

struct SystemParams {
  std::vector<models::WorkloadParams> jobs;  // one per vCPU
  uint32_t iodepth = 0, bs = 0;              // the largest of the jobs' (queues and buffers fit them)
  SimParams sim;
  models::GuestMemoryParams mem;
  models::GuestParams guest;                 // driver fields from the workload and controller set too
  // hv.notify, hv.timer_delay, hv.fault as given (the device's engine runs
  // hv.notify as hv.device_thread and hv.passthrough allow: its copy).
  models::NotifierParams notifier;
  models::NvmeControllerModel::Params nvme;  // auto choices resolved
  models::PcieLinkParams pcie;
  HvParams hv;
  DeviceParams device;
  models::VirtioBlkModel::Params virtio;     // device=virtio-blk: backend and costs from nvme.*
  fw::VirtioBlkDriverConfig virtio_driver;   // the guest's virtio_blk for it
  uint32_t numjobs() const { return uint32_t(jobs.size()); }
};

// `job_configs` empty: numjobs vCPUs with the workload of `config`; else
// vCPU j runs *job_configs[j]'s.
SystemParams load_system_params(const Config& config, const std::vector<const Config*>& job_configs);

// Throws ConfigError for combinations that cannot run (an iodepth a
// virtqueue cannot hold, more jobs than I/O queues, queues that do not fit
// the doorbell-buffer page, a notify mode without a host thread, guest
// memory too small for the driver, ...). `config` gives the values as the
// user wrote them, for the messages.
void check_system_params(const SystemParams& params, const Config& config);

}  // namespace nvmesim::platform
