#include "platform/verify/packed_state.h"

#include <cstring>
#include <new>
#include <stdexcept>

namespace nvmesim::platform::verify {

namespace {

using Pub = fw::DbbufPublish::Step;

// Bit widths: ring indices (kMaxRing 8) in 3, submission numbers (up to
// kMaxCommands plus one ring of resubmissions after a reset) in 7, store
// buffer counts and epochs in 4.
constexpr unsigned kIndexBits = 3;
constexpr unsigned kSeqBits = 7;
constexpr unsigned kSmallBits = 4;
constexpr unsigned kCodeBits = 4;  // a 16-bit index below 15, or 15 for the parked 0xFFFF
static_assert(kMaxRing <= (1u << kIndexBits), "ring indices fit their field");
static_assert(kMaxCommands + kMaxRing < (1u << kSeqBits), "submission numbers fit their field");
static_assert(kMaxStoreBuffer < (1u << kSmallBits), "store buffer positions fit their field");
static_assert(fw::EVENTIDX_PARK_INDEX == 0xFFFF, "the parked code");

class BitWriter {
 public:
  explicit BitWriter(PackedState& p) : p_(p) { std::memset(&p_, 0, sizeof p_); }
  void put(uint32_t value, unsigned bits) {
    if (value >> bits) throw std::logic_error("verify: a state field does not fit its packed width");
    const unsigned w = pos_ / 64, b = pos_ % 64;
    p_.word[w] |= uint64_t(value) << b;
    if (b + bits > 64) p_.word[w + 1] |= uint64_t(value) >> (64 - b);
    pos_ += bits;
  }
  void code(uint16_t v) { put(v == 0xFFFF ? 15u : (v < 15 ? v : 16u), kCodeBits); }
  unsigned used() const { return pos_; }

 private:
  PackedState& p_;
  unsigned pos_ = 0;
};

class BitReader {
 public:
  explicit BitReader(const PackedState& p) : p_(p) {}
  uint32_t get(unsigned bits) {
    const unsigned w = pos_ / 64, b = pos_ % 64;
    uint64_t v = p_.word[w] >> b;
    if (b + bits > 64) v |= p_.word[w + 1] << (64 - b);
    pos_ += bits;
    return uint32_t(v & ((uint64_t(1) << bits) - 1));
  }
  uint16_t code() {
    const uint32_t v = get(kCodeBits);
    return v == 15 ? uint16_t(0xFFFF) : uint16_t(v);
  }

