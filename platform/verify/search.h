// Breadth-first search over verify's model: every state reachable from the
// initial one is stored once (packed in 64 bytes, packed_state.h, in an
// open-addressing table), so the first violation found has the shortest
// trace. No symmetry or partial-order reduction: only the model's own
// folding of steps the other side cannot observe (docs/verify.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nvmesim/platform/verify/model.h"

namespace nvmesim::platform::verify {

struct SearchResult {
  Property property = Property::None;  // None: no violation in the bounded space
  std::string why;                     // the violation, one line
  uint64_t states = 0;                 // distinct states stored
  uint64_t transitions = 0;
  bool truncated = false;              // stopped at max_states
  bool interrupted = false;            // stopped because stop_requested() said so
  uint64_t expanded = 0;               // interrupted: states whose successors were checked
  std::vector<Step> steps;             // the counterexample, with text
  std::vector<State> path;             // states: initial, then after each step
};

// Memory a stored state takes at most: the packed state, its parent index
// and its share of the hash table while it grows (old and new tables).
constexpr uint64_t kStateBytes = 120;
// max_states: stop (truncated) once that many states are stored.
// stop_requested (optional): asked every kStopCheckStates states; true ends
// the search with `interrupted` set and the states explored so far (a
// signal: platform/cli/interrupt.h; about 3 ms apart at the default's pace).
constexpr uint32_t kStopCheckStates = 4096;
SearchResult search(const ModelConfig& config, uint64_t max_states, bool (*stop_requested)() = nullptr);

}  // namespace nvmesim::platform::verify
