// EventIdx math checked against an independent statement of the rule:
// "ring iff EventIdx lies in [old, new) cyclically" (Linux form) or in
// [old, new] (inclusive form), decided by walking the interval one index at
// a time from old, never by the subtraction formula under test.
//
// Which modulus? The driver's indices are queue indices in [0, N), but the
// u16 formula computes the interval mod 65536. The exhaustive check compares
// each form with the interval walked mod 65536 (the rule the Linux code
// states) and, separately, counts where the interval walked mod N gives
// another answer. For EventIdx < N the two walks always agree: an update
// that wraps the queue (new < old) covers [old, N) and [0, new) mod N, and
// [old, 65536) and [0, new) mod 65536, which hold the same indices below N.
// They differ only for an EventIdx parked at or above N, which the mod-65536
// interval holds exactly on wrapping updates (checked below).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "nvmesim/firmware/nvme/eventidx.h"

using namespace nvmesim::fw;

namespace {

// Marks [old, new) by stepping from old, mod `modulus`, until new.
void walk_interval(std::vector<uint8_t>& in, uint32_t old_idx, uint32_t new_idx,
                   uint32_t modulus) {
  std::fill(in.begin(), in.end(), 0);
  for (uint32_t k = old_idx; k != new_idx; k = (k + 1) % modulus) in[k] = 1;
}

struct ExhaustiveCounts {
  uint64_t triples = 0;
  uint64_t linux_mismatch = 0;      // need_event_linux vs [old, new) mod 65536
  uint64_t inclusive_mismatch = 0;  // need_event_inclusive vs [old, new] mod 65536
  uint64_t modn_disagree = 0;       // [old, new) mod N vs mod 65536
  uint64_t modn_disagree_wrapped = 0;
  uint64_t forms_differ_ei_eq_new_only = 0;
  uint64_t forms_differ_new_eq_old_only = 0;
  uint64_t forms_differ_both = 0;
  uint64_t forms_differ_neither = 0;
};

// Every (old, new, eventidx) in [0, n)^3. Per old, new visits the queue
// indices in walk order (old, old+1, ..., n-1, 0, ..., old-1); each interval
// bitmap grows by one walked step at a time, so the cost is O(n^3) checks
// plus 65536 walk steps per old.
ExhaustiveCounts exhaustive(uint32_t n) {
  ExhaustiveCounts c;
  std::vector<uint8_t> in16(65536), in_n(n);
  for (uint32_t old_idx = 0; old_idx < n; ++old_idx) {
    std::fill(in16.begin(), in16.end(), 0);
    std::fill(in_n.begin(), in_n.end(), 0);
    uint32_t walk16 = old_idx;  // next index the mod-65536 walk would mark
    for (uint32_t j = 0; j < n; ++j) {
      const uint32_t new_idx = (old_idx + j) % n;
      if (j > 0) in_n[(old_idx + j - 1) % n] = 1;
      while (walk16 != new_idx) {
        in16[walk16] = 1;
        walk16 = (walk16 + 1) & 0xFFFF;
      }
      uint64_t lin_bad = 0, inc_bad = 0, modn = 0, differ_at_new = 0, differ_else = 0;
      for (uint32_t ei = 0; ei < n; ++ei) {
        const bool lin = need_event_linux(uint16_t(ei), uint16_t(new_idx), uint16_t(old_idx));
        const bool inc =
            need_event_inclusive(uint16_t(ei), uint16_t(new_idx), uint16_t(old_idx));
        const bool rule = in16[ei] != 0;
        const bool rule_inc = rule || ei == new_idx;
        lin_bad += lin != rule;
        inc_bad += inc != rule_inc;
        modn += rule != (in_n[ei] != 0);
        differ_at_new += (lin != inc) && ei == new_idx;
        differ_else += (lin != inc) && ei != new_idx;
      }
      c.triples += n;
      c.linux_mismatch += lin_bad;
      c.inclusive_mismatch += inc_bad;
      c.modn_disagree += modn;
      if (new_idx < old_idx) c.modn_disagree_wrapped += modn;
      if (new_idx == old_idx) {
        c.forms_differ_both += differ_at_new;
        c.forms_differ_new_eq_old_only += differ_else;
      } else {
        c.forms_differ_ei_eq_new_only += differ_at_new;
        c.forms_differ_neither += differ_else;
      }
    }
  }
  return c;
}

void check_exhaustive(uint32_t n) {
  const ExhaustiveCounts c = exhaustive(n);
  INFO("N = " << n);
  CHECK(c.triples == uint64_t(n) * n * n);
  CHECK(c.linux_mismatch == 0);
  CHECK(c.inclusive_mismatch == 0);
  CHECK(c.modn_disagree == 0);
  CHECK(c.modn_disagree_wrapped == 0);
  // The forms differ exactly when eventidx == new: N(N-1) triples with
  // new != old, N with new == old == eventidx, none with new == old alone.
  CHECK(c.forms_differ_ei_eq_new_only == uint64_t(n) * (n - 1));
  CHECK(c.forms_differ_both == n);
  CHECK(c.forms_differ_new_eq_old_only == 0);
  CHECK(c.forms_differ_neither == 0);
}

// The interval rule by case split, a second statement independent of both
// the walk and the formula; used where walking every triple is too slow.
bool in_half_open(uint32_t ei, uint32_t new_idx, uint32_t old_idx) {
  return old_idx <= new_idx ? (old_idx <= ei && ei < new_idx) : (ei >= old_idx || ei < new_idx);
}

}  // namespace

