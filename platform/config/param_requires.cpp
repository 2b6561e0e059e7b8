#include "nvmesim/platform/config/param_requires.h"

#include <algorithm>

#include "nvmesim/platform/config/device_backend.h"
#include "nvmesim/platform/config/params.h"

namespace nvmesim::platform {

const std::vector<ParamRequirement>& param_requirements() {
  static const std::vector<ParamRequirement> table = {
      // The fault is in the ioeventfd path (Ming Lin's uncleared eventfd):
      // with any other notify mode no eventfd exists to leave uncleared.
      {"hv.fault", "none", "hv.notify", {"ioeventfd"}, true, "no eventfd exists to fault"},
      // Only the ram backend stores data; null and latency move none, so
      // every read would compare as a mismatch. The device's backend: with
      // device=virtio-blk the check reads virtio.backend (device_backend.h).
      {"verify", "off", "nvme.backend", {"ram"}, true, "only the ram backend keeps the data written"},
      // The link model's parameters (models/pcie/pcie_link.cpp) and the emulated
      // device's: each mode reads only its own.
      {"pcie.gen", nullptr, "pcie.mode", {"link"}, false, "the emulated device has no link"},
      {"pcie.lanes", nullptr, "pcie.mode", {"link"}, false, "the emulated device has no link"},
      {"pcie.mps", nullptr, "pcie.mode", {"link"}, false, "the emulated device has no link"},
      {"pcie.mrrs", nullptr, "pcie.mode", {"link"}, false, "the emulated device has no link"},
      {"pcie.tlp_overhead", nullptr, "pcie.mode", {"link"}, false, "the emulated device has no link"},
      {"pcie.read_rtt", nullptr, "pcie.mode", {"link"}, false, "the emulated device has no link"},
      {"pcie.host_copy_gbps", nullptr, "pcie.mode", {"emulated"}, false, "the link model times transfers"},
      {"pcie.emulated_access", nullptr, "pcie.mode", {"emulated"}, false, "the link model times transfers"},
      {"hv.timer_delay", nullptr, "hv.notify", {"timer"}, false, "no timer is armed"},
      // Wake-up IPIs: only a virtqueue shared by several jobs has one vCPU
      // complete another's I/O (an NVMe queue is a job's own).
      {"hv.exit_ipi", nullptr, "hv.ipiv", {"off"}, false, "IPI virtualization sends IPIs without an exit"},
      {"hv.exit_ipi", nullptr, "device", {"virtio-blk"}, false, "only jobs sharing a virtqueue wake another vCPU"},
      {"hv.ipiv", nullptr, "device", {"virtio-blk"}, false, "only jobs sharing a virtqueue wake another vCPU"},
      // Each device reads its own settings: virtio.* the virtio-blk function,
      // the doorbell buffer and its EventIdx the NVMe controller and driver.
      {"virtio.event_idx", nullptr, "device", {"virtio-blk"}, false, "no virtio-blk device is built"},
      {"virtio.indirect_desc", nullptr, "device", {"virtio-blk"}, false, "no virtio-blk device is built"},
      {"virtio.queue_size", nullptr, "device", {"virtio-blk"}, false, "no virtio-blk device is built"},
      {"virtio.queues", nullptr, "device", {"virtio-blk"}, false, "no virtio-blk device is built"},
      {"virtio.backend", nullptr, "device", {"virtio-blk"}, false, "the NVMe controller's backend is nvme.backend"},
      {"virtio.backend_latency", nullptr, "device", {"virtio-blk"}, false,
       "the NVMe controller's backend is nvme.backend"},
      {"virtio.backend_concurrency", nullptr, "device", {"virtio-blk"}, false,
       "the NVMe controller's backend is nvme.backend"},
      {"virtio.backend_bandwidth", nullptr, "device", {"virtio-blk"}, false,
       "the NVMe controller's backend is nvme.backend"},
      {"virtio.capacity", nullptr, "device", {"virtio-blk"}, false, "the NVMe namespace's size is nvme.capacity"},
      {"guest.virtio_fault", "none", "device", {"virtio-blk"}, true, "the fault is in a virtqueue"},
      {"guest.virtio_fault_after", nullptr, "device", {"virtio-blk"}, false, "no virtio-blk device is built"},
      {"nvme.dbbuf", nullptr, "device", {"nvme"}, false, "virtio-blk uses VIRTIO_RING_F_EVENT_IDX (virtio.event_idx)"},
      {"nvme.sq_eventidx", nullptr, "device", {"nvme"}, false, "virtio-blk writes avail_event as QEMU does"},
      {"nvme.cq_eventidx", nullptr, "device", {"nvme"}, false, "virtio-blk has no CQ doorbell"},
      {"nvme.sq_poll", "off", "device", {"nvme"}, false, "virtio-blk's queues are polled by QEMU's own handlers"},
      {"nvme.sq_poll", "off", "hv.device_thread", {"iothread"}, false, "only an iothread polls (hv.poll_max)"},
      {"guest.need_event", nullptr, "device", {"nvme"}, false, "virtio_ring uses vring_need_event"},
      {"hv.fault", "none", "device", {"nvme"}, false, "the eventfd fault is modelled for the NVMe device"},
      // hv.passthrough: a real SSD behind VFIO. It is modelled for the NVMe
      // device; the device takes doorbell writes itself (no notify mode, no
      // shadow doorbells, no emulation thread); the VFIO page settings
      // matter only with it.
      {"hv.passthrough", "off", "device", {"nvme"}, true, "passthrough is modelled for the NVMe device"},
      {"hv.notify", "deferred", "hv.passthrough", {"off"}, true, "a passed-through device takes its doorbell writes itself"},
      {"nvme.dbbuf", "off", "hv.passthrough", {"off"}, true, "a real SSD offers no Doorbell Buffer Config"},
      {"hv.device_thread", nullptr, "hv.passthrough", {"off"}, false, "a passed-through device runs no emulation thread"},
      {"hv.iothreads", nullptr, "hv.passthrough", {"off"}, false, "a passed-through device runs no emulation thread"},
      {"hv.msix_bar_mmap", nullptr, "hv.passthrough", {"on"}, false, "only a passed-through device's BARs are mapped"},
      {"hv.page_size", nullptr, "hv.passthrough", {"on"}, false, "only a passed-through device's BARs are mapped"},
      // The controller's two engines (ARCHITECTURE.md): a passed-through SSD
      // runs on its hardware engine, timed by nvme.clock and its cycles; an
      // emulated one on QEMU's, timed by the host CPU costs.
      {"nvme.clock", nullptr, "hv.passthrough", {"on"}, false,
       "the controller runs on QEMU's emulation; the hardware engine's clock and cycles time a passed-through SSD"},
      {"nvme.doorbell_decode_cycles", nullptr, "hv.passthrough", {"on"}, false,
       "the controller runs on QEMU's emulation; the hardware engine's clock and cycles time a passed-through SSD"},
      {"nvme.sqe_fetch_cycles", nullptr, "hv.passthrough", {"on"}, false,
       "the controller runs on QEMU's emulation; the hardware engine's clock and cycles time a passed-through SSD"},
      {"nvme.command_parse_cycles", nullptr, "hv.passthrough", {"on"}, false,
       "the controller runs on QEMU's emulation; the hardware engine's clock and cycles time a passed-through SSD"},
      {"nvme.backend_handoff_cycles", nullptr, "hv.passthrough", {"on"}, false,
       "the controller runs on QEMU's emulation; the hardware engine's clock and cycles time a passed-through SSD"},
      {"nvme.cqe_post_cycles", nullptr, "hv.passthrough", {"on"}, false,
       "the controller runs on QEMU's emulation; the hardware engine's clock and cycles time a passed-through SSD"},
      {"nvme.msix_cycles", nullptr, "hv.passthrough", {"on"}, false,
       "the controller runs on QEMU's emulation; the hardware engine's clock and cycles time a passed-through SSD"},
      {"nvme.sqe_burst", nullptr, "hv.passthrough", {"on"}, false,
       "the controller runs on QEMU's emulation; the hardware engine's clock and cycles time a passed-through SSD"},
      {"nvme.cmd_cost", nullptr, "hv.passthrough", {"off"}, false,
       "a passed-through SSD runs on its hardware engine, timed by nvme.clock and nvme.*_cycles"},
      {"nvme.cqe_cost", nullptr, "hv.passthrough", {"off"}, false,
       "a passed-through SSD runs on its hardware engine, timed by nvme.clock and nvme.*_cycles"},
      {"nvme.backend_submit_cost", nullptr, "hv.passthrough", {"off"}, false,
       "a passed-through SSD runs on its hardware engine, timed by nvme.clock and nvme.*_cycles"},
      {"nvme.backend_complete_cost", nullptr, "hv.passthrough", {"off"}, false,
       "a passed-through SSD runs on its hardware engine, timed by nvme.clock and nvme.*_cycles"},
      // QEMU's engine's MSI and backend costs are charged by the NVMe
      // controller (virtio-blk's are not modelled); each MSI cost by its path
      // (the path rows last: a run that lacks several needs is warned about
      // the passthrough or the device first).
      {"hv.msi_ioctl_cost", nullptr, "hv.passthrough", {"off"}, false, "a passed-through SSD's MSI-X goes without QEMU"},
      {"hv.msi_irqfd_cost", nullptr, "hv.passthrough", {"off"}, false, "a passed-through SSD's MSI-X goes without QEMU"},
      {"hv.msi_ioctl_cost", nullptr, "device", {"nvme"}, false, "virtio-blk's MSIs are not costed"},
      {"hv.msi_irqfd_cost", nullptr, "device", {"nvme"}, false, "virtio-blk's MSIs are not costed"},
      {"nvme.cmd_cost", nullptr, "device", {"nvme"}, false, "virtio-blk's request cost is virtio.req_cost"},
      {"nvme.cqe_cost", nullptr, "device", {"nvme"}, false, "virtio-blk's completion cost is virtio.done_cost"},
      {"virtio.req_cost", nullptr, "device", {"virtio-blk"}, false, "the NVMe controller's is nvme.cmd_cost"},
      {"virtio.done_cost", nullptr, "device", {"virtio-blk"}, false, "the NVMe controller's is nvme.cqe_cost"},
      {"nvme.backend_submit_cost", nullptr, "device", {"nvme"}, false, "virtio-blk's backend costs are not modelled"},
      {"nvme.backend_complete_cost", nullptr, "device", {"nvme"}, false, "virtio-blk's backend costs are not modelled"},
      {"hv.msi_ioctl_cost", nullptr, "hv.msi", {"ioctl"}, false, "the MSIs go through an irqfd"},
      {"hv.msi_irqfd_cost", nullptr, "hv.msi", {"irqfd"}, false, "the MSIs go by KVM_SIGNAL_MSI"},
      // Fault injections of the NVMe driver: virtio-blk builds no PRPs and no
      // Doorbell Buffer Config; the config command is sent only with the
      // buffer on, and a passed-through SSD offers none.
      {"guest.io_prp_fault", "none", "device", {"nvme"}, false, "virtio-blk builds no PRP lists"},
      {"guest.dbbuf_fault", "none", "device", {"nvme"}, false, "virtio-blk sends no Doorbell Buffer Config"},
      {"guest.dbbuf_fault", "none", "hv.passthrough", {"off"}, false, "a real SSD is sent no Doorbell Buffer Config"},
      {"guest.dbbuf_fault", "none", "nvme.dbbuf", {"spec", "vendor"}, false,
       "no Doorbell Buffer Config is sent with the buffer off"},
      // QEMU 7.2 registers the ioeventfd only once the shadow doorbells are
      // on (hw/nvme/ctrl.c nvme_dbbuf_config -> nvme_init_sq_ioeventfd):
      // with the buffer off every doorbell write is trapped as with deferred,
      // so ioeventfd and its faults change nothing.
      {"hv.notify", nullptr, "nvme.dbbuf", {"spec", "vendor"}, false,
       "QEMU 7.2 registers the ioeventfd only with the doorbell buffer on; the run is deferred's", "ioeventfd"},
      {"hv.fault", "none", "nvme.dbbuf", {"spec", "vendor"}, false,
       "QEMU 7.2 registers the ioeventfd only with the doorbell buffer on"},
      // hv.wakeup=measured draws every wake-up from the measured tables
      // (models/host/wakeup_distribution.h): the fixed delays are not read.
      {"hv.dispatch_latency", nullptr, "hv.wakeup", {"fixed"}, false,
       "the wake-up delays are drawn from the measured tables"},
      {"hv.dispatch_jitter", nullptr, "hv.wakeup", {"fixed"}, false,
       "the wake-up delays are drawn from the measured tables"},
      {"hv.halt_wakeup", nullptr, "hv.wakeup", {"fixed"}, false,
       "the wake-up delays are drawn from the measured tables"},
  };
  return table;
}

std::vector<std::string> check_param_requirements(const Config& config) {
  // The old spellings of virtio-blk's backend parameters first.
  std::vector<std::string> warnings = backend_alias_warnings(config);
  for (const ParamRequirement& q : param_requirements()) {
    if (!config.registry().find(q.param) || !config.registry().find(q.needs)) continue;
    if (!config.is_set(q.param)) continue;
    // A preset sets a whole setup; one of its settings that the user's own
    // later choice leaves inert is no mistake of theirs (a refusal still is).
    if (config.from_preset(q.param) && !q.refuse) continue;
    const std::string& value = config.text(q.param);
    if (q.inert && value == q.inert) continue;
    if (q.only && value != q.only) continue;
    // A need of the backend is the run's device's backend (its value
    // perhaps from the old spelling).
    const bool backend = is_nvme_backend_param(q.needs);
    const std::string field = backend ? std::string(q.needs).substr(5) : "";
    const std::string needs = backend ? backend_param(config, field) : q.needs;
    const std::string& have = config.text(backend ? backend_value_param(config, field) : needs);
    if (std::find(q.values.begin(), q.values.end(), have) != q.values.end()) continue;
    std::string allowed;
    for (size_t k = 0; k < q.values.size(); ++k) allowed += (k ? " or " : "") + std::string(q.values[k]);
    const std::string what = "--" + std::string(q.param) + ": " + (q.inert || q.only ? value + " " : "") +
                             "needs " + needs + " " + allowed + " (it is " + have + ": " + q.why + ")";
    if (q.refuse) throw ConfigError(what);
    warnings.push_back("nvmesim: warning: " + what + "; the setting does nothing");
  }
  return warnings;
}

std::string param_requirements_help() {
  std::string o;
  for (const ParamRequirement& q : param_requirements()) {
    std::string allowed;
    for (size_t k = 0; k < q.values.size(); ++k) allowed += (k ? "|" : "") + std::string(q.values[k]);
    const std::string which = q.only ? std::string("=") + q.only : q.inert ? std::string(" (not ") + q.inert + ")" : "";
    // A need of the backend: the device's own (device_backend.h).
    const std::string virtio = is_nvme_backend_param(q.needs)
                                   ? " (device=virtio-blk: virtio." + std::string(q.needs).substr(5) + ")"
                                   : "";
    o += "  " + std::string(q.param) + which + " needs " + q.needs + "=" + allowed + virtio +
         (q.refuse ? " [refused]" : "") + ": " + q.why + "\n";
  }
  return o;
}

}  // namespace nvmesim::platform
