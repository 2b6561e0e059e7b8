#include "platform/verify/search.h"

#include <cstring>

namespace nvmesim::platform::verify {

namespace {

uint64_t hash_state(const State& s) {
  const unsigned char* p = reinterpret_cast<const unsigned char*>(&s);
  uint64_t h = 0x9E3779B97F4A7C15ull;
  size_t i = 0;
  for (; i + 8 <= sizeof(State); i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    h = (h ^ w) * 0xFF51AFD7ED558CCDull;
    h ^= h >> 32;
  }
  for (; i < sizeof(State); ++i) h = (h ^ p[i]) * 0x100000001B3ull;
  h ^= h >> 29;
  h *= 0xC4CEB9FE1A85EC53ull;
  return h ^ (h >> 32);
}

bool same(const State& a, const State& b) { return std::memcmp(&a, &b, sizeof(State)) == 0; }

// Open addressing over indices into the state vector (0 = empty slot).
class StateSet {
 public:
  explicit StateSet(std::vector<State>& states) : states_(states), slots_(1u << 16, 0) {}
  // Index of `s` if stored; else stores it (appending to the vector) and
  // returns its new index with *added = true.
  uint32_t insert(const State& s, bool* added) {
    if ((states_.size() + 1) * 2 > slots_.size()) grow();
    const uint32_t found = place(s, hash_state(s));
    *added = found == UINT32_MAX;
    if (!*added) return found;
    states_.push_back(s);
    slots_[last_slot_] = uint32_t(states_.size());
    return uint32_t(states_.size() - 1);
  }

 private:
  uint32_t place(const State& s, uint64_t h) {
    const size_t mask = slots_.size() - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
      if (slots_[i] == 0) {
        last_slot_ = i;
        return UINT32_MAX;
      }
      if (same(states_[slots_[i] - 1], s)) return slots_[i] - 1;
    }
  }
  void grow() {
    std::vector<uint32_t> old(slots_.size() * 2, 0);
    old.swap(slots_);
    const size_t mask = slots_.size() - 1;
    for (uint32_t v : old) {
      if (!v) continue;
      size_t i = hash_state(states_[v - 1]) & mask;
      while (slots_[i]) i = (i + 1) & mask;
      slots_[i] = v;
    }
  }
  std::vector<State>& states_;
  std::vector<uint32_t> slots_;
  size_t last_slot_ = 0;
};

// The steps from the initial state to states[target], with their text.
void rebuild(const ModelConfig& c, const std::vector<State>& states, const std::vector<uint32_t>& parent,
             uint32_t target, SearchResult& r) {
  std::vector<uint32_t> chain;
  for (uint32_t i = target;; i = parent[i]) {
    chain.push_back(i);
    if (i == 0) break;
  }
  std::vector<Successor> next;
  r.path.push_back(states[0]);
  for (size_t k = chain.size() - 1; k-- > 0;) {
    successors(states[chain[k + 1]], c, next, true);
    for (const Successor& n : next) {
      if (n.violation == Property::None && same(n.state, states[chain[k]])) {
        r.steps.push_back(n.step);
        r.path.push_back(n.state);
        break;
      }
    }
  }
}

}  // namespace

SearchResult search(const ModelConfig& config, uint64_t max_states) {
  SearchResult r;
  std::vector<State> states;
  std::vector<uint32_t> parent;
  states.reserve(1u << 16);
  StateSet set(states);
  bool added = false;
  set.insert(make_initial(config), &added);
  parent.push_back(0);
  std::vector<Successor> next;
  for (size_t at = 0; at < states.size(); ++at) {
    const State current = states[at];  // copy: the vector may grow below
    successors(current, config, next, false);
    r.transitions += next.size();
    if (next.empty() && !finished(current, config)) {
      r.property = Property::LostWakeup;
      r.why = describe_stall(current, config);
      rebuild(config, states, parent, uint32_t(at), r);
      break;
    }
    for (size_t k = 0; k < next.size(); ++k) {
      if (next[k].violation != Property::None) {
        r.property = next[k].violation;
        r.why = next[k].why;
        rebuild(config, states, parent, uint32_t(at), r);
        std::vector<Successor> with_text;
        successors(current, config, with_text, true);
        r.steps.push_back(with_text[k].step);
        r.path.push_back(with_text[k].state);
        break;
      }
      set.insert(next[k].state, &added);
      if (added) parent.push_back(uint32_t(at));
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
