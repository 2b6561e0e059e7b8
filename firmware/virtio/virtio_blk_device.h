// A modern (virtio 1.x) PCI virtio-blk device as QEMU emulates it
// (hw/virtio/virtio-pci.c common config, hw/virtio/virtio.c status and
// virtio_error, hw/block/virtio-blk.c requests), with no notion of time: the
// four capability regions' registers, the queues, the request parsing. The
// model times it and hands the requests to its backend.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nvmesim/firmware/sim/statistics.h"
#include "nvmesim/firmware/virtio/virtqueue_device.h"

namespace nvmesim::fw {

struct VirtioBlkDeviceConfig {
  uint16_t num_queues = 1;        // offered with VIRTIO_BLK_F_MQ
  uint16_t queue_size_max = 256;  // QUEUE_SIZE before the driver writes it (QEMU's queue-size)
  bool event_idx = true;          // offer VIRTIO_RING_F_EVENT_IDX
  bool indirect_desc = true;      // offer VIRTIO_RING_F_INDIRECT_DESC (QEMU's indirect_desc, on by default)
  uint64_t capacity_sectors = 0;  // in 512-byte sectors
  uint32_t blk_size = 512;
  uint32_t seg_max = 126;         // QEMU: queue size - 2 (capped)
  // Notifications switched as vhost does (virtio.busy_poll): handle_polled
  // leaves them off, pops never write avail_event.
  bool vhost_notify = false;
};

// A checked block request for the backend.
struct VirtioBlkRequest {
  uint16_t queue = 0;
  uint32_t type = 0;
  uint64_t sector = 0;
  uint32_t data_bytes = 0;  // bytes of the data buffers
  uint64_t status_addr = 0;
  VirtqElement elem;
};

// The "virtio_blk" statistics group.
struct VirtioBlkDeviceCounters : stats::Group {
  using Scalar = stats::Scalar;
  Scalar notifies{*this, "notifies", stats::Unit::Count, "queue notify writes the device received (kicks)"};
  Scalar requests{*this, "requests", stats::Unit::Count, "request chains popped from the avail rings"};
  Scalar interrupts{*this, "interrupts", stats::Unit::Count,
                    "used-ring notifications sent as MSI-X (virtio_notify found them due)"};
  Scalar interrupts_suppressed{*this, "interrupts_suppressed", stats::Unit::Count,
                               "used-ring updates for which used_event (or NO_INTERRUPT) held the interrupt back"};
  Scalar avail_event_writes{*this, "avail_event_writes", stats::Unit::Count,
                            "avail_event stores (VIRTIO_RING_F_EVENT_IDX)"};
  Scalar errors{*this, "errors", stats::Unit::Count,
                "virtio_error calls: malformed guest input that broke the device (DEVICE_NEEDS_RESET)"};
};

// The "virtio_blk.aio_poll" group: QEMU's AioContext polling of the queues
// (an iothread with hv.poll_max > 0; the model adds it only then).
struct VirtioAioPollCounters : stats::Group {
  using Scalar = stats::Scalar;
  Scalar poll_begins{*this, "poll_begins", stats::Unit::Count,
                     "io_poll_begin calls: a queue's notifications switched off as its thread started polling"};
  Scalar poll_ends{*this, "poll_ends", stats::Unit::Count,
                   "io_poll_end calls: notifications switched back on before the thread slept"};
  Scalar poll_end_found{*this, "poll_end_found", stats::Unit::Count,
                        "poll ends whose last look at avail->idx found entries (handled without sleeping)"};
  Scalar notifies_while_off{*this, "notifies_while_off", stats::Unit::Count,
                            "kicks that arrived while the queue's notifications were off (EVENT_IDX, or a race)"};
};

class VirtioBlkDevice : public VirtioErrorSink {
 public:
  // Offsets of the capability regions in the BAR (QEMU's modern layout:
  // common 0x0000, ISR 0x1000, device 0x2000, notify 0x3000, one 0x1000 page each).
  static constexpr uint32_t COMMON_OFFSET = 0x0000;
  static constexpr uint32_t ISR_OFFSET = 0x1000;
  static constexpr uint32_t DEVICE_OFFSET = 0x2000;
  static constexpr uint32_t NOTIFY_OFFSET = 0x3000;
  static constexpr uint32_t REGION_BYTES = 0x1000;
  static constexpr uint32_t BAR_BYTES = 0x4000;
  static constexpr uint32_t NOTIFY_OFF_MULTIPLIER = 4;  // QEMU without page-per-vq

  VirtioBlkDevice(const VirtioBlkDeviceConfig& config, VirtioDeviceEnv& env);

