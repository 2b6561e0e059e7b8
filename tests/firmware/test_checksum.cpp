// The checksums of fio's verify modes against their specifications' own
// test vectors: RFC 1321 appendix A.5 (MD5 test suite), FIPS 180-4's
// examples (NIST CSRC "SHA256.pdf": "abc" and the 448-bit message), and the
// CRC catalogue's check value ("123456789") for CRC-32C and CRC-32, plus
// RFC 3720 appendix B.4's CRC-32C examples.
#include <catch2/catch.hpp>

#include <cstdio>
#include <string>
#include <vector>

#include "nvmesim/firmware/sim/checksum.h"

using namespace nvmesim;

namespace {
template <size_t N>
std::string hex(const std::array<uint8_t, N>& d) {
  std::string s;
  char b[3];
  for (uint8_t x : d) std::snprintf(b, sizeof b, "%02x", x), s += b;
  return s;
}
}  // namespace

TEST_CASE("checksum: CRC-32C and CRC-32 check values", "[checksum]") {
  const std::string s = "123456789";
  CHECK(checksum::crc32c(s.data(), s.size()) == 0xE3069283u);
  CHECK(checksum::crc32(s.data(), s.size()) == 0xCBF43926u);
  CHECK(checksum::crc32c("", 0) == 0u);
  // RFC 3720 B.4: 32 bytes of zeros, of 0xFF, and 0..31 ascending.
  std::vector<uint8_t> zeros(32, 0), ones(32, 0xFF), inc(32);
  for (int i = 0; i < 32; ++i) inc[i] = uint8_t(i);
  CHECK(checksum::crc32c(zeros.data(), 32) == 0x8A9136AAu);
  CHECK(checksum::crc32c(ones.data(), 32) == 0x62A8AB43u);
  CHECK(checksum::crc32c(inc.data(), 32) == 0x46DD794Eu);
}

TEST_CASE("checksum: MD5 test suite of RFC 1321", "[checksum]") {
  auto md5 = [](const std::string& s) { return hex(checksum::md5(s.data(), s.size())); };
  CHECK(md5("") == "d41d8cd98f00b204e9800998ecf8427e");
  CHECK(md5("a") == "0cc175b9c0f1b6a831c399e269772661");
  CHECK(md5("abc") == "900150983cd24fb0d6963f7d28e17f72");
  CHECK(md5("message digest") == "f96b697d7cb7938d525a2f31aaf161d0");
  CHECK(md5("abcdefghijklmnopqrstuvwxyz") == "c3fcd3d76192e4007dfb496cca67e13b");
  CHECK(md5("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789") ==
        "d174ab98d277d9f5a5611c2c9f419d9f");
  CHECK(md5("12345678901234567890123456789012345678901234567890123456789012345678901234567890") ==
        "57edf4a22be3c955ac49da2e2107b67a");
}

TEST_CASE("checksum: SHA-256 examples of FIPS 180-4", "[checksum]") {
  auto sha = [](const std::string& s) { return hex(checksum::sha256(s.data(), s.size())); };
  CHECK(sha("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(sha("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  const std::string million(1000000, 'a');
  CHECK(sha(million) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}
