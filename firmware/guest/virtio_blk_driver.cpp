#include "nvmesim/firmware/guest/virtio_blk_driver.h"

#include <algorithm>

#include "nvmesim/firmware/virtio/virtio_blk_device.h"

namespace nvmesim::fw {

using namespace virtio;

namespace {
constexpr uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }
constexpr uint32_t HEADER_STRIDE = 32;  // 16-byte virtio_blk_outhdr, status byte at +16
constexpr uint32_t TABLE_STRIDE = 64;   // header + data + status descriptors, 16 bytes each, rounded up
uint64_t data_stride(const VirtioBlkDriverConfig& c) { return align_up(c.max_transfer_bytes, 4096); }
// virtblk_probe's queue depth: the ring's free descriptors, halved without
// indirect descriptors ("without indirect descs, we use 2 descs per req").
uint32_t queue_depth(uint32_t num, bool indirect) { return indirect ? num : std::max<uint32_t>(num / 2, 1); }
// Tags given buffers: the depth, or fewer when no more can be in flight.
uint32_t buffered_tags(const VirtioBlkDriverConfig& c, uint32_t depth) {
  return c.max_outstanding ? std::min(depth, c.max_outstanding) : depth;
}
// Bytes of one queue's rings, headers, data buffers and indirect tables for
// `num` entries (sized for the depth the driver would have if the device
// offers indirect descriptors).
uint64_t queue_bytes(const VirtioBlkDriverConfig& c, uint32_t num) {
  const uint64_t rings = align_up(SplitRing::desc_bytes(num) + SplitRing::avail_bytes(num), 4096) +
                         align_up(SplitRing::used_bytes(num), 4096);
  const uint32_t tags = buffered_tags(c, queue_depth(num, c.indirect_desc));
  const uint64_t tables = c.indirect_desc ? align_up(uint64_t(TABLE_STRIDE) * tags, 4096) : 0;
  return rings + align_up(uint64_t(HEADER_STRIDE) * tags, 4096) + data_stride(c) * tags + tables;
}
}  // namespace

VirtioBlkDriver::VirtioBlkDriver(const VirtioBlkDriverConfig& config, VirtioDriverEnv& env)
    : config_(config), env_(env) {}

void VirtioBlkDriver::attach_cpu(uint16_t q, VirtioDriverEnv& c) {
  if (cpus_.size() <= q) cpus_.resize(size_t(q) + 1, nullptr);
  cpus_[q] = &c;
}

uint64_t VirtioBlkDriver::memory_needed(const VirtioBlkDriverConfig& c) {
  return uint64_t(c.queues) * queue_bytes(c, c.queue_size);
}

VirtioBlkBringUp VirtioBlkDriver::fail(std::string message) {
  env_.mmio_write(VirtioBlkDevice::COMMON_OFFSET + common_cfg::DEVICE_STATUS, 1,
                  common_read(common_cfg::DEVICE_STATUS, 1) | STATUS_FAILED);
  result_.ok = false;
  result_.error = std::move(message);
  return result_;
}

uint32_t VirtioBlkDriver::common_read(uint32_t off, unsigned size) {
  return env_.mmio_read(VirtioBlkDevice::COMMON_OFFSET + off, size);
}
void VirtioBlkDriver::common_write(uint32_t off, unsigned size, uint32_t value) {
  env_.mmio_write(VirtioBlkDevice::COMMON_OFFSET + off, size, value);
}