  // BAR accesses (1, 2 or 4 bytes). A write to queue q's notify address
  // returns q in *notified_queue (else -1): the model schedules handle_queue(q).
  uint32_t bar_read(uint32_t offset, unsigned size);
  void bar_write(uint32_t offset, unsigned size, uint32_t value, int* notified_queue);

  // virtio_blk_handle_vq: pop every request (notifications suppressed while
  // popping), completing malformed ones at once (IOERR / UNSUPP); returns the
  // good ones in `good` (cleared first; the caller keeps it, so a kick
  // allocates nothing once it has grown). Stops when the device breaks.
  void handle_queue(uint16_t q, std::vector<VirtioBlkRequest>& good);
  // The busy-polling form (vhost_net's handle_tx with busy polling): pops
  // every request with notifications off and leaves them off; the caller
  // polls avail_empty and, when its window expires, calls reenable.
  void handle_polled(uint16_t q, std::vector<VirtioBlkRequest>& good);
  // vhost_vq_avail_empty: nothing new on the avail ring (or broken).
  bool avail_empty(uint16_t q);
  // vhost_enable_notify: true when the re-check found entries (the caller
  // handles them with handle_polled, which switches notifications off again).
  bool reenable(uint16_t q);
  // AioContext polling (util/aio-posix.c poll_set_started, hw/virtio/virtio.c):
  // virtio_queue_host_notifier_aio_poll_begin -> virtio_queue_set_notification(vq, 0);
  // _poll_end -> virtio_queue_set_notification(vq, 1), then the last
  // io_poll (virtio_queue_host_notifier_aio_poll: !virtio_queue_empty): true
  // when entries are there. With EVENT_IDX both switches store avail_event =
  // avail->idx, so the guest is not silenced (it kicks when it publishes on a
  // drained ring); without it VRING_USED_F_NO_NOTIFY is set and cleared.
  void poll_begin(uint16_t q);
  bool poll_end(uint16_t q);
  VirtioAioPollCounters& aio_poll_counters() { return aio_poll_; }

  // virtio_blk_req_complete: status byte, used ring, then virtio_notify.
  // Returns true when an interrupt was sent.
  bool complete(const VirtioBlkRequest& req, uint8_t status);

  // VirtioErrorSink: virtio_error(): broken, DEVICE_NEEDS_RESET, config change.
  void virtio_error(const std::string& message) override;
  bool broken() const override { return broken_; }
  const std::string& error() const { return error_; }

  uint8_t status() const { return status_; }
  uint64_t host_features() const { return host_features_; }
  uint64_t guest_features() const { return guest_features_; }
  bool event_idx() const { return (guest_features_ & virtio::bit(virtio::F_RING_EVENT_IDX)) != 0; }
  bool indirect_desc() const { return (guest_features_ & virtio::bit(virtio::F_RING_INDIRECT_DESC)) != 0; }
  uint16_t num_queues() const { return config_.num_queues; }
  VirtqueueDevice& queue(uint16_t q) { return *queues_[q].vq; }
  uint16_t queue_vector(uint16_t q) const { return queues_[q].vector; }
  VirtioBlkDeviceCounters& counters() { return counters_; }

 private:
  struct Queue {
    std::unique_ptr<VirtqueueDevice> vq;
    uint16_t size = 0;
    uint16_t vector = virtio::NO_VECTOR;
    bool enabled = false;
    uint64_t desc = 0, driver = 0, device = 0;
  };
  uint32_t common_read(uint32_t off, unsigned size);
  void common_write(uint32_t off, uint32_t value);
  uint32_t device_config_read(uint32_t off, unsigned size) const;
  void set_status(uint8_t value);
  void reset();
  void notify(uint16_t q);  // virtio_notify
  // virtio_blk_handle_request for each chain popped until the ring is empty.
  void pop_requests(uint16_t q, std::vector<VirtioBlkRequest>& good);
  void sync_avail_event_stat();

  VirtioBlkDeviceConfig config_;
  VirtioDeviceEnv& env_;
  std::vector<Queue> queues_;
  VirtioBlkDeviceCounters counters_;
  uint64_t host_features_ = 0;
  uint64_t guest_features_ = 0;
  uint32_t device_feature_select_ = 0, driver_feature_select_ = 0;
  uint16_t queue_select_ = 0;
  uint16_t config_vector_ = virtio::NO_VECTOR;
  uint8_t status_ = 0;
  uint8_t isr_ = 0;
  uint8_t config_generation_ = 0;
  bool broken_ = false;
  std::string error_;
  uint64_t avail_event_writes_seen_ = 0;
  VirtioAioPollCounters aio_poll_;
};

}  // namespace nvmesim::fw
