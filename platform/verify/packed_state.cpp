#include "nvmesim/platform/verify/packed_state.h"

#include <cstring>
#include <new>
#include <stdexcept>

namespace nvmesim::platform::verify {

namespace {

using Pub = fw::DbbufPublish::Step;

// The layout: whole bytes for submission numbers (up to kMaxCommands plus
// one ring of resubmissions after a reset), nibbles for ring indices,
// counts and EventIdx codes (a 16-bit index below 15, or 15 for the parked
// 0xFFFF), single bits for flags. Every value is checked against its width.
static_assert(kMaxRing < 16 && kMaxStoreBuffer < 16, "indices and counts fit a nibble");
static_assert(kMaxCommands + kMaxRing < 256, "submission numbers fit a byte");
static_assert(fw::EVENTIDX_PARK_INDEX == 0xFFFF, "the parked code");
constexpr unsigned kSqe = 2, kCqeSeq = kSqe + kMaxRing, kCqeRest = kCqeSeq + kMaxRing,
                   kStores = kCqeRest + kMaxRing / 2, kScalars = kStores + 2 * kMaxStoreBuffer;
static_assert(kScalars + 16 <= sizeof(PackedState), "the layout fits 64 bytes");

class Writer {
 public:
  explicit Writer(PackedState& p) : b_(reinterpret_cast<unsigned char*>(p.word)) {
    std::memset(p.word, 0, sizeof p.word);
  }
  void byte(unsigned at, uint32_t v) {
    bad_ |= v >> 8;
    b_[at] = uint8_t(v);
  }
  // Two values in one byte: `lo` in bits 0..3, `hi` in 4..7.
  void nibbles(unsigned at, uint32_t lo, uint32_t hi) {
    bad_ |= (lo | hi) >> 4;
    b_[at] = uint8_t(lo | hi << 4);
  }
  static uint32_t code(uint16_t v) { return v == 0xFFFF ? 15u : (v < 15 ? v : 16u); }
  bool ok() const { return bad_ == 0; }

 private:
  unsigned char* b_;
  uint32_t bad_ = 0;
};

class Reader {
 public:
  explicit Reader(const PackedState& p) : b_(reinterpret_cast<const unsigned char*>(p.word)) {}
  uint8_t byte(unsigned at) const { return b_[at]; }
  uint8_t lo(unsigned at) const { return b_[at] & 15; }
  uint8_t hi(unsigned at) const { return b_[at] >> 4; }
  static uint16_t code(uint8_t v) { return v == 15 ? uint16_t(0xFFFF) : v; }