 private:
  const PackedState& p_;
  unsigned pos_ = 0;
};

bool publish_cleared(const fw::DbbufPublish& p) {
  static const unsigned char zero[sizeof(fw::DbbufPublish)] = {};
  return std::memcmp(&p, zero, sizeof p) == 0;
}

// The publish object the firmware's sequence reaches at `step` with these
// loaded values (the model only ever advances it this way).
void rebuild_publish(fw::DbbufPublish& out, const ModelConfig& c, uint16_t new_value, uint16_t old_value,
                     uint16_t eventidx, Pub step) {
  std::memset(static_cast<void*>(&out), 0, sizeof out);
  new (&out) fw::DbbufPublish(new_value, c.full_barrier, c.need_event);
  for (int guard = 0; out.step() != step && guard < 8; ++guard) {
    if (out.step() == Pub::LoadShadow) out.advance(old_value);
    else if (out.step() == Pub::LoadEventIdx) out.advance(eventidx);
    else out.advance();
  }
}

}  // namespace

uint64_t hash_packed(const PackedState& p) {
  uint64_t h = 0x9E3779B97F4A7C15ull;
  for (unsigned i = 0; i < 8; ++i) {
    h ^= p.word[i] * 0xBF58476D1CE4E5B9ull;
    h = (h << 29 | h >> 35) * 0x94D049BB133111EBull;
  }
  h ^= h >> 31;
  h *= 0xD6E8FEB86659FD93ull;
  return h ^ (h >> 32);
}

PackedState StatePacker::pack(const State& s) const {
  PackedState p;
  BitWriter w(p);
  // Unrolled loops keep every field's position a constant.
  w.code(s.shadow_sq);
  w.code(s.shadow_cq);
  w.code(s.eventidx_sq);
  w.code(s.eventidx_cq);
#pragma GCC unroll 8
  for (unsigned i = 0; i < kMaxRing; ++i) {
    w.put(s.sqe[i], kSeqBits);
    w.put(s.cqe_seq[i], kSeqBits);
    w.put(s.cqe_sqhd[i], kIndexBits);
    w.put(s.cqe_phase[i], 1);
  }
#pragma GCC unroll 10
  for (unsigned i = 0; i < kMaxStoreBuffer; ++i) {
    w.put(s.store_buffer[i].location, kSmallBits);
    w.put(s.store_buffer[i].epoch, kSmallBits);
    w.put(s.store_buffer[i].value, kSeqBits);
  }
  w.put(s.store_count, kSmallBits);
  w.put(s.wmb_epoch, kSmallBits);
  w.put(s.guest_pc, 2);
  w.put(s.publishing_sq, 1);
  const bool cleared = publish_cleared(s.publish);
  w.put(cleared, 1);
  if (!cleared) {
    w.put(s.publish.new_value(), kIndexBits);
    w.code(s.publish.old_value());
    w.code(s.publish.eventidx());
    w.put(uint32_t(s.publish.step()), 3);
    fw::DbbufPublish again;
    rebuild_publish(again, config_, s.publish.new_value(), s.publish.old_value(), s.publish.eventidx(),
                    s.publish.step());
    if (std::memcmp(&again, &s.publish, sizeof again) != 0)
      throw std::logic_error("verify: the driver's publish state does not rebuild from its packed form");
  }
  w.put(s.sq_tail, kIndexBits);
  w.put(s.sq_published, kIndexBits);
  w.put(s.sq_head, kIndexBits);
  w.put(s.cq_head, kIndexBits);
  w.put(s.cq_published, kIndexBits);
  w.put(s.cq_phase, 1);
  w.put(s.next_seq, kSeqBits);
  w.put(s.expect_seq, kSeqBits);
  w.put(s.completed, kSeqBits);
  w.put(s.fetch_seq, kSeqBits);
  w.put(s.irq_pending, 1);
  w.put(s.reset_done, 1);
  w.put(s.device_pc, 4);
  w.put(s.dev_sq_head, kIndexBits);
  w.put(s.dev_sq_tail, kIndexBits);
  w.put(s.dev_cq_head, kIndexBits);
  w.put(s.dev_cq_tail, kIndexBits);
  w.put(s.dev_phase, 1);
  w.put(s.sq_kick, 1);
  w.put(s.cq_kick, 1);
  w.put(s.stalled, 1);
  w.put(s.sq_parked, 1);
  w.put(s.cq_parked, 1);
  w.put(s.posted, 1);
  w.put(s.held, kSmallBits);
  w.put(s.dev_store_location, 2);
  w.put(s.dev_store_pending, 1);
  w.code(s.dev_store_value);
  w.put(s.cq_unconsumed, kSmallBits);
  if (w.used() > 8 * 64) throw std::logic_error("verify: the packed state outgrew 64 bytes");
  return p;
}

State StatePacker::unpack(const PackedState& p) const {
  State s;
  std::memset(static_cast<void*>(&s), 0, sizeof s);
  BitReader r(p);
  s.shadow_sq = r.code();
  s.shadow_cq = r.code();
  s.eventidx_sq = r.code();
  s.eventidx_cq = r.code();
  for (unsigned i = 0; i < kMaxRing; ++i) {
    s.sqe[i] = uint8_t(r.get(kSeqBits));
    s.cqe_seq[i] = uint8_t(r.get(kSeqBits));
    s.cqe_sqhd[i] = uint8_t(r.get(kIndexBits));
    s.cqe_phase[i] = uint8_t(r.get(1));
  }
  for (unsigned i = 0; i < kMaxStoreBuffer; ++i) {
    s.store_buffer[i].location = uint8_t(r.get(kSmallBits));
    s.store_buffer[i].epoch = uint8_t(r.get(kSmallBits));
    s.store_buffer[i].value = uint16_t(r.get(kSeqBits));
  }
  s.store_count = uint8_t(r.get(kSmallBits));
  s.wmb_epoch = uint8_t(r.get(kSmallBits));
  s.guest_pc = uint8_t(r.get(2));
  s.publishing_sq = uint8_t(r.get(1));
  if (!r.get(1)) {
    const uint16_t new_value = uint16_t(r.get(kIndexBits));
    const uint16_t old_value = r.code();
    const uint16_t eventidx = r.code();
    const Pub step = Pub(r.get(3));
    rebuild_publish(s.publish, config_, new_value, old_value, eventidx, step);
  }
  s.sq_tail = uint8_t(r.get(kIndexBits));
  s.sq_published = uint8_t(r.get(kIndexBits));
  s.sq_head = uint8_t(r.get(kIndexBits));
  s.cq_head = uint8_t(r.get(kIndexBits));
  s.cq_published = uint8_t(r.get(kIndexBits));
  s.cq_phase = uint8_t(r.get(1));
  s.next_seq = uint8_t(r.get(kSeqBits));
  s.expect_seq = uint8_t(r.get(kSeqBits));
  s.completed = uint8_t(r.get(kSeqBits));
  s.fetch_seq = uint8_t(r.get(kSeqBits));
  s.irq_pending = uint8_t(r.get(1));
  s.reset_done = uint8_t(r.get(1));
  s.device_pc = uint8_t(r.get(4));
  s.dev_sq_head = uint8_t(r.get(kIndexBits));
  s.dev_sq_tail = uint8_t(r.get(kIndexBits));
  s.dev_cq_head = uint8_t(r.get(kIndexBits));
  s.dev_cq_tail = uint8_t(r.get(kIndexBits));
  s.dev_phase = uint8_t(r.get(1));
  s.sq_kick = uint8_t(r.get(1));
  s.cq_kick = uint8_t(r.get(1));
  s.stalled = uint8_t(r.get(1));
  s.sq_parked = uint8_t(r.get(1));
  s.cq_parked = uint8_t(r.get(1));
  s.posted = uint8_t(r.get(1));
  s.held = uint8_t(r.get(kSmallBits));
  s.dev_store_location = uint8_t(r.get(2));
  s.dev_store_pending = uint8_t(r.get(1));
  s.dev_store_value = r.code();
  s.cq_unconsumed = uint8_t(r.get(kSmallBits));
  return s;
}

}  // namespace nvmesim::platform::verify