VirtioBlkBringUp VirtioBlkDriver::bring_up() {
  using namespace common_cfg;
  result_ = VirtioBlkBringUp{};
  queues_.clear();  // their counters leave the "virtio_driver" group with them
  if (config_.queues == 0 || !valid_queue_size(config_.queue_size))
    return fail("virtio-blk: queues must be >= 1 and the queue size a power of 2 up to 32768");
  if (config_.memory_bytes < memory_needed(config_)) return fail("virtio-blk: guest memory region too small");
  // virtio_dev_probe: reset (wait until the status reads 0), ACKNOWLEDGE, DRIVER.
  common_write(DEVICE_STATUS, 1, 0);
  if (common_read(DEVICE_STATUS, 1) != 0) return fail("virtio-blk: device did not reset");
  common_write(DEVICE_STATUS, 1, STATUS_ACKNOWLEDGE);
  common_write(DEVICE_STATUS, 1, STATUS_ACKNOWLEDGE | STATUS_DRIVER);
  common_write(DEVICE_FEATURE_SELECT, 4, 0);
  uint64_t device_features = common_read(DEVICE_FEATURE, 4);
  common_write(DEVICE_FEATURE_SELECT, 4, 1);
  device_features |= uint64_t(common_read(DEVICE_FEATURE, 4)) << 32;
  uint64_t wanted = bit(F_VERSION_1) | bit(BLK_F_SEG_MAX) | bit(BLK_F_BLK_SIZE) | bit(BLK_F_FLUSH) |
                    bit(BLK_F_MQ);
  if (config_.event_idx) wanted |= bit(F_RING_EVENT_IDX);
  if (config_.indirect_desc) wanted |= bit(F_RING_INDIRECT_DESC);
  const uint64_t features = device_features & wanted;
  if (!(features & bit(F_VERSION_1))) return fail("virtio-blk: device does not offer VIRTIO_F_VERSION_1");
  common_write(DRIVER_FEATURE_SELECT, 4, 0);
  common_write(DRIVER_FEATURE, 4, uint32_t(features));
  common_write(DRIVER_FEATURE_SELECT, 4, 1);
  common_write(DRIVER_FEATURE, 4, uint32_t(features >> 32));
  common_write(DEVICE_STATUS, 1, STATUS_ACKNOWLEDGE | STATUS_DRIVER | STATUS_FEATURES_OK);
  if (!(common_read(DEVICE_STATUS, 1) & STATUS_FEATURES_OK))
    return fail("virtio: device refuses features");
  result_.features = features;
  const bool event = (features & bit(F_RING_EVENT_IDX)) != 0;
  const bool indirect = (features & bit(F_RING_INDIRECT_DESC)) != 0;

  // virtblk_probe: queues from the device config (VIRTIO_BLK_F_MQ), one per vCPU wished.
  const uint32_t dev = VirtioBlkDevice::DEVICE_OFFSET;
  uint16_t nq = 1;
  if (features & bit(BLK_F_MQ)) nq = uint16_t(env_.mmio_read(dev + 34, 2));
  nq = std::min<uint16_t>(nq, config_.queues);
  if (nq == 0) return fail("virtio-blk: device offers no queue");
  if (features & bit(BLK_F_BLK_SIZE)) result_.blk_size = env_.mmio_read(dev + 20, 4);
  result_.capacity_sectors = env_.mmio_read(dev + 0, 4) | (uint64_t(env_.mmio_read(dev + 4, 4)) << 32);

  queues_.resize(nq);
  uint64_t at = align_up(config_.memory_base, PAGE);
  for (uint16_t q = 0; q < nq; ++q) {
    Queue& Q = queues_[q];
    common_write(QUEUE_SELECT, 2, q);
    const uint32_t offered = common_read(QUEUE_SIZE, 2);
    if (offered == 0) return fail("virtio-blk: queue " + std::to_string(q) + " not available");
    const uint32_t num = std::min<uint32_t>(offered, config_.queue_size);
    if (!valid_queue_size(num)) return fail("virtio-blk: queue size not a power of 2");
    if (num != offered) common_write(QUEUE_SIZE, 2, num);
    SplitRing ring;
    ring.num = num;
    ring.desc = at;
    ring.avail = at + SplitRing::desc_bytes(num);
    ring.used = align_up(ring.avail + SplitRing::avail_bytes(num), PAGE);
    const uint32_t depth = queue_depth(num, indirect);
    const uint32_t tags = buffered_tags(config_, depth);
    Q.headers = align_up(ring.used + SplitRing::used_bytes(num), PAGE);
    Q.data = align_up(Q.headers + uint64_t(HEADER_STRIDE) * tags, PAGE);
    at = Q.data + data_stride(config_) * tags;
    Q.tables = 0;
    if (indirect) {
      Q.tables = at;
      at = align_up(at + uint64_t(TABLE_STRIDE) * tags, PAGE);
    }
    Q.vq.init(cpu(q), ring, event, indirect);
    common_write(QUEUE_DESC, 4, uint32_t(ring.desc));
    common_write(QUEUE_DESC + 4, 4, uint32_t(ring.desc >> 32));
    common_write(QUEUE_DRIVER, 4, uint32_t(ring.avail));
    common_write(QUEUE_DRIVER + 4, 4, uint32_t(ring.avail >> 32));
    common_write(QUEUE_DEVICE, 4, uint32_t(ring.used));
    common_write(QUEUE_DEVICE + 4, 4, uint32_t(ring.used >> 32));
    const uint16_t vector = uint16_t(config_.msix_vector_base + q);
    common_write(QUEUE_MSIX_VECTOR, 2, vector);
    if (common_read(QUEUE_MSIX_VECTOR, 2) != vector) return fail("virtio-blk: MSI-X vector refused");
    Q.notify_off = uint16_t(common_read(QUEUE_NOTIFY_OFF, 2));
    common_write(QUEUE_ENABLE, 2, 1);
    // blk-mq tags (those that can be in flight at once), lowest first.
    Q.free_tags.clear();
    for (uint32_t t = tags; t-- > 0;) Q.free_tags.push_back(t);
    Q.tag_busy.assign(tags, TAG_FREE);
    Q.tag_opcode.assign(tags, 0);
    Q.tag_cpu.assign(tags, nullptr);
    Q.outstanding = 0;
    stats_.add_group("vq" + std::to_string(q), *Q.counters);
    result_.queue_size = num;
    result_.queue_depth = depth;
  }
  common_write(MSIX_CONFIG, 2, 0);
  common_write(DEVICE_STATUS, 1,
               STATUS_ACKNOWLEDGE | STATUS_DRIVER | STATUS_FEATURES_OK | STATUS_DRIVER_OK);
  result_.queues = nq;
  result_.ok = true;
  return result_;
}

