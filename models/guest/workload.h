// A fio-like job: which I/O comes next (direction, offset, size). Plain C++
// with its own deterministic generator, so a seed gives the same I/O stream
// on every machine.
#pragma once

#include <cstdint>
#include <string>

#include "nvmesim/models/guest/fio_options.h"
#include "nvmesim/models/sim/param_visit.h"

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
  uint64_t blockalign{};       // random offsets' alignment, fio's ba (0: each direction's min_bs)
  uint64_t seed{};
  // fio's bssplit, bsrange, random_distribution as given (models/guest/fio_options.h).
  std::string bssplit_text, bsrange_text, distribution_text;
  uint32_t job_index = 0;      // jobs get distinct streams from one seed
  // The block sizes of direction d (0 read, 1 write): fio's min_bs, max_bs.
  uint64_t min_bs(unsigned d) const;
  uint64_t max_bs(unsigned d) const;
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

// The I/O stream of fio's get_io_u: the direction (rw, rwmixread), the
// block size (io_u.c get_next_buflen: bs, or bssplit's weights, or bsrange),
// and the offset: sequential, or random over size / min_bs blocks
// (random_distribution: uniform, or lib/zipf.c's zipf and pareto, lib/gauss.c's
// normal, each block number scattered by fio's __hash_u64 as fio does).
class Workload {
 public:
  explicit Workload(const JobSpec& spec);
  NextIo next();
  // The direction of the next I/O, decided before it is built (fio's
  // rate_ddir may switch it: force_write).
  bool next_is_write();
  void force_write(bool write) { pending_dir_ = write ? 1 : 0; }
  const JobSpec& spec() const { return spec_; }
 private:
  uint64_t next_bytes(unsigned d);
  uint64_t next_block();
  uint64_t next_zoned_block(unsigned d);
  bool next_offset_fits(uint64_t bytes) const { return next_offset_ + bytes <= spec_.size; }  // io_u_fits
  uint32_t rand32() { return uint32_t(rng_.next() >> 32); }  // fio's __rand (FRAND32_MAX)
  uint32_t dist_rand32() { return uint32_t(dist_rng_.next() >> 32); }
  JobSpec spec_;
  Rng rng_;
  Rng dist_rng_{0};
  fio_opt::BsSplitList split_[2];
  fio_opt::BsRange range_[2];
  fio_opt::DistributionSpec dist_;
  uint64_t minbs_[2], maxbs_[2];  // fio's min_bs, max_bs per direction
  uint64_t range_bytes_;  // fio's range_size: the smallest block size of either direction
  uint64_t blocks_;       // size / range_bytes_ (fio's nranges)
  uint64_t aligned_blocks_[2]{};  // blockalign: io_u.c last_block per direction
  uint64_t next_offset_ = 0;
  int pending_dir_ = -1;  // -1: not decided yet
  // lib/zipf.c's state.
  double zetan_ = 0, zeta2_ = 0, pareto_pow_ = 0;
  uint64_t rand_off_ = 0;
  uint64_t gauss_stddev_ = 0;
};

}  // namespace nvmesim::models
