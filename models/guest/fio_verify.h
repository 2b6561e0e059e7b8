// fio's verify for one job (fio verify.c). A write fills its buffer; a read
// of a block the job wrote checks it:
//  - verify=pattern: nvmesim's per-block pattern (it depends on the block
//    only, so every job writes the same bytes to a block and overlapping
//    writes cannot make a correct read fail), or verify_pattern's bytes
//    repeated from the I/O's first byte (fio's fill_verify_pattern);
//  - crc32c, crc32, md5, sha256, meta: every verify_interval of the I/O
//    starts with fio's struct verify_header (verify.h: magic 0xacca,
//    version, verify_type, len, rand_seed, offset, time, numberio, thread,
//    then the CRC-32C of the header before its crc32 field) and the
//    checksum of the rest of the interval (meta: none), whose bytes are
//    random from the job's seed (fio's rand_seed) or verify_pattern's. A
//    read checks magic, len, offset, the header's CRC and the checksum
//    (verify.c verify_header, verify_io_u_*), each interval on its own, so
//    the check needs no record of what was written.
// Pattern checks reads of written blocks whenever they come; the header
// modes check the reads of the verify phase (fio's do_verify, after the
// write phase: verify_io_u runs on reads from the written-blocks list). A
// read-only job (rw=read, randread) checks every read it makes, whatever
// do_verify says (backend.c do_io: verify_io_u is the end_io of every read
// when !td_rw), against what an earlier job wrote: the checks need no
// record of the writes. A read's buffer is zeroed when it is issued, so
// stale data cannot pass.
#pragma once

#include <cstdint>
#include <vector>

#include "nvmesim/models/guest/fio_verify_opts.h"

namespace nvmesim::models {

struct FioVerifyConfig {
  VerifyMode mode = VerifyMode::Off;
  uint32_t bs = 4096;        // the job's one block size
  uint32_t interval = 0;     // verify_interval (0: bs)
  uint64_t region_bytes = 0; // the region the job addresses
  uint32_t tags = 1;         // I/Os that can be in flight
  uint64_t seed = 1;         // the job's seed (fio's rand_seed comes from it)
  uint16_t thread = 1;       // fio's thread_number
  std::vector<uint8_t> pattern;  // verify_pattern (empty: none)
  bool read_only = false;        // the job only reads: every read is checked
};

class FioVerify {
 public:
  explicit FioVerify(const FioVerifyConfig& c);
  bool enabled() const { return c_.mode != VerifyMode::Off; }
  VerifyMode mode() const { return c_.mode; }
  uint32_t block_bytes() const { return c_.bs; }
  bool header_mode() const { return fio_opt::verify_header_bytes(c_.mode) != 0; }

  // The I/O on `tag` is being issued with its data buffer `buf` of `bytes`:
  // the whole I/O, or the part `part_offset` bytes into it (an I/O split at
  // MDTS: each part has its tag and buffer, and carries its share of the
  // block's content; parts are whole verify_intervals).
  void prepare(uint32_t tag, bool write, uint64_t offset, uint8_t* buf, uint32_t bytes, uint32_t part_offset = 0);
  // The I/O on `tag` completed without error: a write's block counts as
  // written from now on; true for a read that is to be checked (then check
  // its buffer with matches).
  bool completed(uint32_t tag, bool write);
  // The bytes of the block the I/O (or part) on `tag` carries.
  uint32_t part_bytes(uint32_t tag) const { return part_[tag].bytes; }
  bool matches(uint32_t tag, const uint8_t* buf);

  // The verify phase (fio's do_verify): reads of each written block once,
  // in offset order (verify_sort).
  void start_readback();
  bool readback() const { return readback_; }
  uint64_t readback_left() const { return readback_left_; }
  uint64_t next_readback();  // the next block's byte offset
  uint64_t blocks_written() const;

  // Bytes the guest's CPU ran a checksum or pattern over since the last call.
  uint64_t take_work_bytes() {
    const uint64_t b = work_bytes_;
    work_bytes_ = 0;
    return b;
  }

  // Word i of block `block`'s pattern (splitmix64 of both).
  static uint64_t pattern_word(uint64_t block, uint64_t i) {
    uint64_t z = block * 0x9E3779B97F4A7C15ull + i + 1;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    return z ^ (z >> 27);
  }
  // One interval's header and checksum for data already in place at
  // chunk[hdr..interval): what a write stores (public for tests).
  void seal(uint8_t* chunk, uint64_t offset, uint64_t rand_seed, uint64_t numberio) const;
  // What is wrong with one interval (nullptr: nothing); `io_pos`: where the
  // interval starts in its I/O's buffer (verify_pattern's phase).
  const char* check_chunk(const uint8_t* chunk, uint64_t offset, uint32_t io_pos = 0) const;
  // verify_intervals examined by matches since the last call (a read's
  // check stops at its first bad one).
  uint64_t take_intervals() {
    const uint64_t n = intervals_;
    intervals_ = 0;
    return n;
  }

 private:
  void fill(uint8_t* p, uint64_t offset, uint32_t part_offset, uint32_t bytes, uint64_t rand_seed);

  FioVerifyConfig c_;
  uint32_t interval_;
  std::vector<uint64_t> block_;   // per tag: the block its I/O addresses
  std::vector<uint8_t> check_;    // per tag: a read to check
  struct Part {
    uint32_t offset = 0, bytes = 0;  // into the block
  };
  std::vector<Part> part_;        // per tag: the part of the block its buffer holds
  std::vector<uint8_t> written_;  // per block: a write of it completed
  uint64_t numberio_ = 0;         // writes issued (fio's io_issues[DDIR_WRITE])
  uint64_t rand_seed_ = 0;        // the I/O being prepared's
  bool readback_ = false;
  uint64_t readback_next_ = 0, readback_left_ = 0;
  uint64_t work_bytes_ = 0;
  uint64_t intervals_ = 0;
};

}  // namespace nvmesim::models
