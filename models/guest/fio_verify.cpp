#include "nvmesim/models/guest/fio_verify.h"

#include <cstring>

#include "nvmesim/firmware/sim/checksum.h"

namespace nvmesim::models {

namespace {
constexpr uint16_t kMagic = 0xacca;   // verify.h FIO_HDR_MAGIC
constexpr uint8_t kVersion = 0x81;    // verify.h VERIFY_HEADER_VERSION
constexpr uint32_t kHeaderBytes = 48; // sizeof(struct verify_header) on x86-64
constexpr uint32_t kCrcField = 44;    // offsetof(struct verify_header, crc32)

uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
template <class T>
void put(uint8_t* p, uint32_t at, T v) { std::memcpy(p + at, &v, sizeof v); }  // x86's byte order, as fio's struct
template <class T>
T get(const uint8_t* p, uint32_t at) {
  T v;
  std::memcpy(&v, p + at, sizeof v);
  return v;
}
}  // namespace

FioVerify::FioVerify(const FioVerifyConfig& c) : c_(c), interval_(c.interval ? c.interval : c.bs) {
  if (!enabled()) return;
  block_.resize(c.tags);
  check_.resize(c.tags);
  part_.resize(c.tags);
  written_.assign(c.region_bytes / c.bs, 0);
}

void FioVerify::prepare(uint32_t tag, bool write, uint64_t offset, uint8_t* buf, uint32_t bytes,
                        uint32_t part_offset) {
  const uint64_t block = offset / c_.bs;
  block_[tag] = block;
  part_[tag] = Part{part_offset, bytes};
  if (write) {
    // One rand_seed and numberio per I/O (fio's io_u), its parts prepared in turn.
    if (part_offset == 0) rand_seed_ = mix(c_.seed * 0x9E3779B97F4A7C15ull + ++numberio_);
    fill(buf, offset, part_offset, bytes, rand_seed_);
  } else {
    check_[tag] = c_.read_only || (written_[block] && (!header_mode() || readback_));
    std::memset(buf, 0, bytes);
  }
}

void FioVerify::fill(uint8_t* p, uint64_t offset, uint32_t part_offset, uint32_t bytes, uint64_t rand_seed) {
  const std::vector<uint8_t>& pat = c_.pattern;
  if (!pat.empty()) {
    for (uint32_t i = 0; i < bytes; ++i) p[i] = pat[(part_offset + i) % pat.size()];
  } else if (!header_mode()) {
    const uint64_t block = offset / c_.bs;
    for (uint64_t i = 0; i < bytes / 8; ++i) {
      const uint64_t w = pattern_word(block, part_offset / 8 + i);
      std::memcpy(p + 8 * i, &w, 8);
    }
  } else {
    for (uint64_t i = 0; i < bytes / 8; ++i) {
      const uint64_t w = mix(rand_seed + part_offset / 8 + i);
      std::memcpy(p + 8 * i, &w, 8);
    }
  }
  work_bytes_ += bytes;
  if (!header_mode()) return;
  for (uint32_t at = 0; at + interval_ <= bytes; at += interval_)
    seal(p + at, offset + part_offset + at, rand_seed, numberio_ - 1);
}

void FioVerify::seal(uint8_t* chunk, uint64_t offset, uint64_t rand_seed, uint64_t numberio) const {
  std::memset(chunk, 0, fio_opt::verify_header_bytes(c_.mode));
  put<uint16_t>(chunk, 0, kMagic);
  put<uint8_t>(chunk, 2, kVersion);
  put<uint8_t>(chunk, 3, fio_opt::verify_type_number(c_.mode));
  put<uint32_t>(chunk, 4, interval_);
  put<uint64_t>(chunk, 8, rand_seed);
  put<uint64_t>(chunk, 16, offset);
  // time_sec, time_nsec (24, 28): left 0, the output not depending on them.
  put<uint64_t>(chunk, 32, numberio);
  put<uint16_t>(chunk, 40, c_.thread);
  put<uint32_t>(chunk, kCrcField, checksum::crc32c(chunk, kCrcField));
  const uint32_t hdr = fio_opt::verify_header_bytes(c_.mode);
  const uint8_t* data = chunk + hdr;
  const uint32_t len = interval_ - hdr;
  uint8_t* sum = chunk + kHeaderBytes;
  switch (c_.mode) {
    case VerifyMode::Crc32c: put<uint32_t>(sum, 0, checksum::crc32c(data, len)); break;
    case VerifyMode::Crc32: put<uint32_t>(sum, 0, checksum::crc32(data, len)); break;
    case VerifyMode::Md5: {
      const auto d = checksum::md5(data, len);
      std::memcpy(sum, d.data(), d.size());
      break;
    }
    case VerifyMode::Sha256: {
      const auto d = checksum::sha256(data, len);
      std::memcpy(sum, d.data(), d.size());  // vhdr_sha256 holds 64 bytes: the digest, then zeros
      break;
    }
    default: break;
  }
}

// fio verify.c verify_header (fio since commit b638d82f, which moved
// verify=meta's fields into the generic header; before it verify_io_u_meta
// checked the offset, and numberio only for a writing job): magic,
// version, len (the verify_interval), offset, then the CRC-32C of the
// header. rand_seed is checked only with verify_header_seed, which init.c
// fixup_options turns off for a job that does not write, and numberio only
// when td_write (verify_header: "for read-only workloads, the program
// cannot be certain of the last numberio written to a block"); thread and
// time never. nvmesim checks neither rand_seed nor numberio for any job, so
// a writer's read-back and a read-only job check the same fields. The
// header's verify_type is not compared (fio switches on its own verify=
// and only logs a differing one); a different mode's checksum fails below.
const char* FioVerify::check_chunk(const uint8_t* chunk, uint64_t offset, uint32_t io_pos) const {
  if (get<uint16_t>(chunk, 0) != kMagic) return "bad magic";
  if (get<uint8_t>(chunk, 2) != kVersion) return "bad version";
  if (get<uint32_t>(chunk, 4) != interval_) return "bad len";
  if (get<uint64_t>(chunk, 16) != offset) return "bad offset";
  if (get<uint32_t>(chunk, kCrcField) != checksum::crc32c(chunk, kCrcField)) return "bad header crc";
  // verify=meta (VERIFY_HDR_ONLY) with verify_pattern: verify_io_u_pattern
  // checks the rest of the interval, the pattern laid from the I/O buffer's
  // first byte (fill_verify_pattern) at phase (io_pos + header) % size.
  if (c_.mode == VerifyMode::Meta && !c_.pattern.empty()) {
    const std::vector<uint8_t>& pat = c_.pattern;
    for (uint32_t i = kHeaderBytes; i < interval_; ++i)
      if (chunk[i] != pat[(io_pos + i) % pat.size()]) return "bad pattern";
  }
  const uint32_t hdr = fio_opt::verify_header_bytes(c_.mode);
  const uint8_t* data = chunk + hdr;
  const uint32_t len = interval_ - hdr;
  const uint8_t* sum = chunk + kHeaderBytes;
  bool ok = true;
  switch (c_.mode) {
    case VerifyMode::Crc32c: ok = get<uint32_t>(sum, 0) == checksum::crc32c(data, len); break;
    case VerifyMode::Crc32: ok = get<uint32_t>(sum, 0) == checksum::crc32(data, len); break;
    case VerifyMode::Md5: ok = std::memcmp(sum, checksum::md5(data, len).data(), 16) == 0; break;
    case VerifyMode::Sha256: ok = std::memcmp(sum, checksum::sha256(data, len).data(), 32) == 0; break;
    default: break;
  }
  return ok ? nullptr : "bad checksum";
}

bool FioVerify::completed(uint32_t tag, bool write) {
  if (write) {
    written_[block_[tag]] = 1;
    return false;
  }
  return check_[tag] != 0;
}

bool FioVerify::matches(uint32_t tag, const uint8_t* buf) {
  const Part part = part_[tag];
  work_bytes_ += part.bytes;
  if (header_mode()) {
    const uint64_t base = block_[tag] * c_.bs + part.offset;
    for (uint32_t at = 0; at + interval_ <= part.bytes; at += interval_) {
      ++intervals_;
      if (check_chunk(buf + at, base + at, part.offset + at)) return false;
    }
    return true;
  }
  if (!c_.pattern.empty()) {
    for (uint32_t i = 0; i < part.bytes; ++i)
      if (buf[i] != c_.pattern[(part.offset + i) % c_.pattern.size()]) return false;
    return true;
  }
  const uint64_t first = part.offset / 8;
  for (uint64_t i = 0; i < part.bytes / 8; ++i) {
    uint64_t w;
    std::memcpy(&w, buf + 8 * i, 8);
    if (w != pattern_word(block_[tag], first + i)) return false;
  }
  return true;
}

void FioVerify::start_readback() {
  readback_ = true;
  readback_next_ = 0;
  readback_left_ = blocks_written();
}

uint64_t FioVerify::next_readback() {
  while (readback_next_ < written_.size() && !written_[readback_next_]) ++readback_next_;
  --readback_left_;
  return readback_next_++ * c_.bs;
}

uint64_t FioVerify::blocks_written() const {
  uint64_t n = 0;
  for (uint8_t w : written_) n += w;
  return n;
}

}  // namespace nvmesim::models
