// Test harness for the virtio firmware: one guest memory shared by the
// virtio-blk driver (as its CPU) and device (as its DMA), the driver's BAR
// accesses going straight to the device, notifications and MSI-X recorded
// so a test decides when the device and the driver run.
#pragma once

#include <cstdint>
#include <cstring>
#include <deque>
#include <vector>

#include "nvmesim/firmware/virtio/virtio_blk_device.h"
#include "nvmesim/firmware/guest/virtio_blk_driver.h"

namespace virtiotest {

using namespace nvmesim::fw;

// A 4 KiB read (8 blocks of 512 bytes) at `lba`.
inline IoSpec read_at(uint64_t lba) {
  IoSpec io;
  io.opcode = nvmesim::nvme::io::READ;
  io.slba = lba;
  io.nlb = 8;
  return io;
}

class Harness : public VirtioDriverEnv, public VirtioDeviceEnv {
 public:
  static constexpr uint64_t MEM_BYTES = 8u << 20;
  static constexpr uint64_t REGION = 1u << 20;  // the driver's region starts here

  // indirect: both sides offer / accept VIRTIO_RING_F_INDIRECT_DESC;
  // vhost_notify: the device switches notifications as vhost does (virtio.busy_poll).
  Harness(uint16_t queues, uint16_t queue_size, bool device_event_idx, bool driver_event_idx,
          bool indirect = false, bool vhost_notify = false)
      : mem(MEM_BYTES, 0),
        device(device_config(queues, queue_size, device_event_idx, indirect, vhost_notify), *this),
        driver(driver_config(queues, queue_size, driver_event_idx, indirect), *this) {}

  static VirtioBlkDeviceConfig device_config(uint16_t queues, uint16_t size, bool event_idx, bool indirect,
                                             bool vhost_notify = false) {
    VirtioBlkDeviceConfig c;
    c.vhost_notify = vhost_notify;
    c.num_queues = queues;
    c.queue_size_max = size;
    c.event_idx = event_idx;
    c.indirect_desc = indirect;
    c.capacity_sectors = 1u << 20;
    return c;
  }
  static VirtioBlkDriverConfig driver_config(uint16_t queues, uint16_t size, bool event_idx, bool indirect) {
    VirtioBlkDriverConfig c;
    c.queues = queues;
    c.queue_size = size;
    c.event_idx = event_idx;
    c.indirect_desc = indirect;
    c.max_transfer_bytes = 4096;
    c.memory_base = REGION;
    c.memory_bytes = MEM_BYTES - REGION;
    return c;
  }

  // VirtioDriverEnv
  uint8_t* guest_memory(uint64_t gpa, uint32_t len) override {
    REQUIRE(gpa + len <= mem.size());
    return mem.data() + gpa;
  }
  void write_barrier() override {}
  void read_barrier() override {}
  void full_barrier() override {}
  uint32_t mmio_read(uint32_t offset, unsigned size) override { return device.bar_read(offset, size); }
  void mmio_write(uint32_t offset, unsigned size, uint32_t value) override {
    int q = -1;
    device.bar_write(offset, size, value, &q);
    if (q >= 0) notified.push_back(uint16_t(q));
  }
  // VirtioDeviceEnv
  bool dma_read(uint64_t addr, void* dst, uint32_t len) override {
    if (addr > mem.size() || mem.size() - addr < len) return false;
    std::memcpy(dst, mem.data() + addr, len);
    return true;
  }
  bool dma_write(uint64_t addr, const void* src, uint32_t len) override {
    if (addr > mem.size() || mem.size() - addr < len) return false;
    std::memcpy(mem.data() + addr, src, len);
    return true;
  }
  void device_barrier() override {}
  void msix(uint16_t vector) override { msix_log.push_back(vector); }

  // The device runs every pending notify; its good requests wait in `backend`.
  void run_device() {
    while (!notified.empty()) {
      const uint16_t q = notified.front();
      notified.pop_front();
      std::vector<VirtioBlkRequest> popped;
      device.handle_queue(q, popped);
      for (auto& r : popped) backend.push_back(std::move(r));
    }
  }
  // The backend finishes `n` requests (all when n is 0), in order, status OK.
  void complete_backend(size_t n = 0) {
    if (n == 0) n = backend.size();
    for (size_t i = 0; i < n && !backend.empty(); ++i) {
      device.complete(backend.front(), virtio::BLK_S_OK);
      backend.pop_front();
    }
  }
  // The driver takes every MSI-X sent so far, one interrupt each.
  std::vector<Completion> run_driver_interrupts(uint16_t q) {
    std::vector<Completion> all;
    for (; msix_taken < msix_log.size(); ++msix_taken) {
      std::vector<VirtioBlkDriver::UsedRequest> c;
      driver.interrupt(q, c);
      for (const auto& u : c) driver.end_request(q, u.tag);  // completed: the tags are free
      all.insert(all.end(), c.begin(), c.end());
    }
    return all;
  }

  std::vector<uint8_t> mem;
  VirtioBlkDevice device;
  VirtioBlkDriver driver;
  std::deque<uint16_t> notified;
  std::deque<VirtioBlkRequest> backend;
  std::vector<uint16_t> msix_log;
  size_t msix_taken = 0;
};

}  // namespace virtiotest
