#include "nvmesim/platform/system/system_device.h"

#include <sstream>

#include "nvmesim/models/guest/vcpu.h"
#include "nvmesim/models/nvme/nvme_controller.h"
#include "nvmesim/models/virtio/virtio_blk_model.h"
#include "nvmesim/platform/report/results.h"

namespace nvmesim::platform {

namespace {

using namespace models;

class NvmeDevice : public SystemDevice {
 public:
  explicit NvmeDevice(std::unique_ptr<NvmeControllerModel> m) : model_(std::move(m)), m_(*model_) {}
  PcieEndpoint& endpoint() override { return m_; }
  tlm::tlm_target_socket<>& bar0() override { return m_.bar0_target; }
  void link_stats(stats::Group& tree) override {
    tree.add_group("nvme", m_.counters());  // with its firmware's, backend's, link's and engine's
  }
  bool ioeventfd_notify(uint32_t offset, const sc_core::sc_time& delay) override {
    return m_.ioeventfd_notify(offset, delay);
  }
  // A spinning thread (eventfd_spin) is no work of its own, but it fetches
  // the commands its SQ holds at its next pass.
  bool work_under_way(const Vcpus& vcpus) const override {
    if (m_.work_pending()) return true;
    for (const auto& v : vcpus)
      if (!v->results().finished && m_.spin_will_fetch(v->params().qid, v->driver_sq_tail())) return true;
    return false;
  }
  std::string describe_stall(const Vcpus& vcpus) const override {
    std::ostringstream r;
    for (const auto& v : vcpus) {
      if (v->results().finished) continue;
      const uint16_t q = v->params().qid;
      r << "; " << v->describe_queue(m_.describe_sq(q, v->driver_sq_tail()), m_.describe_cq(q));
    }
    return r.str();
  }
  size_t own_tracks() const override { return m_.engine().own_tracks(); }
  void report_outcome(RunResults&) const override {}
  NvmeControllerModel* nvme() override { return &m_; }

 private:
  std::unique_ptr<NvmeControllerModel> model_;
  NvmeControllerModel& m_;
};

class VirtioDevice : public SystemDevice {
 public:
  explicit VirtioDevice(std::unique_ptr<VirtioBlkModel> m) : model_(std::move(m)), m_(*model_) {}
  PcieEndpoint& endpoint() override { return m_; }
  tlm::tlm_target_socket<>& bar0() override { return m_.bar0_target; }
  void link_stats(stats::Group& tree) override {
    tree.add_group("virtio_blk", m_.counters());  // with its firmware's, backend's and link's
  }
  bool ioeventfd_notify(uint32_t offset, const sc_core::sc_time& delay) override {
    return m_.ioeventfd_notify(offset, delay);
  }
  bool work_under_way(const Vcpus&) const override { return m_.work_pending(); }
  std::string describe_stall(const Vcpus& vcpus) const override {
    std::ostringstream r;
    if (m_.firmware().broken()) r << "; virtio-blk device broken: " << m_.firmware().error();
    for (const auto& v : vcpus)
      if (!v->results().finished)
        r << "; vcpu" << v->params().index << ": " << v->outstanding() << " requests outstanding on virtqueue "
          << v->virtqueue();
    return r.str();
  }
  size_t own_tracks() const override { return 0; }
  // A broken device (virtio_error) ends the run the way a stall does, but
  // nothing in the model stalled: the guest's requests wait on a device
  // that must be reset.
  void report_outcome(RunResults& r) const override {
    const fw::VirtioBlkDevice& dev = m_.firmware();
    r.virtio = true;
    r.virtio_status = dev.status();
    r.device_needs_reset = (dev.status() & fw::virtio::STATUS_DEVICE_NEEDS_RESET) != 0;
    r.device_error = dev.error();
    if (r.device_needs_reset) r.stalled = false;
  }
  VirtioBlkModel* virtio_blk() override { return &m_; }

 private:
  std::unique_ptr<VirtioBlkModel> model_;
  VirtioBlkModel& m_;
};

}  // namespace

std::unique_ptr<SystemDevice> system_device(std::unique_ptr<NvmeControllerModel> controller) {
  return std::make_unique<NvmeDevice>(std::move(controller));
}

std::unique_ptr<SystemDevice> system_device(std::unique_ptr<VirtioBlkModel> virtio) {
  return std::make_unique<VirtioDevice>(std::move(virtio));
}

}  // namespace nvmesim::platform
