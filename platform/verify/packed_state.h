// A model State in 64 bytes, for the search's state table: a submission
// number in a byte, a ring index, a count or an EventIdx in a nibble (one
// code for a parked EventIdx), a flag in a bit; one cache line per stored
// state instead of two or three. pack() is exact: it refuses a
// value outside its field (std::logic_error) and checks that the driver's
// publish sequence rebuilds to the same bytes, so unpack(pack(s)) == s and
// two states are equal exactly when their packed forms are.
#pragma once

#include <cstdint>

#include "nvmesim/platform/verify/model.h"

namespace nvmesim::platform::verify {

struct PackedState {
  uint64_t word[8];
  bool operator==(const PackedState& o) const {
    uint64_t diff = 0;
    for (unsigned i = 0; i < 8; ++i) diff |= word[i] ^ o.word[i];
    return diff == 0;
  }
};

uint64_t hash_packed(const PackedState& p);

// Packing needs the configuration: the publish sequence's barrier and
// need_event form are the run's, not the state's.
class StatePacker {
 public:
  explicit StatePacker(const ModelConfig& c) : config_(c) {}
  PackedState pack(const State& s) const;
  State unpack(const PackedState& p) const;

 private:
  ModelConfig config_;
};

}  // namespace nvmesim::platform::verify
