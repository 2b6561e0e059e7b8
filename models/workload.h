// A fio-like job: which I/O comes next (direction, offset, size). Plain C++
// with its own deterministic generator, so a seed gives the same I/O stream
// on every machine.
#pragma once

#include <cstdint>
#include <string>

#include "models/param_visit.h"

namespace nvmesim::models {

enum class RwMode { Read, Write, RandRead, RandWrite, RandRw };
inline constexpr EnumEntry<RwMode> rw_modes[] = {
    {RwMode::Read, "read"},           {RwMode::Write, "write"}, {RwMode::RandRead, "randread"},
    {RwMode::RandWrite, "randwrite"}, {RwMode::RandRw, "randrw"}};
inline const char* to_string(RwMode mode) { return enum_name(rw_modes, mode); }

// Which I/O comes next; the fields but job_index are fio options that
// WorkloadParams visits.
struct JobSpec {
  RwMode rw{};
  uint32_t bs{};               // bytes per I/O
  uint64_t size{};             // region addressed, bytes from offset 0
  uint32_t rwmixread{};        // percent reads for RandRw
  uint64_t seed{};
  uint32_t job_index = 0;      // jobs get distinct streams from one seed
};

// xoshiro256** seeded through splitmix64: small, fast, fully specified.
class Rng {
 public:
  explicit Rng(uint64_t seed);
  uint64_t next();
  uint64_t below(uint64_t n);  // uniform in [0, n), n > 0
 private:
  uint64_t s_[4];
};

struct NextIo {
  bool write;
  uint64_t offset;  // bytes
  uint32_t bytes;
};

class Workload {
 public:
  explicit Workload(const JobSpec& spec);
  NextIo next();
  const JobSpec& spec() const { return spec_; }
 private:
  JobSpec spec_;
  Rng rng_;
  uint64_t blocks_;       // size / bs
  uint64_t next_block_ = 0;
};

}  // namespace nvmesim::models
