#include "nvmesim/firmware/guest/virtqueue_driver.h"

#include <cstring>

#include "nvmesim/firmware/nvme/eventidx.h"

namespace nvmesim::fw {

using namespace virtio;

void VirtqueueDriver::init(VirtioDriverEnv& env, const SplitRing& ring, bool event_idx, bool indirect) {
  env_ = &env;
  ring_ = ring;
  event_ = event_idx;
  indirect_ = indirect;
  std::memset(env.guest_memory(ring.desc, uint32_t(SplitRing::desc_bytes(ring.num))), 0,
              SplitRing::desc_bytes(ring.num));
  std::memset(env.guest_memory(ring.avail, uint32_t(SplitRing::avail_bytes(ring.num))), 0,
              SplitRing::avail_bytes(ring.num));
  std::memset(env.guest_memory(ring.used, uint32_t(SplitRing::used_bytes(ring.num))), 0,
              SplitRing::used_bytes(ring.num));
  next_.assign(ring.num, 0);
  for (uint32_t i = 0; i + 1 < ring.num; ++i) next_[i] = uint16_t(i + 1);
  chain_len_.assign(ring.num, 0);
  token_.assign(ring.num, 0);
  is_head_.assign(ring.num, 0);
  free_head_ = 0;
  num_free_ = ring.num;
  avail_idx_shadow_ = avail_flags_shadow_ = last_used_idx_ = num_added_ = 0;
  event_triggered_ = broken_ = false;
}

int VirtqueueDriver::add(const VirtqBuffer* out, unsigned out_n, const VirtqBuffer* in,
                         unsigned in_n, uint32_t token, uint64_t indirect_table) {
  const unsigned total = out_n + in_n;
  if (broken_ || total == 0) return -1;
  // virtqueue_use_indirect: negotiated, more than one sg entry, a free descriptor.
  const bool indirect = indirect_ && indirect_table && total > 1 && num_free_ > 0;
  const unsigned descs_used = indirect ? 1 : total;
  if (num_free_ < descs_used) return -1;  // -ENOSPC
  const uint16_t head = free_head_;
  if (indirect) {
    // alloc_indirect_split links entry i to i + 1 (the last one too, its NEXT
    // flag cleared); the ring descriptor names the table, flags INDIRECT.
    uint8_t* table = env_->guest_memory(indirect_table, 16 * total);
    for (unsigned n = 0; n < total; ++n) {
      const bool is_out = n < out_n;
      const VirtqBuffer& b = is_out ? out[n] : in[n - out_n];
      const uint16_t flags = uint16_t((n + 1 < total ? DESC_F_NEXT : 0) | (is_out ? 0 : DESC_F_WRITE));
      store_desc(table + 16 * n, Desc{b.addr, b.len, flags, uint16_t(n + 1)});
    }
    store_desc(env_->guest_memory(ring_.desc_at(head), 16),
               Desc{indirect_table, 16 * total, DESC_F_INDIRECT, next_[head]});
    free_head_ = next_[head];
  } else {
    uint16_t i = head, prev = head;
    for (unsigned n = 0; n < total; ++n) {
      const bool is_out = n < out_n;
      const VirtqBuffer& b = is_out ? out[n] : in[n - out_n];
      Desc d{b.addr, b.len, uint16_t(DESC_F_NEXT | (is_out ? 0 : DESC_F_WRITE)), next_[i]};
      store_desc(env_->guest_memory(ring_.desc_at(i), 16), d);
      prev = i;
      i = next_[i];
    }
    // The last descriptor ends the chain.
    uint8_t* last = env_->guest_memory(ring_.desc_at(prev), 16);
    st16(last + 12, uint16_t(ld16(last + 12) & ~DESC_F_NEXT));
    free_head_ = i;
  }
  num_free_ -= descs_used;
  chain_len_[head] = uint16_t(descs_used);
  token_[head] = token;
  is_head_[head] = 1;
  // Put the head in the next avail slot, then expose it through avail->idx.
  wr16(ring_.avail_ring(ring_.slot(avail_idx_shadow_)), head);
  env_->write_barrier();
  ++avail_idx_shadow_;
  wr16(ring_.avail_idx(), avail_idx_shadow_);
  ++num_added_;
  return head;
}

KickDecision VirtqueueDriver::kick_prepare() {
  KickDecision k;
  // Expose the avail entries before reading avail_event / used->flags.
  env_->full_barrier();
  k.old_idx = uint16_t(avail_idx_shadow_ - num_added_);
  k.new_idx = avail_idx_shadow_;
  k.updated = num_added_ != 0;
  num_added_ = 0;
  k.event_idx = event_;
  if (event_) {
    k.avail_event = rd16(ring_.avail_event());
    k.needs_kick = need_event_linux(k.avail_event, k.new_idx, k.old_idx);
  } else {
    k.needs_kick = !(rd16(ring_.used_flags()) & USED_F_NO_NOTIFY);
  }
  return k;
}

bool VirtqueueDriver::get_buf(uint32_t& token, uint32_t& len) {
  if (broken_ || last_used_idx_ == rd16(ring_.used_idx())) return false;
  env_->read_barrier();  // the entries only after the index that exposed them
  const uint8_t* e = env_->guest_memory(ring_.used_ring(ring_.slot(last_used_idx_)), 8);
  const uint32_t id = ld32(e);
  len = ld32(e + 4);
  if (id >= ring_.num || !is_head_[id]) {
    broken_ = true;  // BAD_RING: "id %u out of range" / "id %u is not a head!"
    return false;
  }
  token = token_[id];
  // detach_buf_split: the chain goes back to the front of the free list.
  uint16_t i = uint16_t(id);
  for (uint16_t n = 1; n < chain_len_[id]; ++n) i = next_[i];
  next_[i] = free_head_;
  free_head_ = uint16_t(id);
  num_free_ += chain_len_[id];
  is_head_[id] = 0;
  ++last_used_idx_;
  // Expecting an interrupt for the next entry: tell the device (virtio_store_mb).
  if (!(avail_flags_shadow_ & AVAIL_F_NO_INTERRUPT)) {
    write_used_event(last_used_idx_);
    env_->full_barrier();
  }
  return true;
}

void VirtqueueDriver::disable_cb() {
  if (avail_flags_shadow_ & AVAIL_F_NO_INTERRUPT) return;
  avail_flags_shadow_ |= AVAIL_F_NO_INTERRUPT;
  // An interrupt already came: the device will not send another one.
  if (event_triggered_) return;
  if (event_)
    write_used_event(0);  // Linux's placeholder value ("this is a hack")
  else
    wr16(ring_.avail_flags(), avail_flags_shadow_);
}

uint16_t VirtqueueDriver::enable_cb_prepare() {
  event_triggered_ = false;
  if (avail_flags_shadow_ & AVAIL_F_NO_INTERRUPT) {
    avail_flags_shadow_ &= uint16_t(~AVAIL_F_NO_INTERRUPT);
    if (!event_) wr16(ring_.avail_flags(), avail_flags_shadow_);
  }
  write_used_event(last_used_idx_);
  return last_used_idx_;
}

bool VirtqueueDriver::poll(uint16_t last_used_idx) {
  if (broken_) return false;
  env_->full_barrier();
  return last_used_idx != rd16(ring_.used_idx());
}

bool VirtqueueDriver::interrupt_has_work() {
  if (last_used_idx_ == rd16(ring_.used_idx())) return false;  // IRQ_NONE
  if (event_) event_triggered_ = true;
  return true;
}

}  // namespace nvmesim::fw
