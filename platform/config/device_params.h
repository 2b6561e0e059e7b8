// device: which storage device the system is built around (see
// models/sim/param_visit.h). The NVMe controller takes nvme.*, the virtio-blk
// function virtio.* (its own backend too: platform/config/device_backend.h).
#pragma once

#include "nvmesim/firmware/sim/enum_table.h"
#include "nvmesim/models/sim/param_visit.h"

namespace nvmesim::platform {

enum class DeviceKind { Nvme, VirtioBlk };
inline constexpr fw::EnumEntry<DeviceKind> device_kinds[] = {{DeviceKind::Nvme, "nvme"},
                                                            {DeviceKind::VirtioBlk, "virtio-blk"}};

struct DeviceParams {
  DeviceKind device = DeviceKind::Nvme;

  static constexpr const char* param_prefix = "";
  template <class V>
  void visit(V& v) {
    v.choice(device, "device", "nvme", device_kinds, "",
             "storage device: NVMe controller, or a virtio 1.x virtio-blk PCI function (split virtqueues)");
  }
};

}  // namespace nvmesim::platform
