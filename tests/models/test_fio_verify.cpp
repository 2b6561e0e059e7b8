// fio's verify header and checksums as FioVerify writes them into a
// write's buffer, checked field by field against verify.h's struct
// verify_header layout (x86-64: magic@0, version@2, verify_type@3, len@4,
// rand_seed@8, offset@16, time@24, numberio@32, thread@40, crc32@44,
// checksum header @48) and verify.c's rules (header CRC-32C over the 44
// bytes before crc32; the data checksum over the interval after
// __hdr_size); the read-back order; verify_pattern's forms.
#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

#include "nvmesim/firmware/sim/checksum.h"
#include "nvmesim/models/guest/fio_verify.h"

using namespace nvmesim;
using namespace nvmesim::models;

namespace {
FioVerifyConfig config(VerifyMode m, uint32_t interval = 0) {
  FioVerifyConfig c;
  c.mode = m;
  c.bs = 4096;
  c.interval = interval;
  c.region_bytes = 8 * 4096;
  c.tags = 4;
  c.seed = 7;
  c.thread = 3;
  return c;
}
template <class T>
T at(const std::vector<uint8_t>& b, size_t off) {
  T v;
  std::memcpy(&v, b.data() + off, sizeof v);
  return v;
}
}  // namespace

TEST_CASE("fio verify header: crc32c's header fields and checksum as verify.h lays them out", "[fio_verify]") {
  FioVerify v(config(VerifyMode::Crc32c));
  std::vector<uint8_t> w(4096);
  v.prepare(0, true, 2 * 4096, w.data(), 4096);
  CHECK(w[0] == 0xca);  // FIO_HDR_MAGIC 0xacca, little-endian
  CHECK(w[1] == 0xac);
  CHECK(w[2] == 0x81);  // VERIFY_HEADER_VERSION
  CHECK(w[3] == 5);     // VERIFY_CRC32C
  CHECK(at<uint32_t>(w, 4) == 4096);
  CHECK(at<uint64_t>(w, 16) == 2 * 4096);
  CHECK(at<uint64_t>(w, 32) == 0);  // the job's first write: numberio 0
  CHECK(at<uint16_t>(w, 40) == 3);
  CHECK(at<uint32_t>(w, 44) == checksum::crc32c(w.data(), 44));
  CHECK(at<uint32_t>(w, 48) == checksum::crc32c(w.data() + 52, 4096 - 52));
  CHECK(v.check_chunk(w.data(), 2 * 4096) == nullptr);
  CHECK(std::string(v.check_chunk(w.data(), 3 * 4096)) == "bad offset");
  std::vector<uint8_t> bad = w;
  bad[2000] ^= 0x80;
  CHECK(std::string(v.check_chunk(bad.data(), 2 * 4096)) == "bad checksum");
  bad = w;
  bad[33] ^= 1;  // numberio: only the header CRC notices
  CHECK(std::string(v.check_chunk(bad.data(), 2 * 4096)) == "bad header crc");
  bad = w;
  bad[0] = 0;
  CHECK(std::string(v.check_chunk(bad.data(), 2 * 4096)) == "bad magic");
}

TEST_CASE("fio verify header: md5, sha256, crc32 and meta store their checksum after the header", "[fio_verify]") {
  std::vector<uint8_t> w(4096);
  FioVerify md5(config(VerifyMode::Md5));
  md5.prepare(0, true, 0, w.data(), 4096);
  CHECK(w[3] == 2);  // VERIFY_MD5
  const auto d = checksum::md5(w.data() + 64, 4096 - 64);
  CHECK(std::memcmp(w.data() + 48, d.data(), 16) == 0);
  FioVerify sha(config(VerifyMode::Sha256));
  sha.prepare(0, true, 0, w.data(), 4096);
  CHECK(w[3] == 9);  // VERIFY_SHA256
  const auto s = checksum::sha256(w.data() + 112, 4096 - 112);  // 48 + sizeof(vhdr_sha256) = 64
  CHECK(std::memcmp(w.data() + 48, s.data(), 32) == 0);
  CHECK(std::vector<uint8_t>(w.begin() + 80, w.begin() + 112) == std::vector<uint8_t>(32, 0));
  FioVerify crc(config(VerifyMode::Crc32));
  crc.prepare(0, true, 0, w.data(), 4096);
  CHECK(w[3] == 4);  // VERIFY_CRC32
  CHECK(at<uint32_t>(w, 48) == checksum::crc32(w.data() + 52, 4096 - 52));
  FioVerify meta(config(VerifyMode::Meta));
  meta.prepare(0, true, 0, w.data(), 4096);
  CHECK(w[3] == 1);  // VERIFY_HDR_ONLY
  w[3000] ^= 1;      // meta checks the header only
  CHECK(meta.check_chunk(w.data(), 0) == nullptr);
}

