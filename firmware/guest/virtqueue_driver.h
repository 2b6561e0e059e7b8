// The driver side of one split virtqueue as Linux's virtio_ring runs it
// (drivers/virtio/virtio_ring.c: virtqueue_add_split,
// virtqueue_kick_prepare_split, virtqueue_get_buf_ctx_split,
// virtqueue_disable_cb_split, virtqueue_enable_cb_prepare_split,
// virtqueue_poll_split), with no notion of time.
#pragma once

#include <cstdint>
#include <vector>

#include "nvmesim/firmware/virtio/virtio_spec.h"

namespace nvmesim::fw {

// The CPU the virtio driver runs on (the vCPU model, or a test harness).
class VirtioDriverEnv {
 public:
  virtual ~VirtioDriverEnv() = default;
  virtual uint8_t* guest_memory(uint64_t gpa, uint32_t len) = 0;
  virtual void write_barrier() = 0;  // virtio_wmb
  virtual void read_barrier() = 0;   // virtio_rmb
  virtual void full_barrier() = 0;   // virtio_mb
  // Accesses to the device's BAR (each a trapped MMIO access under a hypervisor).
  virtual uint32_t mmio_read(uint32_t offset, unsigned size) = 0;
  virtual void mmio_write(uint32_t offset, unsigned size, uint32_t value) = 0;
};

// One buffer of a request, as an sg entry.
struct VirtqBuffer {
  uint64_t addr;
  uint32_t len;
};

// What virtqueue_kick_prepare decided for one batch.
struct KickDecision {
  bool updated = false;      // entries were added since the last prepare
  bool needs_kick = false;   // the notify register must be written
  bool event_idx = false;    // decided by vring_need_event on avail_event
  uint16_t old_idx = 0, new_idx = 0, avail_event = 0;
};

class VirtqueueDriver {
 public:
  // vring_init + the free list 0 -> 1 -> ... -> num-1; zeroes the rings.
  // indirect: VIRTIO_RING_F_INDIRECT_DESC negotiated.
  void init(VirtioDriverEnv& env, const virtio::SplitRing& ring, bool event_idx, bool indirect = false);

  // virtqueue_add_split: out buffers (device reads) then in buffers (device
  // writes), chained; publishes avail->idx. With indirect descriptors, more
  // than one buffer and a free descriptor (virtqueue_use_indirect), the chain
  // goes to the table at `indirect_table` (16 bytes per buffer; Linux
  // kmallocs it in alloc_indirect_split) and takes one ring descriptor.
  // Returns the head, or -1 when too few descriptors are free (-ENOSPC).
  int add(const VirtqBuffer* out, unsigned out_n, const VirtqBuffer* in, unsigned in_n,
          uint32_t token, uint64_t indirect_table = 0);
  KickDecision kick_prepare();
  // The CPU that runs the next calls (a queue shared by several CPUs is used
  // by whichever holds its lock, as virtio_blk's vq lock serialises them).
  void set_env(VirtioDriverEnv& env) { env_ = &env; }
  // virtqueue_get_buf: the token of the next used entry (false when none, or
  // when the device returned an id that is not a head: the ring is broken).
  bool get_buf(uint32_t& token, uint32_t& len);
  void disable_cb();
  uint16_t enable_cb_prepare();
  bool poll(uint16_t last_used_idx);
  bool enable_cb() { return !poll(enable_cb_prepare()); }
  // vring_interrupt: false (IRQ_NONE) when the used ring has nothing new.
  bool interrupt_has_work();

  uint32_t num_free() const { return num_free_; }
  bool indirect() const { return indirect_; }
  bool broken() const { return broken_; }
  const virtio::SplitRing& ring() const { return ring_; }
  uint16_t avail_idx_shadow() const { return avail_idx_shadow_; }
  uint16_t last_used_idx() const { return last_used_idx_; }
  uint64_t used_event_writes() const { return used_event_writes_; }

 private:
  uint16_t rd16(uint64_t a) { return virtio::ld16(env_->guest_memory(a, 2)); }
  void wr16(uint64_t a, uint16_t v) { virtio::st16(env_->guest_memory(a, 2), v); }
  void write_used_event(uint16_t v) {
    wr16(ring_.used_event(), v);
    ++used_event_writes_;
  }

  VirtioDriverEnv* env_ = nullptr;
  virtio::SplitRing ring_;
  bool event_ = false;
  bool indirect_ = false;
  bool event_triggered_ = false;
  bool broken_ = false;
  uint16_t free_head_ = 0;
  uint32_t num_free_ = 0;
  uint16_t avail_idx_shadow_ = 0;
  uint16_t avail_flags_shadow_ = 0;
  uint16_t last_used_idx_ = 0;
  uint16_t num_added_ = 0;
  uint64_t used_event_writes_ = 0;
  // desc_extra / desc_state: the driver's own copy of each chain (it never
  // trusts the ring for its free list) and the token of each head.
  std::vector<uint16_t> next_;
  std::vector<uint16_t> chain_len_;
  std::vector<uint32_t> token_;
  std::vector<uint8_t> is_head_;
};

}  // namespace nvmesim::fw
