// NVMe command arbitration: Round Robin and Weighted Round Robin with Urgent
// Priority Class (NVMe Base Specification 1.4, section 4.13). The rules and
// this arbiter's choices where the specification leaves them open are in
// arbitration.h.
#include "nvmesim/firmware/nvme/arbitration.h"

#include <algorithm>

namespace nvmesim::fw {

Arbiter::Arbiter(size_t queues) {
  const size_t n = std::min<size_t>(queues == 0 ? 1 : queues, size_t(0xFFFF) + 1);
  ready_.assign(n, 0);
  priority_.assign(n, SqPriority::Urgent);
  reset();
}

void Arbiter::configure(ArbitrationMechanism mechanism, const ArbitrationFeature& feature) {
  mechanism_ = mechanism;
  feature_ = feature;
  feature_.ab &= 0x7;
  new_round();
}

void Arbiter::set_priority(uint16_t sqid, SqPriority priority) {
  if (sqid == 0 || sqid >= priority_.size()) return;
  priority_[sqid] = SqPriority(uint8_t(priority) & 0x3);
}

SqPriority Arbiter::priority(uint16_t sqid) const {
  return sqid < priority_.size() ? priority_[sqid] : SqPriority::Urgent;
}

void Arbiter::set_ready(uint16_t sqid, bool ready) {
  if (sqid >= ready_.size() || bool(ready_[sqid]) == ready) return;
  ready_[sqid] = ready ? 1 : 0;
  if (ready)
    ++ready_count_;
  else
    --ready_count_;
}

void Arbiter::reset() {
  std::fill(ready_.begin(), ready_.end(), 0);
  std::fill(priority_.begin(), priority_.end(), SqPriority::Urgent);
  ready_count_ = 0;
  // The first turn of every class goes to its lowest ready SQ id.
  for (uint16_t& last : last_) last = uint16_t(ready_.size() - 1);
  new_round();
}

unsigned Arbiter::class_of(uint16_t sqid) const {
  if (mechanism_ == ArbitrationMechanism::RoundRobin) return kAll;
  if (sqid == 0) return kAdmin;
  return kUrgent + unsigned(priority_[sqid]);  // Urgent, High, Medium, Low
}

int Arbiter::next_in_class(unsigned cls) const {
  const size_t n = ready_.size();
  size_t q = last_[cls];
  for (size_t i = 0; i < n; ++i) {
    q = q + 1 == n ? 0 : q + 1;
    if (ready_[q] && class_of(uint16_t(q)) == cls) return int(q);
  }
  return -1;
}

uint32_t Arbiter::weight(unsigned cls) const {
  switch (cls) {
    case kHigh: return uint32_t(feature_.hpw) + 1;
    case kHigh + 1: return uint32_t(feature_.mpw) + 1;
    case kLow: return uint32_t(feature_.lpw) + 1;
    default: return 0;
  }
}

void Arbiter::new_round() {
  for (unsigned c = kHigh; c <= kLow; ++c) credits_[c] = weight(c);
  level_ = kHigh;
}

Arbiter::Grant Arbiter::next() {
  if (ready_count_ == 0) return {};
  const uint32_t burst = feature_.burst();
  if (mechanism_ == ArbitrationMechanism::RoundRobin) {
    const int q = next_in_class(kAll);
    return q < 0 ? Grant{} : Grant{uint16_t(q), burst};
  }
  // Strict priority: Admin, then Urgent (round robin among them).
  for (unsigned cls : {kAdmin, kUrgent}) {
    const int q = next_in_class(cls);
    if (q >= 0) return Grant{uint16_t(q), burst};
  }
  bool weighted_ready = false;
  for (unsigned c = kHigh; c <= kLow && !weighted_ready; ++c) weighted_ready = next_in_class(c) >= 0;
  if (!weighted_ready) return {};
  // The rest of this round's levels, then (at most) a whole new round.
  for (unsigned step = 0; step < 2 * (kLow - kHigh + 1); ++step) {
    if (credits_[level_] > 0) {
      const int q = next_in_class(level_);
      if (q >= 0) return Grant{uint16_t(q), std::min(burst, credits_[level_])};
    }
    if (level_ == kLow)
      new_round();
    else
      ++level_;
  }
  return {};  // not reached: a weighted SQ is ready
}

void Arbiter::consumed(const Grant& grant, uint32_t fetched) {
  if (grant.sqid >= ready_.size()) return;
  const unsigned cls = class_of(grant.sqid);
  last_[cls] = grant.sqid;
  if (cls >= kHigh && cls <= kLow) credits_[cls] -= std::min(fetched, credits_[cls]);
}

}  // namespace nvmesim::fw
