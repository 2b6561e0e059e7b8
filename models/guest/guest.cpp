#include "nvmesim/models/guest/guest.h"

#include "nvmesim/models/sim/activations.h"
#include "nvmesim/models/mem/address_map.h"
#include "nvmesim/models/sim/kernel_time.h"
#include "nvmesim/models/guest/vcpu.h"
#include "nvmesim/traces/tracer.h"

using namespace sc_core;

namespace nvmesim::models {

Guest::Guest(sc_module_name name, const fw::DriverConfig& config, GuestMemory& memory,
             Hypervisor& hypervisor)
    : sc_module(name), memory_(memory), hypervisor_(hypervisor) {
  driver_ = std::make_unique<fw::Driver>(config);
}

void Guest::add_vcpu(Vcpu& vcpu) {
  if (use_virtio_) {
    if (!virtio_) virtio_ = std::make_unique<fw::VirtioBlkDriver>(virtio_config_, vcpu);  // the boot CPU
    virtio_->attach_cpu(uint16_t(vcpu.params().qid - 1), vcpu);
  }
  if (vcpus_.empty()) driver_->attach_cpu(0, vcpu);
  driver_->attach_cpu(vcpu.params().qid, vcpu);
  vcpus_.push_back(&vcpu);
}

void Guest::program_msix(Vcpu& boot) {
  boot.program_msix_vector(0, msi_address(boot.params().index), boot.params().admin_vector);
  for (Vcpu* v : vcpus_)
    boot.program_msix_vector(v->params().qid, msi_address(v->params().index), v->params().io_vector);
}

void Guest::bring_up(Vcpu& boot) {
  running_ = unsigned(vcpus_.size());
  program_msix(boot);
  if (virtio_) {
    // virtio: vector 0 is the configuration change, vector q + 1 queue q's:
    // program_msix's vector 0 to the boot CPU and vector qid to its vCPU.
    const fw::VirtioBlkBringUp vb = virtio_->bring_up();
    bringup_ = fw::BringUpResult{};
    bringup_.ok = vb.ok;
    bringup_error_ = vb.error;
    bringup_.error = bringup_error_.c_str();
    bringup_.io_queues = vb.queues;
    bringup_.io_queue_entries = vb.queue_size;
    bringup_.tags_per_queue = vb.queue_depth;
    bringup_.lba_bytes = vb.blk_size;
    bringup_.namespace_lbas = vb.capacity_sectors * fw::virtio::BLK_SECTOR_BYTES / vb.blk_size;
    bringup_.vendor_id = 0x1AF4;
  } else {
    bringup_ = driver_->bring_up();
  }
  boot.sync_shared_memory();
  bringup_time_ = kernel_now();
  measure_start_ = kernel_now();
  for (auto& hook : measure_hooks_) hook();
  ready_ = true;
  activations::notify(ready_event_, SC_ZERO_TIME);
}

void Guest::vcpu_finished() {
  if (running_ && --running_ == 0) sc_stop();
}

void Guest::trace_shadow_store(uint64_t gpa, uint32_t value, const sc_time& at) {
  auto* t = traces::active();
  if (!t || !driver_->dbbuf_active()) return;
  const uint64_t base = driver_->shadow_buffer_addr();
  const uint32_t stride = 4u << dstrd_;
  if (gpa < base || gpa >= base + 4096) return;
  const uint64_t index = (gpa - base) / stride;
  t->queue_value(uint16_t(index / 2),
                 index % 2 ? traces::QueueSignal::ShadowCqHead : traces::QueueSignal::ShadowSqTail,
                 at.value(), value);
}

}  // namespace nvmesim::models
