// How an emulated device's MSI reaches KVM (hv.msi) and what sending one
// costs the host thread that posts the completion. QEMU's NVMe device
// sends each interrupt from the thread that posts the CQEs: hw/nvme/ctrl.c
// nvme_post_cqes -> nvme_irq_assert -> hw/pci/msix.c msix_notify ->
// hw/pci/msi.c msi_send_message (a store to the APIC's MSI window) ->
// hw/i386/kvm/apic.c kvm_apic_mem_write -> kvm_send_msi ->
// accel/kvm/kvm-all.c kvm_irqchip_send_msi: a KVM_SIGNAL_MSI ioctl per
// message. A device with an irqfd route writes an eventfd instead
// (hw/virtio/virtio.c virtio_notify_irqfd -> event_notifier_set, the
// virtio-blk dataplane's path); mainline QEMU's NVMe device has none.
#pragma once

#include <systemc>

#include "nvmesim/firmware/sim/enum_table.h"
#include "nvmesim/models/sim/param_defaults.h"
#include "nvmesim/models/sim/param_visit.h"

namespace nvmesim::models {

enum class MsiPath : uint8_t { Ioctl, Irqfd };
inline constexpr fw::EnumEntry<MsiPath> msi_paths[] = {{MsiPath::Ioctl, "ioctl"}, {MsiPath::Irqfd, "irqfd"}};

struct MsiParams {
  MsiPath path{};
  sc_core::sc_time ioctl_cost;  // per KVM_SIGNAL_MSI ioctl
  sc_core::sc_time irqfd_cost;  // per eventfd write

  MsiParams() { set_param_defaults(*this); }  // the visit lines' defaults
  // What one message costs the thread that sends it.
  const sc_core::sc_time& cost() const { return path == MsiPath::Ioctl ? ioctl_cost : irqfd_cost; }

  static constexpr const char* param_prefix = "hv";
  template <class V>
  void visit(V& v) {
    using namespace param_units;
    v.choice(path, "msi", "ioctl", msi_paths, "",
             "how the emulated device's MSI reaches KVM: ioctl (KVM_SIGNAL_MSI per message, QEMU's "
             "NVMe: msix_notify -> kvm_irqchip_send_msi) or irqfd (an eventfd write, "
             "virtio_notify_irqfd)");
    v.time(ioctl_cost, "msi_ioctl_cost", "0ns", 0, 1 * MS,
           "hv.msi=ioctl: host CPU time per MSI sent, on the thread that posts the completion");
    v.time(irqfd_cost, "msi_irqfd_cost", "0ns", 0, 1 * MS,
           "hv.msi=irqfd: host CPU time per MSI sent (one eventfd write), on the thread that posts "
           "the completion");
  }
};

}  // namespace nvmesim::models