 private:
  const unsigned char* b_;
};

bool publish_cleared(const fw::DbbufPublish& p) { return p == cleared_publish(); }

// The publish object the firmware's sequence reaches at `step` with these
// loaded values (the model only ever advances it this way).
void rebuild_publish(fw::DbbufPublish& out, const ModelConfig& c, uint16_t new_value, uint16_t old_value,
                     uint16_t eventidx, Pub step) {
  out = fw::DbbufPublish(new_value, c.full_barrier, c.need_event);
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
  Writer w(p);
  w.nibbles(0, Writer::code(s.shadow_sq), Writer::code(s.shadow_cq));
  w.nibbles(1, Writer::code(s.eventidx_sq), Writer::code(s.eventidx_cq));
  for (unsigned i = 0; i < kMaxRing; ++i) {
    w.byte(kSqe + i, s.sqe[i]);
    w.byte(kCqeSeq + i, s.cqe_seq[i]);
  }
  for (unsigned i = 0; i < kMaxRing; i += 2) {
    if ((s.cqe_sqhd[i] | s.cqe_sqhd[i + 1]) >= 8 || (s.cqe_phase[i] | s.cqe_phase[i + 1]) > 1)
      throw std::logic_error("verify: a CQE field does not fit its packed width");
    w.nibbles(kCqeRest + i / 2, s.cqe_sqhd[i] | s.cqe_phase[i] << 3, s.cqe_sqhd[i + 1] | s.cqe_phase[i + 1] << 3);
  }
  for (unsigned i = 0; i < kMaxStoreBuffer; ++i) {
    w.nibbles(kStores + 2 * i, s.store_buffer[i].location, s.store_buffer[i].epoch);
    w.byte(kStores + 2 * i + 1, s.store_buffer[i].value);
  }
  unsigned at = kScalars;
  w.nibbles(at++, s.store_count, s.wmb_epoch);
  const bool cleared = publish_cleared(s.publish);
  uint32_t new_value = 0, old_code = 0, eventidx_code = 0, step = 0;
  if (!cleared) {
    new_value = s.publish.new_value();
    old_code = Writer::code(s.publish.old_value());
    eventidx_code = Writer::code(s.publish.eventidx());
    step = uint32_t(s.publish.step());
    fw::DbbufPublish again;
    rebuild_publish(again, config_, s.publish.new_value(), s.publish.old_value(), s.publish.eventidx(),
                    s.publish.step());
    if (again != s.publish)
      throw std::logic_error("verify: the driver's publish state does not rebuild from its packed form");
  }
  if (s.guest_pc > 3 || s.publishing_sq > 1) throw std::logic_error("verify: a driver field does not fit");
  w.nibbles(at++, s.guest_pc | s.publishing_sq << 2 | uint32_t(cleared) << 3, step);
  w.nibbles(at++, new_value, old_code);
  w.nibbles(at++, eventidx_code, s.device_pc);
  w.nibbles(at++, s.sq_tail, s.sq_published);
  w.nibbles(at++, s.sq_head, s.cq_head);
  w.nibbles(at++, s.cq_published, s.held);
  w.nibbles(at++, s.dev_sq_head, s.dev_sq_tail);
  w.nibbles(at++, s.dev_cq_head, s.dev_cq_tail);
  w.nibbles(at++, s.cq_unconsumed, Writer::code(s.dev_store_value));
  w.byte(at++, s.next_seq);
  w.byte(at++, s.expect_seq);
  w.byte(at++, s.completed);
  w.byte(at++, s.fetch_seq);
  const uint8_t flags[] = {s.cq_phase, s.irq_pending, s.reset_done, s.dev_phase, s.sq_kick, s.cq_kick,
                           s.stalled,  s.sq_parked,   s.cq_parked,  s.posted,    s.dev_store_pending};
  uint32_t bits = 0;
  for (unsigned i = 0; i < sizeof flags; ++i) {
    if (flags[i] > 1) throw std::logic_error("verify: a flag does not fit its packed bit");
    bits |= uint32_t(flags[i]) << i;
  }
  w.byte(at++, bits & 0xFF);
  w.nibbles(at++, bits >> 8, s.dev_store_location);
  if (!w.ok()) throw std::logic_error("verify: a state field does not fit its packed width");
  return p;
}

State StatePacker::unpack(const PackedState& p) const {
  State s;
  std::memset(static_cast<void*>(&s), 0, sizeof s);
  const Reader r(p);
  s.shadow_sq = Reader::code(r.lo(0));
  s.shadow_cq = Reader::code(r.hi(0));
  s.eventidx_sq = Reader::code(r.lo(1));
  s.eventidx_cq = Reader::code(r.hi(1));
  for (unsigned i = 0; i < kMaxRing; ++i) {
    s.sqe[i] = r.byte(kSqe + i);
    s.cqe_seq[i] = r.byte(kCqeSeq + i);
  }
  for (unsigned i = 0; i < kMaxRing; i += 2) {
    s.cqe_sqhd[i] = r.lo(kCqeRest + i / 2) & 7;
    s.cqe_phase[i] = r.lo(kCqeRest + i / 2) >> 3;
    s.cqe_sqhd[i + 1] = r.hi(kCqeRest + i / 2) & 7;
    s.cqe_phase[i + 1] = r.hi(kCqeRest + i / 2) >> 3;
  }
  for (unsigned i = 0; i < kMaxStoreBuffer; ++i) {
    s.store_buffer[i].location = r.lo(kStores + 2 * i);
    s.store_buffer[i].epoch = r.hi(kStores + 2 * i);
    s.store_buffer[i].value = r.byte(kStores + 2 * i + 1);
  }
  unsigned at = kScalars;
  s.store_count = r.lo(at);
  s.wmb_epoch = r.hi(at++);
  const uint8_t guest = r.lo(at);
  const auto step = Pub(r.hi(at++));
  s.guest_pc = guest & 3;
  s.publishing_sq = (guest >> 2) & 1;
  const uint16_t new_value = r.lo(at);
  const uint16_t old_value = Reader::code(r.hi(at++));
  const uint16_t eventidx = Reader::code(r.lo(at));
  s.device_pc = r.hi(at++);
  if (!(guest >> 3)) rebuild_publish(s.publish, config_, new_value, old_value, eventidx, step);
  s.sq_tail = r.lo(at);
  s.sq_published = r.hi(at++);
  s.sq_head = r.lo(at);
  s.cq_head = r.hi(at++);
  s.cq_published = r.lo(at);
  s.held = r.hi(at++);
  s.dev_sq_head = r.lo(at);
  s.dev_sq_tail = r.hi(at++);
  s.dev_cq_head = r.lo(at);
  s.dev_cq_tail = r.hi(at++);
  s.cq_unconsumed = r.lo(at);
  s.dev_store_value = Reader::code(r.hi(at++));
  s.next_seq = r.byte(at++);
  s.expect_seq = r.byte(at++);
  s.completed = r.byte(at++);
  s.fetch_seq = r.byte(at++);
  const uint32_t bits = r.byte(at) | uint32_t(r.lo(at + 1)) << 8;
  s.dev_store_location = r.hi(at + 1);
  uint8_t* const flags[] = {&s.cq_phase, &s.irq_pending, &s.reset_done, &s.dev_phase, &s.sq_kick, &s.cq_kick,
                            &s.stalled,  &s.sq_parked,   &s.cq_parked,  &s.posted,    &s.dev_store_pending};
  for (unsigned i = 0; i < sizeof flags / sizeof flags[0]; ++i) *flags[i] = (bits >> i) & 1;
  return s;
}

}  // namespace nvmesim::platform::verify