TEST_CASE("eventidx: to_string names the forms", "[eventidx]") {
  CHECK(std::string(to_string(NeedEventForm::Linux)) == "linux");
  CHECK(std::string(to_string(NeedEventForm::Inclusive)) == "inclusive");
}

// Every triple for every N, including 1023 and 1024 (about 1.07e9 triples
// each; measured ~2 s each in Release on the shared 2-core machine).
TEST_CASE("eventidx: exhaustive small queues match the walked interval", "[eventidx]") {
  for (uint32_t n : {2u, 3u, 5u, 64u}) check_exhaustive(n);
}

TEST_CASE("eventidx: exhaustive N=1023 matches the walked interval", "[eventidx][slow]") {
  check_exhaustive(1023);
}

TEST_CASE("eventidx: exhaustive N=1024 matches the walked interval", "[eventidx][slow]") {
  check_exhaustive(1024);
}

TEST_CASE("eventidx: the interval by case split equals the walk", "[eventidx]") {
  // Validates the case-split oracle used by the random tests, over all of
  // [0, 64)^3, against the step-by-step walk mod 64.
  const uint32_t n = 64;
  std::vector<uint8_t> in(n);
  uint64_t bad = 0;
  for (uint32_t o = 0; o < n; ++o)
    for (uint32_t w = 0; w < n; ++w) {
      walk_interval(in, o, w, n);
      for (uint32_t e = 0; e < n; ++e) bad += (in[e] != 0) != in_half_open(e, w, o);
    }
  CHECK(bad == 0);
}

TEST_CASE("eventidx: seeded random triples on large queues", "[eventidx]") {
  for (uint32_t n : {4095u, 32768u, 65535u, 65536u}) {
    INFO("N = " << n);
    std::mt19937_64 rng(0x5eed0000u + n);
    std::uniform_int_distribution<uint32_t> idx(0, n - 1);

    // 1e6 independent triples in [0, N)^3 against the case-split rule; the
    // inclusive rule is the half-open one plus eventidx == new.
    uint64_t bad = 0;
    for (int i = 0; i < 1000000; ++i) {
      const uint32_t o = idx(rng), w = idx(rng), e = idx(rng);
      const bool rule = in_half_open(e, w, o);
      bad += need_event_linux(uint16_t(e), uint16_t(w), uint16_t(o)) != rule;
      bad += need_event_inclusive(uint16_t(e), uint16_t(w), uint16_t(o)) != (rule || e == w);
    }
    CHECK(bad == 0);

    // 64 random (old, new) pairs, each walked step by step mod 65536, each
    // against every 16-bit EventIdx (parked values >= N included) and
    // against the walk mod N for EventIdx < N.
    std::vector<uint8_t> in16(65536), in_n(n);
    uint64_t walk_bad = 0, modn_bad = 0, parked_bad = 0;
    for (int p = 0; p < 64; ++p) {
      const uint32_t o = idx(rng), w = idx(rng);
      walk_interval(in16, o, w, 65536);
      walk_interval(in_n, o, w, n);
      for (uint32_t e = 0; e < 65536; ++e) {
        const bool rule = in16[e] != 0;
        walk_bad += need_event_linux(uint16_t(e), uint16_t(w), uint16_t(o)) != rule;
        walk_bad += need_event_inclusive(uint16_t(e), uint16_t(w), uint16_t(o)) !=
                    (rule || e == w);
        if (e < n) {
          modn_bad += rule != (in_n[e] != 0);
        } else {
          // Parked: inside the mod-65536 interval iff the update wraps.
          parked_bad += rule != (w < o);
        }
      }
    }
    CHECK(walk_bad == 0);
    CHECK(modn_bad == 0);
    CHECK(parked_bad == 0);
  }
}

