// A fio-like job: which I/O comes next (direction, offset, size). Plain C++
// with its own deterministic generator, so a seed gives the same I/O stream
// on every machine.
#pragma once

#include <cstdint>
#include <string>

namespace nvmesim::models {

enum class RwMode { Read, Write, RandRead, RandWrite, RandRw };
RwMode parse_rw(const std::string& text);  // throws std::invalid_argument
const char* to_string(RwMode mode);

struct JobSpec {
  RwMode rw = RwMode::RandRead;
  uint32_t bs = 4096;          // bytes per I/O
  uint64_t size = 1ull << 30;  // region addressed, bytes from offset 0
  uint32_t rwmixread = 50;     // percent reads for RandRw
  uint64_t seed = 1;
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
