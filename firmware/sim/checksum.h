// The checksums fio's verify modes store in their block headers (fio
// verify.c, crc/), implemented from their specifications: CRC-32C
// (Castagnoli, RFC 3720 appendix B.4: reflected polynomial 0x82F63B78),
// CRC-32 (IEEE 802.3, reflected 0xEDB88320), MD5 (RFC 1321) and SHA-256
// (FIPS 180-4). Plain C++, table-driven, no SystemC: the guest's fio job
// computes them over the data it writes to and reads from guest memory.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace nvmesim::checksum {

// CRC-32C: init ~0, reflected, final xor ~0 ("123456789" -> 0xE3069283).
uint32_t crc32c(const void* data, size_t len);
// CRC-32 (IEEE): init ~0, reflected, final xor ~0 ("123456789" -> 0xCBF43926).
uint32_t crc32(const void* data, size_t len);
// MD5 digest (RFC 1321), 16 bytes in the RFC's byte order.
std::array<uint8_t, 16> md5(const void* data, size_t len);
// SHA-256 digest (FIPS 180-4), 32 bytes big-endian.
std::array<uint8_t, 32> sha256(const void* data, size_t len);

}  // namespace nvmesim::checksum