TEST_CASE("eventidx: the forms differ exactly when eventidx == new", "[eventidx]") {
  struct Case {
    uint16_t ei, new_idx, old_idx;
    bool linux_rings, inclusive_rings;
  };
  const Case cases[] = {
      {5, 5, 3, false, true},        // tail reached EventIdx but not past it
      {0, 0, 1020, false, true},     // same, on an update that wraps a 1024 queue
      {7, 7, 7, false, true},        // new == old == eventidx: inclusive rings, Linux not
      {3, 7, 7, false, false},       // new == old alone: both silent (empty update)
      {4, 5, 3, true, true},         // eventidx inside: both ring
      {3, 5, 3, true, true},         // eventidx == old: both ring
      {2, 5, 3, false, false},       // just before old: neither
      {6, 5, 3, false, false},       // just after new: neither
      {1023, 2, 1020, true, true},   // wrapped update covering 1023
      {1, 2, 1020, true, true},      // wrapped update covering 1
      {2, 2, 1020, false, true},     // wrapped update, eventidx == new
      {65535, 0, 65535, true, true}, // 16-bit wrap
      {0, 0, 65535, false, true},
  };
  for (const Case& c : cases) {
    INFO("eventidx " << c.ei << " new " << c.new_idx << " old " << c.old_idx);
    CHECK(need_event_linux(c.ei, c.new_idx, c.old_idx) == c.linux_rings);
    CHECK(need_event_inclusive(c.ei, c.new_idx, c.old_idx) == c.inclusive_rings);
    CHECK(need_event(NeedEventForm::Linux, c.ei, c.new_idx, c.old_idx) == c.linux_rings);
    CHECK(need_event(NeedEventForm::Inclusive, c.ei, c.new_idx, c.old_idx) ==
          c.inclusive_rings);
  }
  // And as a statement over a whole small space: differ <=> eventidx == new.
  uint64_t bad = 0;
  for (uint32_t o = 0; o < 16; ++o)
    for (uint32_t w = 0; w < 16; ++w)
      for (uint32_t e = 0; e < 16; ++e) {
        const bool differ = need_event_linux(uint16_t(e), uint16_t(w), uint16_t(o)) !=
                            need_event_inclusive(uint16_t(e), uint16_t(w), uint16_t(o));
        bad += differ != (e == w);
      }
  CHECK(bad == 0);
}

TEST_CASE("eventidx: a parked EventIdx rings once per lap", "[eventidx]") {
  // A device that parks EventIdx at or above N (never an index the tail
  // takes) must still hear once per lap: the u16 interval of an update that
  // wraps the queue runs through N..65535. 0xFFFFFFFF in the 32-bit buffer
  // entry is read as its low 16 bits.
  const uint32_t raw_parked = 0xFFFFFFFFu;
  for (uint32_t n : {64u, 1000u}) {
    const uint16_t parked_values[] = {uint16_t(n), 0xFFFF, uint16_t(raw_parked)};
    for (uint16_t ei : parked_values) {
      for (NeedEventForm form : {NeedEventForm::Linux, NeedEventForm::Inclusive}) {
        for (uint32_t b = 1; b < n; ++b) {
          INFO("N " << n << " eventidx " << ei << " form " << to_string(form) << " batch " << b);
          uint32_t tail = 0;
          uint64_t submitted = 0, rings = 0, bad = 0;
          // b laps in total: n updates of b entries.
          for (uint32_t u = 0; u < n; ++u) {
            const uint32_t next = (tail + b) % n;
            const bool ring = need_event(form, ei, uint16_t(next), uint16_t(tail));
            submitted += b;
            rings += ring;
            bad += ring != (next < tail);  // rings on the update that wraps
            bad += rings != submitted / n;  // one ring per completed lap, at every point
            tail = next;
          }
          CHECK(bad == 0);
          CHECK(rings == b);
        }
      }
    }
  }
}

