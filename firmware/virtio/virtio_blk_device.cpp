#include "nvmesim/firmware/virtio/virtio_blk_device.h"

#include <algorithm>

namespace nvmesim::fw {

using namespace virtio;

VirtioBlkDevice::VirtioBlkDevice(const VirtioBlkDeviceConfig& config, VirtioDeviceEnv& env)
    : config_(config), env_(env) {
  host_features_ = bit(F_VERSION_1) | bit(BLK_F_SEG_MAX) | bit(BLK_F_BLK_SIZE) | bit(BLK_F_FLUSH) |
                   bit(BLK_F_MQ);
  if (config_.event_idx) host_features_ |= bit(F_RING_EVENT_IDX);
  if (config_.indirect_desc) host_features_ |= bit(F_RING_INDIRECT_DESC);
  queues_.resize(config_.num_queues);
  for (auto& q : queues_) q.vq = std::make_unique<VirtqueueDevice>(env_, *this);
  reset();
}

void VirtioBlkDevice::reset() {
  // virtio_reset: status, features, queues and the broken flag start over.
  status_ = 0;
  isr_ = 0;
  guest_features_ = 0;
  broken_ = false;
  error_.clear();
  queue_select_ = 0;
  config_vector_ = NO_VECTOR;
  for (auto& q : queues_) {
    q.vq->reset();
    q.size = config_.queue_size_max;
    q.vector = NO_VECTOR;
    q.enabled = false;
    q.desc = q.driver = q.device = 0;
  }
}

void VirtioBlkDevice::virtio_error(const std::string& message) {
  ++counters_.errors;
  if (broken_) return;
  broken_ = true;
  error_ = message;
  // VERSION_1: NEEDS_RESET, then virtio_notify_config (ISR bit 1, new
  // generation); its vector is not sent because the device is now disabled.
  status_ |= STATUS_DEVICE_NEEDS_RESET;
  if (status_ & STATUS_DRIVER_OK) {
    isr_ |= 0x3;
    ++config_generation_;
  }
}

void VirtioBlkDevice::set_status(uint8_t value) {
  if (value == 0) {
    reset();
    return;
  }
  if ((value & STATUS_FEATURES_OK) && !(status_ & STATUS_FEATURES_OK)) {
    // A modern-only device refuses a driver that did not accept VERSION_1
    // (section 6.1); FEATURES_OK then does not stick and the driver sees it.
    if (!(guest_features_ & bit(F_VERSION_1))) value &= uint8_t(~STATUS_FEATURES_OK);
  }
  status_ = value;
}

uint32_t VirtioBlkDevice::common_read(uint32_t off, unsigned size) {
  using namespace common_cfg;
  const Queue* q = queue_select_ < queues_.size() ? &queues_[queue_select_] : nullptr;
  uint32_t v = 0;
  switch (off) {
    case DEVICE_FEATURE_SELECT: v = device_feature_select_; break;
    case DEVICE_FEATURE:
      v = device_feature_select_ == 0 ? uint32_t(host_features_)
          : device_feature_select_ == 1 ? uint32_t(host_features_ >> 32) : 0;
      break;
    case DRIVER_FEATURE_SELECT: v = driver_feature_select_; break;
    case DRIVER_FEATURE:
      v = driver_feature_select_ == 0 ? uint32_t(guest_features_)
          : driver_feature_select_ == 1 ? uint32_t(guest_features_ >> 32) : 0;
      break;
    case MSIX_CONFIG: v = config_vector_; break;
    case NUM_QUEUES: v = uint32_t(queues_.size()); break;
    case DEVICE_STATUS: v = status_; break;
    case CONFIG_GENERATION: v = config_generation_; break;
    case QUEUE_SELECT: v = queue_select_; break;
    case QUEUE_SIZE: v = q ? q->size : 0; break;
    case QUEUE_MSIX_VECTOR: v = q ? q->vector : NO_VECTOR; break;
    case QUEUE_ENABLE: v = q ? q->enabled : 0; break;
    case QUEUE_NOTIFY_OFF: v = queue_select_; break;
    case QUEUE_DESC: v = q ? uint32_t(q->desc) : 0; break;
    case QUEUE_DESC + 4: v = q ? uint32_t(q->desc >> 32) : 0; break;
    case QUEUE_DRIVER: v = q ? uint32_t(q->driver) : 0; break;
    case QUEUE_DRIVER + 4: v = q ? uint32_t(q->driver >> 32) : 0; break;
    case QUEUE_DEVICE: v = q ? uint32_t(q->device) : 0; break;
    case QUEUE_DEVICE + 4: v = q ? uint32_t(q->device >> 32) : 0; break;
    default: v = 0;
  }
  return size >= 4 ? v : v & ((1u << (8 * size)) - 1);
}

void VirtioBlkDevice::common_write(uint32_t off, uint32_t value) {
  using namespace common_cfg;
  Queue* q = queue_select_ < queues_.size() ? &queues_[queue_select_] : nullptr;
  auto set_lo = [](uint64_t& r, uint32_t v) { r = (r & ~0xFFFFFFFFull) | v; };
  auto set_hi = [](uint64_t& r, uint32_t v) { r = (r & 0xFFFFFFFFull) | (uint64_t(v) << 32); };
  switch (off) {
    case DEVICE_FEATURE_SELECT: device_feature_select_ = value; break;
    case DRIVER_FEATURE_SELECT: driver_feature_select_ = value; break;
    case DRIVER_FEATURE:
      // virtio_set_features: refused once FEATURES_OK is set; bits the
      // device did not offer are dropped.
      if (status_ & STATUS_FEATURES_OK) break;
      if (driver_feature_select_ == 0) set_lo(guest_features_, value);
      if (driver_feature_select_ == 1) set_hi(guest_features_, value);
      guest_features_ &= host_features_;
      break;
    case MSIX_CONFIG: config_vector_ = uint16_t(value); break;
    case DEVICE_STATUS: set_status(uint8_t(value)); break;
    case QUEUE_SELECT: queue_select_ = uint16_t(value); break;
    case QUEUE_SIZE:
      // virtio_queue_set_num ignores sizes it cannot use.
      if (q && valid_queue_size(value & 0xFFFF) && (value & 0xFFFF) <= config_.queue_size_max)
        q->size = uint16_t(value);
      break;
    case QUEUE_MSIX_VECTOR: if (q) q->vector = uint16_t(value); break;
    case QUEUE_ENABLE:
      if (q && value == 1) {
        SplitRing ring;
        ring.num = q->size;
        ring.desc = q->desc;
        ring.avail = q->driver;
        ring.used = q->device;
        q->vq->enable(ring, event_idx(), indirect_desc());
        q->vq->set_avail_event_on_pop(!config_.vhost_notify);
        q->enabled = true;
      }
      break;
    case QUEUE_DESC: if (q) set_lo(q->desc, value); break;
    case QUEUE_DESC + 4: if (q) set_hi(q->desc, value); break;
    case QUEUE_DRIVER: if (q) set_lo(q->driver, value); break;
    case QUEUE_DRIVER + 4: if (q) set_hi(q->driver, value); break;
    case QUEUE_DEVICE: if (q) set_lo(q->device, value); break;
    case QUEUE_DEVICE + 4: if (q) set_hi(q->device, value); break;
    default: break;
  }
}

// struct virtio_blk_config (section 5.2.4): capacity @0, size_max @8,
// seg_max @12, geometry @16, blk_size @20, topology @24, writeback @32,
// num_queues @34.
uint32_t VirtioBlkDevice::device_config_read(uint32_t off, unsigned size) const {
  uint8_t cfg[64] = {};
  st64(cfg + 0, config_.capacity_sectors);
  st32(cfg + 12, config_.seg_max);
  st32(cfg + 20, config_.blk_size);
  st16(cfg + 34, config_.num_queues);
  if (off >= sizeof cfg || size > sizeof cfg - off) return 0;
  uint32_t v = 0;
  for (unsigned i = 0; i < size; ++i) v |= uint32_t(cfg[off + i]) << (8 * i);
  return v;
}

uint32_t VirtioBlkDevice::bar_read(uint32_t offset, unsigned size) {
  if (offset < ISR_OFFSET) return common_read(offset - COMMON_OFFSET, size);
  if (offset < DEVICE_OFFSET) {
    if (offset != ISR_OFFSET) return 0;
    const uint8_t v = isr_;  // virtio_pci_isr_read: reading clears it
    isr_ = 0;
    return v;
  }
  if (offset < NOTIFY_OFFSET) return device_config_read(offset - DEVICE_OFFSET, size);
  return 0;
}

void VirtioBlkDevice::bar_write(uint32_t offset, unsigned size, uint32_t value,
                                int* notified_queue) {
  (void)size;
  if (notified_queue) *notified_queue = -1;
  if (offset < ISR_OFFSET) {
    common_write(offset - COMMON_OFFSET, value);
  } else if (offset >= NOTIFY_OFFSET && offset < BAR_BYTES) {
    // virtio_pci_notify_write: the address names the queue.
    const uint32_t q = (offset - NOTIFY_OFFSET) / NOTIFY_OFF_MULTIPLIER;
    if (q < queues_.size() && (status_ & STATUS_DRIVER_OK)) {
      ++counters_.notifies;
      if (!queues_[q].vq->notification()) ++aio_poll_.notifies_while_off;
      if (notified_queue) *notified_queue = int(q);
    }
  }
}

void VirtioBlkDevice::sync_avail_event_stat() {
  uint64_t total = 0;
  for (const auto& q : queues_) total += q.vq->avail_event_writes();
  counters_.avail_event_writes += total - avail_event_writes_seen_;
  avail_event_writes_seen_ = total;
}

void VirtioBlkDevice::handle_queue(uint16_t qi, std::vector<VirtioBlkRequest>& good) {
  good.clear();
  if (qi >= queues_.size()) return;
  VirtqueueDevice& vq = *queues_[qi].vq;
  // virtio_blk_handle_vq: suppress_notifications = virtio_queue_get_notification(vq);
  // in AioContext poll mode they are off and stay off (poll_end switches them on).
  const bool suppress = vq.notification();
  do {
    if (suppress) vq.set_notification(false);
    pop_requests(qi, good);
    if (suppress) vq.set_notification(true);
  } while (!vq.empty());
  sync_avail_event_stat();
}

void VirtioBlkDevice::poll_begin(uint16_t qi) {
  if (qi >= queues_.size()) return;
  ++aio_poll_.poll_begins;
  queues_[qi].vq->set_notification(false);
  sync_avail_event_stat();
}

bool VirtioBlkDevice::poll_end(uint16_t qi) {
  if (qi >= queues_.size()) return false;
  VirtqueueDevice& vq = *queues_[qi].vq;
  ++aio_poll_.poll_ends;
  vq.set_notification(true);
  sync_avail_event_stat();
  const bool found = !vq.empty();  // the last io_poll: virtio_queue_host_notifier_aio_poll
  if (found) ++aio_poll_.poll_end_found;
  return found;
}

void VirtioBlkDevice::handle_polled(uint16_t qi, std::vector<VirtioBlkRequest>& good) {
  good.clear();
  if (qi >= queues_.size()) return;
  queues_[qi].vq->disable_notify();
  pop_requests(qi, good);
  sync_avail_event_stat();
}

bool VirtioBlkDevice::avail_empty(uint16_t qi) { return qi >= queues_.size() || queues_[qi].vq->empty(); }

bool VirtioBlkDevice::reenable(uint16_t qi) {
  if (qi >= queues_.size()) return false;
  const bool more = queues_[qi].vq->enable_notify();
  sync_avail_event_stat();
  return more;
}

void VirtioBlkDevice::pop_requests(uint16_t qi, std::vector<VirtioBlkRequest>& good) {
  VirtqueueDevice& vq = *queues_[qi].vq;
  VirtqElement elem;
  while (!broken_ && vq.pop(elem) == VirtqueueDevice::PopResult::Element) {
    ++counters_.requests;
    // virtio_blk_handle_request
    if (elem.out.empty() || elem.in.empty()) {
      virtio_error("virtio-blk missing headers");
      break;
    }
    uint8_t hdr[16];
    uint32_t got = 0;
    for (const auto& s : elem.out) {
      const uint32_t n = std::min<uint32_t>(s.len, 16 - got);
      if (n && !env_.dma_read(s.addr, hdr + got, n)) break;
      got += n;
      if (got == 16) break;
    }
    if (got < 16) {
      virtio_error("virtio-blk request outhdr too short");
      break;
    }
    VirtioBlkRequest req;
    req.queue = qi;
    req.type = ld32(hdr);
    req.sector = ld64(hdr + 8);
    const VirtqSegment& last = elem.in.back();
    req.status_addr = last.addr + last.len - 1;
    uint32_t out_bytes = 0;
    for (const auto& s : elem.out) out_bytes += s.len;
    req.elem = elem;
    if (req.type == BLK_T_IN || req.type == BLK_T_OUT) {
      req.data_bytes = req.type == BLK_T_IN ? elem.in_bytes() - 1 : out_bytes - 16;
      // virtio_blk_sect_range_ok
      const uint64_t sectors = req.data_bytes / BLK_SECTOR_BYTES;
      const bool aligned = req.data_bytes % config_.blk_size == 0 &&
                           (req.sector * BLK_SECTOR_BYTES) % config_.blk_size == 0;
      if (!aligned || req.sector > config_.capacity_sectors ||
          sectors > config_.capacity_sectors - req.sector) {
        complete(req, BLK_S_IOERR);
        continue;
      }
      good.push_back(std::move(req));
    } else if (req.type == BLK_T_FLUSH) {
      good.push_back(std::move(req));
    } else {
      complete(req, BLK_S_UNSUPP);
    }
  }
}

bool VirtioBlkDevice::complete(const VirtioBlkRequest& req, uint8_t status) {
  VirtqueueDevice& vq = *queues_[req.queue].vq;
  if (!broken_) env_.dma_write(req.status_addr, &status, 1);
  // in_len: the writable bytes (data read plus the status byte).
  vq.push(req.elem, req.type == virtio::BLK_T_IN ? req.data_bytes + 1 : 1);
  if (broken_) return false;
  const bool sent = vq.should_notify();
  if (sent) {
    ++counters_.interrupts;
    notify(req.queue);
  } else {
    ++counters_.interrupts_suppressed;
  }
  sync_avail_event_stat();
  return sent;
}

void VirtioBlkDevice::notify(uint16_t q) {
  // virtio_irq: ISR bit 0, then the queue's vector.
  isr_ |= 0x1;
  if (queues_[q].vector != NO_VECTOR) env_.msix(queues_[q].vector);
}

}  // namespace nvmesim::fw
