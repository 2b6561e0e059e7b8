#include "nvmesim/platform/verify/search.h"

#include <utility>
#include <stdexcept>

#include "nvmesim/platform/verify/big_array.h"
#include "nvmesim/platform/verify/packed_state.h"

namespace nvmesim::platform::verify {

namespace {

// The states found so far, in breadth-first order, packed, in fixed-size
// chunks (no reallocation, no copying as the search grows).
class StateStore {
 public:
  static constexpr unsigned kChunkBits = 16;
  const PackedState& operator[](uint32_t i) const { return chunks_[i >> kChunkBits][i & kChunkMask]; }
  uint32_t size() const { return size_; }
  void push_back(const PackedState& p) {
    if ((size_ & kChunkMask) == 0) chunks_.emplace_back(kChunkMask + 1, !chunks_.empty());  // the first stays small
    chunks_.back()[size_ & kChunkMask] = p;
    ++size_;
  }

 private:
  static constexpr uint32_t kChunkMask = (1u << kChunkBits) - 1;
  std::vector<BigArray<PackedState>> chunks_;
  uint32_t size_ = 0;
};

// Open addressing with linear probing. A slot holds the upper 32 bits of
// the state's hash (also its home position: the top bits) and its index + 1
// (0: empty), so a probe compares a stored state only when the hashes agree
// and growing the table never reads a stored state again.
class StateSet {
 public:
  explicit StateSet(StateStore& states) : states_(states), slots_(table(size_t(1) << kInitialBits)) {}
  // Index of `p` if stored; else stores it and returns its new index with
  // *added = true.
  uint32_t insert(const PackedState& p, bool* added) { return insert(p, tag_of(p), added); }
  static uint32_t tag_of(const PackedState& p) { return uint32_t(hash_packed(p) >> 32); }
  // The slot's cache line is fetched while other work goes on (a state's
  // successors are hashed together, then inserted).
  void prefetch(uint32_t tag) const { __builtin_prefetch(&slots_[home(tag)]); }
  uint32_t insert(const PackedState& p, uint32_t tag, bool* added) {
    if ((uint64_t(states_.size()) + 1) * 2 > slots_.size()) grow();
    const size_t mask = slots_.size() - 1;
    for (size_t i = home(tag);; i = (i + 1) & mask) {
      const uint64_t slot = slots_[i];
      if (slot == 0) {
        states_.push_back(p);
        slots_[i] = uint64_t(tag) << 32 | states_.size();
        *added = true;
        return states_.size() - 1;
      }
      if (uint32_t(slot >> 32) == tag && states_[uint32_t(slot) - 1] == p) {
        *added = false;
        return uint32_t(slot) - 1;
      }
    }
  }

 private:
  static constexpr unsigned kInitialBits = 16;
  static BigArray<uint64_t> table(size_t slots) {
    return BigArray<uint64_t>(slots, slots * sizeof(uint64_t) >= BigArray<uint64_t>::kHugePage);
  }
  size_t home(uint32_t tag) const { return size_t(tag) >> (32 - bits_); }
  void grow() {
    if (bits_ >= 32) throw std::length_error("verify: too many states for the state table");
    BigArray<uint64_t> old = table(slots_.size() * 2);
    std::swap(old, slots_);
    ++bits_;
    const size_t mask = slots_.size() - 1;
    for (size_t k = 0; k < old.size(); ++k) {
      const uint64_t v = old[k];
      if (!v) continue;
      size_t i = home(uint32_t(v >> 32));
      while (slots_[i]) i = (i + 1) & mask;
      slots_[i] = v;
    }
  }
  StateStore& states_;
  BigArray<uint64_t> slots_;
  unsigned bits_ = kInitialBits;
};

// The steps from the initial state to states[target], with their text.
void rebuild(const ModelConfig& c, const StatePacker& packer, const StateStore& states,
             const std::vector<uint32_t>& parent, uint32_t target, SearchResult& r) {
  std::vector<uint32_t> chain;
  for (uint32_t i = target;; i = parent[i]) {
    chain.push_back(i);
    if (i == 0) break;
  }
  std::vector<Successor> next;
  r.path.push_back(packer.unpack(states[0]));
  for (size_t k = chain.size() - 1; k-- > 0;) {
    successors(packer.unpack(states[chain[k + 1]]), c, next, true);
    for (const Successor& n : next) {
      if (n.violation == Property::None && packer.pack(n.state) == states[chain[k]]) {
        r.steps.push_back(n.step);
        r.path.push_back(n.state);
        break;
      }
    }
  }
}

}  // namespace

SearchResult search(const ModelConfig& config, uint64_t max_states, bool (*stop_requested)()) {
  SearchResult r;
  const StatePacker packer(config);
  StateStore states;
  std::vector<uint32_t> parent;
  StateSet set(states);
  bool added = false;
  set.insert(packer.pack(make_initial(config)), &added);
  parent.push_back(0);
  std::vector<Successor> next;
  std::vector<PackedState> packed;
  std::vector<uint32_t> tags;
  for (uint32_t at = 0; at < states.size(); ++at) {
    if (stop_requested && at % kStopCheckStates == 0 && at != 0 && stop_requested()) {
      r.interrupted = true;
      r.expanded = at;
      break;
    }
    const State current = packer.unpack(states[at]);
    successors(current, config, next, false);
    r.transitions += next.size();
    if (next.empty() && !finished(current, config)) {
      r.property = Property::LostWakeup;
      r.why = describe_stall(current, config);
      rebuild(config, packer, states, parent, at, r);
      break;
    }
    packed.resize(next.size());
    tags.resize(next.size());
    for (size_t k = 0; k < next.size(); ++k) {
      if (next[k].violation != Property::None) continue;
      packed[k] = packer.pack(next[k].state);
      tags[k] = StateSet::tag_of(packed[k]);
      set.prefetch(tags[k]);
    }
    for (size_t k = 0; k < next.size(); ++k) {
      if (next[k].violation != Property::None) {
        r.property = next[k].violation;
        r.why = next[k].why;
        rebuild(config, packer, states, parent, at, r);
        std::vector<Successor> with_text;
        successors(current, config, with_text, true);
        r.steps.push_back(with_text[k].step);
        r.path.push_back(with_text[k].state);
        break;
      }
      set.insert(packed[k], tags[k], &added);
      if (added) parent.push_back(at);
    }
    if (r.property != Property::None) break;
    if (states.size() >= max_states) {
      r.truncated = true;
      break;
    }
  }
  r.states = states.size();
  return r;
}

}  // namespace nvmesim::platform::verify