TEST_CASE("eventidx: buffer offsets for DSTRD 0..3 up to qid 65535", "[eventidx]") {
  // Expected values in 64-bit by stride multiplication: entry k of the
  // buffer (k = 2y for SQ y, 2y+1 for CQ y) sits k strides of 4 << DSTRD.
  for (uint32_t dstrd = 0; dstrd <= 3; ++dstrd) {
    const uint64_t stride = uint64_t(4) << dstrd;
    for (uint32_t qid : {0u, 1u, 2u, 255u, 256u, 32767u, 65534u, 65535u}) {
      INFO("dstrd " << dstrd << " qid " << qid);
      const uint64_t sq = uint64_t(2) * qid * stride;
      const uint64_t cq = (uint64_t(2) * qid + 1) * stride;
      REQUIRE(cq < (uint64_t(1) << 32));  // fits the 32-bit result
      CHECK(uint64_t(dbbuf_sq_offset(uint16_t(qid), dstrd)) == sq);
      CHECK(uint64_t(dbbuf_cq_offset(uint16_t(qid), dstrd)) == cq);
      CHECK(dbbuf_bytes_needed(uint16_t(qid), dstrd) == cq + stride);
    }
  }
  // Spot values by hand.
  CHECK(dbbuf_sq_offset(0, 0) == 0);
  CHECK(dbbuf_cq_offset(0, 0) == 4);
  CHECK(dbbuf_sq_offset(1, 0) == 8);
  CHECK(dbbuf_cq_offset(1, 0) == 12);
  CHECK(dbbuf_sq_offset(1, 3) == 64);
  CHECK(dbbuf_cq_offset(65535, 3) == 4194272u);  // 131071 * 32
  CHECK(dbbuf_bytes_needed(65535, 3) == 4194304u);
  CHECK(dbbuf_bytes_needed(0, 0) == 8);
}

TEST_CASE("eventidx: ring arithmetic with wrap, sizes 2 and 65536", "[eventidx]") {
  SECTION("size 2") {
    constexpr Ring r{2};
    CHECK(r.advance(0) == 1);
    CHECK(r.advance(1) == 0);
    CHECK(r.advance(1, 3) == 0);
    CHECK(r.distance(1, 0) == 1);
    CHECK(r.distance(0, 1) == 1);
    CHECK(r.distance(1, 1) == 0);
    CHECK(r.empty(1, 1));
    CHECK_FALSE(r.full(1, 1));
    CHECK(r.full(0, 1));  // one entry: the only usable slot is taken
    CHECK(r.full(1, 0));
    CHECK(r.used(1, 0) == 1);
    CHECK(r.free_slots(1, 0) == 0);
    CHECK(r.free_slots(0, 0) == 1);
    CHECK(r.valid_index(1));
    CHECK_FALSE(r.valid_index(2));
  }
  SECTION("size 65536") {
    constexpr Ring r{65536};
    CHECK(r.advance(65535) == 0);
    CHECK(r.advance(65530, 10) == 4);
    CHECK(r.distance(65530, 4) == 10);
    CHECK(r.distance(4, 65530) == 65526);
    CHECK(r.empty(7, 7));
    CHECK(r.full(0, 65535));
    CHECK(r.full(5, 4));
    CHECK_FALSE(r.full(4, 5));
    CHECK(r.used(65535, 0) == 1);
    CHECK(r.used(0, 65535) == 65535);
    CHECK(r.free_slots(0, 65535) == 0);
    CHECK(r.free_slots(100, 100) == 65535);
    CHECK(r.free_slots(65535, 1) == 65533);
    CHECK(r.valid_index(65535));
    CHECK_FALSE(r.valid_index(65536));
  }
  SECTION("every head/tail of a small ring against counting steps") {
    for (uint32_t size : {2u, 3u, 17u}) {
      const Ring r{size};
      for (uint32_t h = 0; h < size; ++h)
        for (uint32_t t = 0; t < size; ++t) {
          uint32_t steps = 0;
          for (uint32_t k = h; k != t; k = (k + 1 == size) ? 0 : k + 1) ++steps;
          INFO("size " << size << " head " << h << " tail " << t);
          CHECK(r.distance(h, t) == steps);
          CHECK(r.used(h, t) == steps);
          CHECK(r.free_slots(h, t) == size - 1 - steps);
          CHECK(r.empty(h, t) == (steps == 0));
          CHECK(r.full(h, t) == (steps == size - 1));
          CHECK(r.advance(h, steps) == t);
        }
    }
  }
}