uint64_t VirtioBlkDriver::header_addr(uint16_t q, uint32_t tag) const {
  return queues_[q].headers + uint64_t(HEADER_STRIDE) * tag;
}
uint64_t VirtioBlkDriver::indirect_table(uint16_t q, uint32_t tag) const {
  return queues_[q].tables ? queues_[q].tables + uint64_t(TABLE_STRIDE) * tag : 0;
}
uint64_t VirtioBlkDriver::data_buffer(uint16_t q, uint32_t tag) const {
  return queues_[q].data + data_stride(config_) * tag;
}

int32_t VirtioBlkDriver::submit(uint16_t q, const IoSpec& io, VirtioDriverEnv* on) {
  if (q >= queues_.size()) return -1;
  Queue& Q = queues_[q];
  VirtioDriverEnv& c = running(q, on);
  const bool flush = io.opcode == nvme::io::FLUSH;
  const bool write = io.opcode == nvme::io::WRITE;
  if (!flush && !write && io.opcode != nvme::io::READ) return -1;
  const uint64_t bytes = flush ? 0 : uint64_t(io.nlb) * result_.blk_size;
  if (!flush && (io.nlb == 0 || bytes > config_.max_transfer_bytes)) return -1;
  if (Q.free_tags.empty()) return -1;
  const uint32_t tag = Q.free_tags.back();
  const uint64_t hdr = header_addr(q, tag);
  uint8_t* h = c.guest_memory(hdr, HEADER_STRIDE);
  st32(h, flush ? BLK_T_FLUSH : write ? BLK_T_OUT : BLK_T_IN);
  st32(h + 4, 0);
  st64(h + 8, flush ? 0 : io.slba * (result_.blk_size / BLK_SECTOR_BYTES));
  h[16] = 0xFF;  // virtio_blk sets the status to an invalid value until the device answers
  VirtqBuffer out[2], in[2];
  unsigned out_n = 0, in_n = 0;
  out[out_n++] = {hdr, 16};
  if (!flush) {
    if (write) out[out_n++] = {data_buffer(q, tag), uint32_t(bytes)};
    else in[in_n++] = {data_buffer(q, tag), uint32_t(bytes)};
  }
  in[in_n++] = {hdr + 16, 1};
  const int head = Q.vq.add(out, out_n, in, in_n, tag, indirect_table(q, tag));
  if (head < 0) return -1;  // -ENOSPC: blk-mq retries later
  if (q == 0 && config_.ring_fault != VirtioRingFault::None && queue0_requests_++ == config_.ring_fault_after)
    inject_ring_fault(c, q, uint16_t(head));
  Q.free_tags.pop_back();
  Q.tag_busy[tag] = TAG_IN_FLIGHT;
  Q.tag_opcode[tag] = io.opcode;
  Q.tag_cpu[tag] = &c;
  ++Q.outstanding;
  return int32_t(tag);
}