TEST_CASE("fio verify header: one header per verify_interval, verify_pattern's bytes between", "[fio_verify]") {
  FioVerifyConfig c = config(VerifyMode::Crc32c, 512);
  c.pattern = {0xaa, 0x55, 0x5a, 0xa5};
  FioVerify v(c);
  std::vector<uint8_t> w(4096);
  v.prepare(0, true, 4096, w.data(), 4096);
  for (uint32_t k = 0; k < 8; ++k) {
    CHECK(at<uint64_t>(w, 512 * k + 16) == 4096 + 512 * k);
    CHECK(at<uint32_t>(w, 512 * k + 4) == 512);
    CHECK(v.check_chunk(w.data() + 512 * k, 4096 + 512 * k) == nullptr);
  }
  // The data after each header: the pattern from the I/O's first byte.
  CHECK(w[512 + 52] == c.pattern[(512 + 52) % 4]);
  CHECK(w[4095] == c.pattern[4095 % 4]);
}

TEST_CASE("fio verify: header modes check the read-back's reads, in offset order", "[fio_verify]") {
  FioVerify v(config(VerifyMode::Crc32c));
  std::vector<uint8_t> b5(4096), b1(4096), r(4096, 0xff);
  v.prepare(0, true, 5 * 4096, b5.data(), 4096);
  v.prepare(1, true, 1 * 4096, b1.data(), 4096);
  v.completed(0, true);
  v.completed(1, true);
  // Before the verify phase a read of a written block is not checked (fio:
  // a mixed job's reads are not from its verify list).
  v.prepare(2, false, 5 * 4096, r.data(), 4096);
  CHECK(r == std::vector<uint8_t>(4096, 0));
  CHECK_FALSE(v.completed(2, false));
  v.start_readback();
  CHECK(v.readback_left() == 2);
  CHECK(v.next_readback() == 1 * 4096);
  CHECK(v.next_readback() == 5 * 4096);
  CHECK(v.readback_left() == 0);
  v.prepare(2, false, 5 * 4096, r.data(), 4096);
  CHECK(v.completed(2, false));
  CHECK(v.matches(2, b5.data()));
  CHECK_FALSE(v.matches(2, b1.data()));  // block 1's header names offset 4096
}

TEST_CASE("fio verify_pattern: hex, number and string forms", "[fio_verify]") {
  std::vector<uint8_t> p;
  CHECK(fio_opt::parse_verify_pattern("0xaa555aa5", p).empty());
  CHECK(p == std::vector<uint8_t>{0xaa, 0x55, 0x5a, 0xa5});
  CHECK(fio_opt::parse_verify_pattern("0x123", p).empty());
  CHECK(p == std::vector<uint8_t>{0x01, 0x23});
  CHECK(fio_opt::parse_verify_pattern("258", p).empty());
  CHECK(p == std::vector<uint8_t>{0x02, 0x01});
  CHECK(fio_opt::parse_verify_pattern("\"ab\"", p).empty());
  CHECK(p == std::vector<uint8_t>{'a', 'b'});
  CHECK_FALSE(fio_opt::parse_verify_pattern("%o", p).empty());
  CHECK_FALSE(fio_opt::parse_verify_pattern("0xzz", p).empty());
}

