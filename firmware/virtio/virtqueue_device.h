// The device side of one split virtqueue as QEMU runs it (hw/virtio/virtio.c:
// virtqueue_split_pop, virtqueue_fill/flush, virtio_split_should_notify,
// virtio_queue_split_set_notification), with no notion of time. Anything
// malformed the guest put in the ring calls the owner's virtio_error(): the
// device is broken (DEVICE_NEEDS_RESET) and the queue stops, the run goes on.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nvmesim/firmware/virtio/virtio_spec.h"

namespace nvmesim::fw {

// The transport the device firmware runs on (a model, or a test harness).
class VirtioDeviceEnv {
 public:
  virtual ~VirtioDeviceEnv() = default;
  // DMA to guest memory; false when the range is not guest memory.
  virtual bool dma_read(uint64_t addr, void* dst, uint32_t len) = 0;
  virtual bool dma_write(uint64_t addr, const void* src, uint32_t len) = 0;
  // [addr, addr + len) is guest memory the device can map (QEMU's
  // dma_memory_map of a descriptor's buffer, len > 0): by default a read of
  // its first and last byte; a transport may check it without a transfer.
  virtual bool dma_mappable(uint64_t addr, uint32_t len) {
    uint8_t probe;
    return dma_read(addr, &probe, 1) && dma_read(addr + len - 1, &probe, 1);
  }
  // The device's smp_mb(): its stores are visible before its later loads.
  virtual void device_barrier() = 0;
  // Send the MSI-X message of `vector`.
  virtual void msix(uint16_t vector) = 0;
};

// A buffer of a popped chain (QEMU maps it to an iovec).
struct VirtqSegment {
  uint64_t addr;
  uint32_t len;
};

// A popped chain (QEMU's VirtQueueElement): readable (out) then writable (in).
struct VirtqElement {
  uint16_t head = 0;
  std::vector<VirtqSegment> out, in;
  uint32_t in_bytes() const {
    uint32_t n = 0;
    for (const auto& s : in) n += s.len;
    return n;
  }
};

// Receives virtio_error(): the device marks itself broken.
class VirtioErrorSink {
 public:
  virtual ~VirtioErrorSink() = default;
  virtual void virtio_error(const std::string& message) = 0;
  virtual bool broken() const = 0;
};

class VirtqueueDevice {
 public:
  VirtqueueDevice(VirtioDeviceEnv& env, VirtioErrorSink& device) : env_(&env), device_(&device) {}

  // queue_enable with the driver's addresses; event_idx: VIRTIO_RING_F_EVENT_IDX
  // negotiated, indirect: VIRTIO_RING_F_INDIRECT_DESC negotiated.
  void enable(const virtio::SplitRing& ring, bool event_idx, bool indirect = false);
  void reset();
  bool enabled() const { return enabled_; }

  // virtio_queue_empty: no new avail entry (also true while the device is broken).
  bool empty();
  enum class PopResult { Empty, Element, Error };
  // virtqueue_split_pop: the next chain; with EVENT_IDX, avail_event becomes
  // the new last_avail_idx. Error: virtio_error() was called.
  PopResult pop(VirtqElement& out);
  // virtqueue_push (fill + flush of one element): used ring entry, then used->idx.
  // Nothing reaches the ring once the device is broken (QEMU's virtio_device_disabled).
  void push(const VirtqElement& elem, uint32_t len);
  // virtio_should_notify: used_event (EVENT_IDX) or avail->flags NO_INTERRUPT.
  bool should_notify();
  // virtio_queue_set_notification: EVENT_IDX: avail_event = avail->idx;
  // otherwise used->flags NO_NOTIFY cleared (enable) or set (disable).
  void set_notification(bool enable);
  // vq->notification: what the last set_notification asked for (on after
  // enable and reset); virtio_queue_get_notification.
  bool notification() const { return notification_; }

  // vhost's notification switch (Linux drivers/vhost/vhost.c), for a device
  // that busy-polls (virtio.busy_poll). disable_notify: VRING_USED_F_NO_NOTIFY
  // set without EVENT_IDX; with it nothing is written, avail_event just stays
  // where the last enable put it. enable_notify: NO_NOTIFY cleared, or
  // avail_event = the avail->idx last read; then a full barrier and avail->idx
  // read again: true when the driver slipped entries in meanwhile (virtio 1.x
  // sections 2.7.7 and 2.7.10; vhost_enable_notify's race-free re-enable).
  void disable_notify();
  bool enable_notify();
  // QEMU's pop stores avail_event = last_avail_idx after every element;
  // vhost_get_vq_desc never does (off for a busy-polling device).
  void set_avail_event_on_pop(bool on) { avail_event_on_pop_ = on; }

  uint16_t last_avail_idx() const { return last_avail_idx_; }
  uint16_t used_idx() const { return used_idx_; }
  uint32_t inuse() const { return inuse_; }
  const virtio::SplitRing& ring() const { return ring_; }
  // avail_event writes (EVENT_IDX), for the statistics.
  uint64_t avail_event_writes() const { return avail_event_writes_; }

 private:
  bool read16(uint64_t addr, uint16_t& v, const char* what);
  bool write16(uint64_t addr, uint16_t v, const char* what);
  bool read_desc(uint32_t i, virtio::Desc& d);
  // Entry i of the indirect table at `table` (mapped as a whole before).
  bool read_table_desc(uint64_t table, uint32_t i, virtio::Desc& d);
  void set_avail_event(uint16_t v);

  VirtioDeviceEnv* env_;
  VirtioErrorSink* device_;
  virtio::SplitRing ring_;
  bool enabled_ = false;
  bool event_idx_ = false;
  bool indirect_ = false;
  bool avail_event_on_pop_ = true;
  bool notification_ = true;
  uint16_t last_avail_idx_ = 0;
  uint16_t shadow_avail_idx_ = 0;
  uint16_t used_idx_ = 0;
  uint32_t inuse_ = 0;
  uint16_t signalled_used_ = 0;
  bool signalled_used_valid_ = false;
  uint64_t avail_event_writes_ = 0;
};

}  // namespace nvmesim::fw
