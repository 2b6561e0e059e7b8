// The builtin parameter list: every component's Params, in --list-params
// order. A parameter is declared once, by its visit line beside its field
// (models/sim/param_visit.h); this file only lists the components.
#include "nvmesim/platform/config/params.h"

#include "nvmesim/models/guest/guest.h"
#include "nvmesim/models/mem/guest_memory.h"
#include "nvmesim/models/nvme/nvme_controller.h"
#include "nvmesim/models/pcie/pcie_link.h"
#include "nvmesim/models/guest/vcpu.h"
#include "nvmesim/models/virtio/virtio_blk_model.h"
#include "nvmesim/platform/config/device_params.h"
#include "nvmesim/platform/config/hv_params.h"
#include "nvmesim/platform/config/preset_params.h"
#include "nvmesim/platform/config/sim_params.h"
#include "nvmesim/platform/config/visitors.h"

namespace nvmesim::platform {

void register_builtin_params(ParamRegistry& r) {
  describe_params<models::WorkloadParams>(r);                // fio's flat names: the workload
  describe_params<SimParams>(r);                             // sim.*: the simulation kernel
  describe_params<models::GuestMemoryParams>(r);             // mem.*: guest memory
  describe_params<models::GuestParams>(r);                   // guest.*: the guest driver
  describe_params<models::NvmeControllerModel::Params>(r);   // nvme.*: the controller
  describe_params<models::NvmeHwEngineParams>(r);            // nvme.clock, nvme.*_cycles: its hardware engine
  describe_params<models::PcieLinkParams>(r);                // pcie.*: root complex and link
  describe_params<HvParams>(r);                              // hv.*, host.cores: the hypervisor
  describe_params<models::NotifierParams>(r);                // hv.notify, timer_delay, fault: QEMU's engine
  describe_params<models::MsiParams>(r);                     // hv.msi, msi_*_cost: QEMU's engine's MSIs
  describe_params<DeviceParams>(r);                          // device: NVMe or virtio-blk
  describe_params<PresetParams>(r);                          // preset: what the run is built on
  describe_params<models::VirtioBlkModel::Params>(r);        // virtio.*: the virtio-blk function
  describe_params<models::IoEngineParams>(r);                // uring_cmd, sqthread_poll: fio's engine (per job)
}

const ParamRegistry& ParamRegistry::builtin() {
  static const ParamRegistry registry = [] {
    ParamRegistry r;
    register_builtin_params(r);
    return r;
  }();
  return registry;
}

}  // namespace nvmesim::platform