TEST_CASE("fio verify: meta with verify_pattern checks the pattern after each header, as verify_io_u_pattern",
          "[fio_verify]") {
  FioVerifyConfig c = config(VerifyMode::Meta, 512);
  c.pattern = {0xaa, 0x55, 0x5a, 0xa5};
  FioVerify v(c);
  std::vector<uint8_t> w(4096);
  v.prepare(0, true, 4096, w.data(), 4096);
  for (uint32_t k = 0; k < 8; ++k) CHECK(v.check_chunk(w.data() + 512 * k, 4096 + 512 * k, 512 * k) == nullptr);
  // One byte of the pattern, past the 48-byte header, fails its interval only.
  std::vector<uint8_t> bad = w;
  bad[3 * 512 + 100] ^= 1;
  CHECK(std::string(v.check_chunk(bad.data() + 3 * 512, 4096 + 3 * 512, 3 * 512)) == "bad pattern");
  CHECK(v.check_chunk(bad.data() + 2 * 512, 4096 + 2 * 512, 2 * 512) == nullptr);
  // A reader with another pattern: the headers pass, the pattern does not.
  FioVerifyConfig other = c;
  other.pattern = {0x12, 0x34};
  CHECK(std::string(FioVerify(other).check_chunk(w.data(), 4096, 0)) == "bad pattern");
  // Without verify_pattern meta checks the header alone (random data is not checked).
  FioVerifyConfig none = c;
  none.pattern.clear();
  CHECK(FioVerify(none).check_chunk(bad.data() + 3 * 512, 4096 + 3 * 512, 3 * 512) == nullptr);
}

TEST_CASE("fio verify: the header's version is checked and its verify_type is not, as verify.c verify_header",
          "[fio_verify]") {
  FioVerify v(config(VerifyMode::Meta));
  std::vector<uint8_t> w(4096);
  v.prepare(0, true, 0, w.data(), 4096);
  std::vector<uint8_t> bad = w;
  bad[2] = 0x80;  // VERIFY_HEADER_VERSION is 0x81
  bad[44] = 0;    // (the CRC would catch it too: the version is checked first)
  CHECK(std::string(v.check_chunk(bad.data(), 0)) == "bad version");
  // A crc32c header read by a meta job: its fields and CRC are sound, and
  // fio's meta switch (its own verify=) checks nothing more.
  FioVerify crc(config(VerifyMode::Crc32c));
  crc.prepare(0, true, 0, w.data(), 4096);
  CHECK(v.check_chunk(w.data(), 0) == nullptr);
}

TEST_CASE("fio verify: a read-only job checks every read, of blocks it never wrote", "[fio_verify]") {
  // The writer: another FioVerify (another job), same mode.
  FioVerify writer(config(VerifyMode::Crc32c, 512));
  std::vector<uint8_t> disk(8 * 4096, 0);
  for (uint32_t b = 0; b < 4; ++b) writer.prepare(0, true, b * 4096, disk.data() + b * 4096, 4096);
  FioVerifyConfig rc = config(VerifyMode::Crc32c, 512);
  rc.read_only = true;
  rc.seed = 99;  // another job's seed and thread: neither is checked
  rc.thread = 4;
  FioVerify reader(rc);
  std::vector<uint8_t> buf(4096);
  // A written block: checked, and it passes, all 8 intervals examined.
  reader.prepare(1, false, 2 * 4096, buf.data(), 4096);
  std::memcpy(buf.data(), disk.data() + 2 * 4096, 4096);
  CHECK(reader.completed(1, false));
  CHECK(reader.matches(1, buf.data()));
  CHECK(reader.take_intervals() == 8);
  // A block never written (zeros): checked, and its first header fails.
  reader.prepare(1, false, 6 * 4096, buf.data(), 4096);
  std::memcpy(buf.data(), disk.data() + 6 * 4096, 4096);
  CHECK(reader.completed(1, false));
  CHECK_FALSE(reader.matches(1, buf.data()));
  CHECK(reader.take_intervals() == 1);
  // The same read in a job that also writes (not read-only) is not checked
  // outside its verify phase (header modes).
  FioVerify mixed(config(VerifyMode::Crc32c, 512));
  mixed.prepare(1, false, 2 * 4096, buf.data(), 4096);
  CHECK_FALSE(mixed.completed(1, false));
}