void VirtioBlkDriver::inject_ring_fault(VirtioDriverEnv& c, uint16_t q, uint16_t head) {
  VirtqueueDriver& vq = queues_[q].vq;
  const SplitRing& r = vq.ring();
  uint8_t* ring_desc = c.guest_memory(r.desc_at(head), 16);
  // The request's own descriptors: its indirect table's entries, or the ring's chain.
  const bool indirect = (ld16(ring_desc + 12) & DESC_F_INDIRECT) != 0;
  const uint64_t table = indirect ? ld64(ring_desc) : 0;
  auto desc = [&](uint16_t i) { return c.guest_memory(indirect ? table + 16ull * i : r.desc_at(i), 16); };
  const uint16_t first_index = indirect ? 0 : head;
  uint8_t* first = desc(first_index);
  switch (config_.ring_fault) {
    case VirtioRingFault::None: break;
    case VirtioRingFault::DescLoop: {
      // Walk the chain as published; its last (writable) descriptor points at itself.
      uint16_t last = first_index;
      while (ld16(desc(last) + 12) & DESC_F_NEXT) last = ld16(desc(last) + 14);
      uint8_t* d = desc(last);
      st16(d + 12, uint16_t(ld16(d + 12) | DESC_F_NEXT));
      st16(d + 14, last);
      break;
    }
    case VirtioRingFault::HeadOutOfRange:
      st16(c.guest_memory(r.avail_ring(r.slot(uint16_t(vq.avail_idx_shadow() - 1))), 2), uint16_t(r.num));
      break;
    case VirtioRingFault::NextOutOfRange:
      // Past the ring (num), or past the table (its entry count).
      st16(first + 14, uint16_t(indirect ? ld32(ring_desc + 8) / 16 : r.num));
      break;
    case VirtioRingFault::BufferOutsideMemory: st64(first, kOutsideGuestMemory); break;
    case VirtioRingFault::ZeroLength: st32(first + 8, 0); break;
    case VirtioRingFault::IndirectBadLength: st32(ring_desc + 8, 40); break;
    case VirtioRingFault::IndirectNested: {
      // The table's entry 1 (the data) becomes a table itself.
      uint8_t* entry = desc(1);
      st16(entry + 12, uint16_t(ld16(entry + 12) | DESC_F_INDIRECT));
      break;
    }
  }
}

DoorbellUpdate VirtioBlkDriver::kick(uint16_t q, VirtioDriverEnv* on) {
  DoorbellUpdate u;
  Queue& Q = queues_[q];
  VirtioDriverEnv& c = running(q, on);
  const KickDecision k = Q.vq.kick_prepare();
  if (!k.updated) return u;
  u.updated = true;
  u.old_value = k.old_idx;
  u.new_value = k.new_idx;
  u.eventidx = k.avail_event;
  u.via_shadow = k.event_idx;
  ++Q.counters->updates;
  if (k.event_idx) ++Q.counters->updates_with_dbbuf;
  if (k.needs_kick) {
    // virtqueue_notify: vp_notify writes the queue index to its notify address.
    c.mmio_write(VirtioBlkDevice::NOTIFY_OFFSET + Q.notify_off * VirtioBlkDevice::NOTIFY_OFF_MULTIPLIER,
                    2, q);
    u.mmio = true;
    ++Q.counters->mmio;
  } else {
    u.suppressed = true;
    ++Q.counters->suppressed;
  }
  return u;
}

void VirtioBlkDriver::interrupt(uint16_t q, std::vector<UsedRequest>& done, VirtioDriverEnv* on) {
  done.clear();
  Queue& Q = queues_[q];
  VirtioDriverEnv& c = running(q, on);
  if (!Q.vq.interrupt_has_work()) {
    ++Q.counters->spurious_interrupts;
    return;
  }
  ++Q.counters->interrupts;
  do {
    Q.vq.disable_cb();
    uint32_t tag, len;
    while (Q.vq.get_buf(tag, len)) {
      // A token that is not a request in flight (a device that used one
      // twice): nothing to complete.
      if (tag >= Q.tag_busy.size() || Q.tag_busy[tag] != TAG_IN_FLIGHT) continue;
      Q.tag_busy[tag] = TAG_USED;  // completing until end_request
      ++Q.counters->completions;
      UsedRequest used;
      used.tag = tag;
      used.status = c.guest_memory(header_addr(q, tag) + 16, 1)[0];
      used.qid = q;
      used.submitter = Q.tag_cpu[tag];
      done.push_back(used);
    }
    if (Q.vq.broken()) break;
  } while (!Q.vq.enable_cb());
}

void VirtioBlkDriver::end_request(uint16_t q, uint32_t tag) {
  Queue& Q = queues_[q];
  if (tag >= Q.tag_busy.size() || Q.tag_busy[tag] != TAG_USED) return;
  Q.tag_busy[tag] = TAG_FREE;
  Q.free_tags.push_back(tag);
  --Q.outstanding;
}

}  // namespace nvmesim::fw
