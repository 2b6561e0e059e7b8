// fio's two ways of pacing a job, as rules without time passing in them (the
// job, models/guest/fio_job.cpp, sleeps and spins as they say):
//   FioRate:      rate / rate_iops (init.c __setup_rate, backend.c
//                 usec_for_io, io_u.c rate_ddir): each direction's next I/O
//                 is due when the bytes issued so far, at the rate, have
//                 taken their time since the job's start;
//   FioThinktime: thinktime (backend.c handle_thinktime,
//                 thinktime_blocks_type=issue): after every thinktime_blocks
//                 I/Os issued, spin thinktime_spin and sleep the rest.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <systemc>

#include "nvmesim/models/guest/fio_options.h"
#include "nvmesim/models/guest/workload.h"

namespace nvmesim::models {

class FioRate {
 public:
  // fio's rate ("read[,write]" bytes per second) or, where it gives none,
  // rate_iops times the direction's smallest block size.
  void setup(const std::string& rate, const std::string& rate_iops, const JobSpec& job) {
    uint64_t bps[2], iops[2];
    fio_opt::parse_rate(rate, true, bps);
    fio_opt::parse_rate(rate_iops, false, iops);
    for (unsigned d = 0; d < 2; ++d) bps_[d] = bps[d] ? bps[d] : iops[d] * job.min_bs(d);
  }
  bool limited() const { return bps_[0] || bps_[1]; }
  uint64_t bytes_per_second(unsigned d) const { return bps_[d]; }
  // When direction d's next I/O is due, in us from the job's start.
  uint64_t next_due_us(unsigned d) const { return next_us_[d]; }

  // usec_for_io: an I/O of `bytes` in direction d was issued; the next one
  // is due when all of them would have taken their time at the rate.
  void issued(unsigned d, uint64_t bytes) {
    const uint64_t bps = bps_[d];
    if (!bps) return;
    const uint64_t total = issued_bytes_[d] += bytes;
    next_us_[d] = total % bps * 1000000 / bps + total / bps * 1000000;
  }

  // rate_ddir's answer at `now_us` (from the job's start) for a next I/O in
  // direction d: issue it now, or in a mixed job (`mixed`: the other
  // direction has a share) the other direction if that one is due, or wait
  // `wait_us` for the earlier of them.
  struct Pace {
    bool wait;
    unsigned dir;      // the direction to issue (or to wait for)
    uint64_t wait_us;  // when waiting
  };
  Pace pace(uint64_t now_us, unsigned d, bool mixed) const {
    if (next_us_[d] <= now_us) return {false, d, 0};
    const unsigned other = d ^ 1;
    if (mixed) {
      if (next_us_[other] <= now_us) return {false, other, 0};
      if (next_us_[other] < next_us_[d]) return {true, other, next_us_[other] - now_us};
    }
    return {true, d, next_us_[d] - now_us};
  }

 private:
  uint64_t bps_[2] = {0, 0};           // bytes per second (0: no limit)
  uint64_t issued_bytes_[2] = {0, 0};  // since the job's start
  uint64_t next_us_[2] = {0, 0};       // fio's rate_next_io_time
};

class FioThinktime {
 public:
  FioThinktime(const sc_core::sc_time& think, const sc_core::sc_time& spin, uint32_t blocks)
      : think_(think), spin_(std::min(spin, think)), blocks_(blocks) {}
  // With `issued` I/Os issued so far, a think is due.
  bool due(uint64_t issued) const {
    return think_ != sc_core::SC_ZERO_TIME && issued >= last_issued_ + blocks_;
  }
  // The think taken at `issued` I/Os (fio's last_thinktime_blocks).
  void taken(uint64_t issued) { last_issued_ = issued; }
  const sc_core::sc_time& spin() const { return spin_; }  // busy: guest work
  sc_core::sc_time sleep() const { return think_ - spin_; }  // the vCPU halts

 private:
  sc_core::sc_time think_, spin_;
  uint32_t blocks_;
  uint64_t last_issued_ = 0;
};

}  // namespace nvmesim::models
