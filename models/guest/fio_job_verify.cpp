// The fio job's verify side (fio verify.c, backend.c do_verify): the job's
// FioVerify set up from its options, the verify phase that reads back what
// a writing job wrote, and the guest CPU time its checksums take.
#include <stdexcept>

#include "nvmesim/models/guest/fio_job.h"
#include "nvmesim/models/guest/vcpu.h"
#include "nvmesim/models/sim/run_control.h"

using namespace sc_core;

namespace nvmesim::models {

FioVerifyConfig fio_verify_config(const VcpuParams& p, uint32_t tags) {
  FioVerifyConfig c;
  c.mode = p.verify;
  c.bs = p.job.bs;
  c.interval = p.verify_interval;
  c.region_bytes = p.job.size;
  c.tags = tags;
  c.seed = p.job.seed ^ (uint64_t(p.qid) << 48);  // each job its own random data, as fio's per-thread seeds
  c.thread = p.qid;                                // fio's thread_number: 1 for the first job
  // A job that only reads (fio's !td_rw) verifies every read (backend.c do_io).
  c.read_only = p.job.rw == RwMode::Read || p.job.rw == RwMode::RandRead;
  const std::string bad = fio_opt::parse_verify_pattern(p.verify_pattern, c.pattern);
  if (!bad.empty()) throw std::invalid_argument("verify_pattern: " + bad);  // the configuration checked it
  return c;
}

NextIo FioJob::next_io() {
  if (!verify_phase_) return workload_.next();
  return NextIo{false, verify_.next_readback(), verify_.block_bytes()};
}

bool FioJob::io_left(uint32_t pending) const {
  if (verify_stop_) return false;  // verify_fatal
  if (verify_phase_) return pending < verify_.readback_left();
  return !params_.number_ios || stats_.issued + pending < params_.number_ios;
}

// backend.c thread_main: after do_io, a job that writes (td_write) with
// verify and do_verify runs do_verify: reads of the blocks logged as
// written (log_io_piece: an rb-tree by offset, each block once), checked as
// they complete. Its reads count as the job's reads, as fio's do.
bool FioJob::start_verify_phase() {
  if (verify_phase_ || !verify_.enabled() || !params_.do_verify || verify_stop_) return false;
  if (params_.job.rw != RwMode::Write && params_.job.rw != RwMode::RandWrite && params_.job.rw != RwMode::RandRw)
    return false;
  if (run_control::stop_requested()) return false;  // a signal: drain and stop, as fio
  verify_.start_readback();
  verify_phase_ = true;
  return verify_.readback_left() > 0;
}

// Per-mode throughput of the fill and the check on the guest's CPU, GB/s:
// nvmesim's own table-driven code (firmware/sim/checksum.cpp, byte at a
// time) measured on one core of the build machine (Intel Xeon, g++ -O2,
// 4 KiB buffers): crc32c 0.14, crc32 0.14, md5 0.16, sha256 0.095. An
// assumption for the guest's fio, which uses SSE4.2's crc32 instruction
// for crc32c where it has it (far faster). Pattern and meta are charged
// nothing (a fill or compare at memory speed; meta's 44-byte header CRC).
double fio_verify_gbps(VerifyMode m) {
  switch (m) {
    case VerifyMode::Crc32c: return 0.14;
    case VerifyMode::Crc32: return 0.14;
    case VerifyMode::Md5: return 0.16;
    case VerifyMode::Sha256: return 0.095;
    default: return 0;
  }
}

void FioJob::charge_verify() {
  const uint64_t bytes = verify_.take_work_bytes();
  if (!bytes) return;
  const double gbps = params_.verify_gbps > 0 ? params_.verify_gbps : fio_verify_gbps(verify_.mode());
  if (gbps > 0) cpu_.guest_work(sc_time(double(bytes) / gbps, SC_NS));  // GB/s = bytes per ns
}

}  // namespace nvmesim::models
