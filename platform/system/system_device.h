// The device a System runs (device=nvme or virtio-blk) as System uses it
// once it is built: its BAR0 and endpoint for the wiring, its statistics
// group in the tree, its ioeventfds, what it has under way, how its queues
// stand in a stall report, its trace tracks. System picks the kind once,
// in its constructor (system_device()); nothing after that branches on it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <systemc>
#include <tlm>
#include <vector>

#include "nvmesim/firmware/sim/statistics.h"

namespace nvmesim::models {
class NvmeControllerModel;
class PcieEndpoint;
class Vcpu;
class VirtioBlkModel;
}  // namespace nvmesim::models

namespace nvmesim::platform {

struct RunResults;
using Vcpus = std::vector<std::unique_ptr<models::Vcpu>>;

class SystemDevice {
 public:
  virtual ~SystemDevice() = default;
  virtual models::PcieEndpoint& endpoint() = 0;
  virtual tlm::tlm_target_socket<>& bar0() = 0;
  // Puts its group (with the firmware's, the backend's, the link's and its
  // engine's) into the statistics tree.
  virtual void link_stats(stats::Group& tree) = 0;
  // ioeventfd: a doorbell write at BAR0 offset `offset` without its value
  // (false: no eventfd registered there).
  virtual bool ioeventfd_notify(uint32_t offset, const sc_core::sc_time& delay) = 0;
  // Something the device will do as time passes (its own work, or a
  // spinning thread's next pass for an unfinished job's queue).
  virtual bool work_under_way(const Vcpus& vcpus) const = 0;
  // The device's part of a stall report: its state, and each unfinished
  // vCPU's queue as the driver and the device see it ("; "-separated).
  virtual std::string describe_stall(const Vcpus& vcpus) const = 0;
  // Trace tracks of its own (a hardware engine's), after the host threads'.
  virtual size_t own_tracks() const = 0;
  // What the device adds to a run's outcome (virtio-blk: its status, and a
  // broken device's reset, which ends the run without a stall).
  virtual void report_outcome(RunResults& r) const = 0;

  // The model itself, for a caller that knows the kind (tests, a hook wired
  // at construction); null for the other kind.
  virtual models::NvmeControllerModel* nvme() { return nullptr; }
  virtual models::VirtioBlkModel* virtio_blk() { return nullptr; }
};

// The device owns its model.
std::unique_ptr<SystemDevice> system_device(std::unique_ptr<models::NvmeControllerModel> controller);
std::unique_ptr<SystemDevice> system_device(std::unique_ptr<models::VirtioBlkModel> virtio);

}  // namespace nvmesim::platform
