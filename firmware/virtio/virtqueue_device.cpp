#include "nvmesim/firmware/virtio/virtqueue_device.h"

#include "nvmesim/firmware/nvme/eventidx.h"

namespace nvmesim::fw {

using namespace virtio;

void VirtqueueDevice::enable(const SplitRing& ring, bool event_idx, bool indirect) {
  reset();
  ring_ = ring;
  event_idx_ = event_idx;
  indirect_ = indirect;
  enabled_ = true;
}

void VirtqueueDevice::reset() {
  enabled_ = false;
  last_avail_idx_ = shadow_avail_idx_ = used_idx_ = 0;
  inuse_ = 0;
  signalled_used_ = 0;
  signalled_used_valid_ = false;
  notification_ = true;  // virtio_reset: vq->notification = true
}

bool VirtqueueDevice::read16(uint64_t addr, uint16_t& v, const char* what) {
  uint8_t b[2];
  if (!env_->dma_read(addr, b, 2)) {
    device_->virtio_error(std::string("Cannot map ") + what);
    return false;
  }
  v = ld16(b);
  return true;
}

bool VirtqueueDevice::write16(uint64_t addr, uint16_t v, const char* what) {
  uint8_t b[2];
  st16(b, v);
  if (!env_->dma_write(addr, b, 2)) {
    device_->virtio_error(std::string("Cannot map ") + what);
    return false;
  }
  return true;
}

bool VirtqueueDevice::read_desc(uint32_t i, Desc& d) {
  uint8_t b[16];
  if (!env_->dma_read(ring_.desc_at(i), b, 16)) {
    device_->virtio_error("Cannot map descriptor ring");
    return false;
  }
  d = load_desc(b);
  return true;
}

bool VirtqueueDevice::read_table_desc(uint64_t table, uint32_t i, Desc& d) {
  uint8_t b[16];
  if (!env_->dma_read(table + 16ull * i, b, 16)) {
    device_->virtio_error("Cannot map indirect buffer");
    return false;
  }
  d = load_desc(b);
  return true;
}

void VirtqueueDevice::set_avail_event(uint16_t v) {
  if (write16(ring_.avail_event(), v, "used ring")) ++avail_event_writes_;
}

bool VirtqueueDevice::empty() {
  if (!enabled_ || device_->broken()) return true;
  if (shadow_avail_idx_ != last_avail_idx_) return false;
  uint16_t idx;
  if (!read16(ring_.avail_idx(), idx, "avail ring")) return true;
  shadow_avail_idx_ = idx;
  return idx == last_avail_idx_;
}

VirtqueueDevice::PopResult VirtqueueDevice::pop(VirtqElement& out) {
  if (empty()) return PopResult::Empty;
  env_->device_barrier();  // smp_rmb() after reading avail->idx
  if (inuse_ >= ring_.num) {
    device_->virtio_error("Virtqueue size exceeded");
    return PopResult::Error;
  }
  // virtqueue_get_head
  uint16_t head;
  if (!read16(ring_.avail_ring(ring_.slot(last_avail_idx_)), head, "avail ring"))
    return PopResult::Error;
  ++last_avail_idx_;
  if (head >= ring_.num) {
    device_->virtio_error("Guest says index " + std::to_string(head) + " is available");
    return PopResult::Error;
  }
  if (event_idx_ && avail_event_on_pop_) set_avail_event(last_avail_idx_);
  if (device_->broken()) return PopResult::Error;

  out.head = head;
  out.out.clear();
  out.in.clear();
  uint32_t max = ring_.num;
  uint32_t i = head;
  uint64_t table = 0;  // the indirect table being walked (0: the ring's)
  Desc d;
  if (!read_desc(i, d)) return PopResult::Error;
  if ((d.flags & DESC_F_INDIRECT) && indirect_) {
    // The head names an indirect table (section 2.7.5.3; QEMU's
    // virtqueue_split_pop): a nonzero multiple of 16 bytes, all of it
    // guest memory (address_space_cache_init mapped less: "Cannot map").
    if (d.len == 0 || d.len % sizeof(Desc)) {
      device_->virtio_error("Invalid size for indirect buffer table");
      return PopResult::Error;
    }
    if (d.addr + d.len < d.addr || !env_->dma_mappable(d.addr, d.len)) {
      device_->virtio_error("Cannot map indirect buffer");
      return PopResult::Error;
    }
    table = d.addr;
    max = d.len / uint32_t(sizeof(Desc));
    i = 0;
    if (!read_table_desc(table, i, d)) return PopResult::Error;
  }
  for (;;) {
    if (d.flags & DESC_F_INDIRECT) {
      // Section 2.7.5.3.1: a driver MUST NOT set INDIRECT without the
      // feature, nor inside an indirect table (Linux's vhost get_indirect
      // refuses a "Nested indirect descriptor" the same way).
      if (table) {
        device_->virtio_error("Nested indirect descriptor");
        return PopResult::Error;
      }
      if (!indirect_) {
        device_->virtio_error("Indirect descriptor without VIRTIO_RING_F_INDIRECT_DESC");
        return PopResult::Error;
      }
      // Negotiated, but past the head: QEMU maps it as a plain buffer.
    }
    // virtqueue_map_desc
    if (d.len == 0) {
      device_->virtio_error("virtio: zero sized buffers are not allowed");
      return PopResult::Error;
    }
    if (!env_->dma_mappable(d.addr, d.len) || d.addr + d.len < d.addr) {
      device_->virtio_error("virtio: bogus descriptor or out of resources");
      return PopResult::Error;
    }
    if (d.flags & DESC_F_WRITE) {
      out.in.push_back({d.addr, d.len});
    } else {
      if (!out.in.empty()) {
        device_->virtio_error("Incorrect order for descriptors");
        return PopResult::Error;
      }
      out.out.push_back({d.addr, d.len});
    }
    // More buffers than descriptors implies a loop.
    if (out.in.size() + out.out.size() > max) {
      device_->virtio_error("Looped descriptor");
      return PopResult::Error;
    }
    // virtqueue_split_read_next_desc
    if (!(d.flags & DESC_F_NEXT)) break;
    i = d.next;
    if (i >= max) {
      device_->virtio_error("Desc next is " + std::to_string(i));
      return PopResult::Error;
    }
    if (table ? !read_table_desc(table, i, d) : !read_desc(i, d)) return PopResult::Error;
  }
  ++inuse_;
  return PopResult::Element;
}

void VirtqueueDevice::push(const VirtqElement& elem, uint32_t len) {
  if (!enabled_ || device_->broken()) {
    if (inuse_) --inuse_;
    return;
  }
  uint8_t b[8];
  st32(b, elem.head);
  st32(b + 4, len);
  if (!env_->dma_write(ring_.used_ring(ring_.slot(used_idx_)), b, 8)) {
    device_->virtio_error("Cannot map used ring");
    return;
  }
  env_->device_barrier();  // smp_wmb(): the entry before the index
  const uint16_t old_idx = used_idx_;
  const uint16_t new_idx = uint16_t(old_idx + 1);
  if (!write16(ring_.used_idx(), new_idx, "used ring")) return;
  used_idx_ = new_idx;
  if (inuse_) --inuse_;
  // The last signalled index fell behind by a full wrap: signal next time.
  if (int16_t(uint16_t(new_idx - signalled_used_)) < int16_t(uint16_t(new_idx - old_idx)))
    signalled_used_valid_ = false;
}

bool VirtqueueDevice::should_notify() {
  if (!enabled_ || device_->broken()) return false;
  env_->device_barrier();  // expose the used entries before reading used_event / flags
  if (!event_idx_) {
    uint16_t flags;
    if (!read16(ring_.avail_flags(), flags, "avail ring")) return false;
    return !(flags & AVAIL_F_NO_INTERRUPT);
  }
  const bool valid = signalled_used_valid_;
  signalled_used_valid_ = true;
  const uint16_t old_idx = signalled_used_;
  const uint16_t new_idx = signalled_used_ = used_idx_;
  uint16_t used_event;
  if (!read16(ring_.used_event(), used_event, "avail ring")) return false;
  return !valid || need_event_linux(used_event, new_idx, old_idx);
}

void VirtqueueDevice::set_notification(bool enable) {
  notification_ = enable;  // QEMU stores it before its vring.desc check
  if (!enabled_ || device_->broken()) return;
  if (event_idx_) {
    uint16_t idx;
    if (!read16(ring_.avail_idx(), idx, "avail ring")) return;
    shadow_avail_idx_ = idx;
    set_avail_event(idx);
  } else {
    uint16_t flags;
    if (!read16(ring_.used_flags(), flags, "used ring")) return;
    flags = enable ? uint16_t(flags & ~USED_F_NO_NOTIFY) : uint16_t(flags | USED_F_NO_NOTIFY);
    if (!write16(ring_.used_flags(), flags, "used ring")) return;
  }
  if (enable) env_->device_barrier();  // expose avail_event / flags before re-checking avail->idx
}

void VirtqueueDevice::disable_notify() {
  if (!event_idx_) set_notification(false);
}

bool VirtqueueDevice::enable_notify() {
  if (!enabled_ || device_->broken()) return false;
  if (event_idx_) {
    set_avail_event(shadow_avail_idx_);  // vhost_update_avail_event: vq->avail_idx
  } else {
    uint16_t flags;
    if (!read16(ring_.used_flags(), flags, "used ring")) return false;
    if (!write16(ring_.used_flags(), uint16_t(flags & ~USED_F_NO_NOTIFY), "used ring")) return false;
  }
  env_->device_barrier();  // smp_mb(): the switch is visible before avail->idx is read again
  return !empty();
}

}  // namespace nvmesim::fw
