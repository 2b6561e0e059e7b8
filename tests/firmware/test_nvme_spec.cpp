// NVMe entry layouts and register encodings checked byte by byte against the
// NVMe Base Specification's positions (entries are little-endian), not
// against the header's own offsetof/static_asserts.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>

#include "nvmesim/firmware/nvme/nvme_spec.h"

using namespace nvmesim::nvme;

namespace {

template <size_t N>
uint64_t le_at(const uint8_t (&b)[N], size_t off, size_t len) {
  uint64_t v = 0;
  for (size_t i = 0; i < len; ++i) v |= uint64_t(b[off + i]) << (8 * i);
  return v;
}

}  // namespace

TEST_CASE("nvme_spec: submission entry byte positions", "[nvme_spec]") {
  SubmissionEntry e{};
  e.opcode = 0x02;
  e.flags = 0x40;
  e.cid = 0xBEEF;
  e.nsid = 0x11223344;
  e.cdw2 = 0xA2A2A2A2;
  e.cdw3 = 0xA3A3A3A3;
  e.mptr = 0x0102030405060708ull;
  e.prp1 = 0x1112131415161718ull;
  e.prp2 = 0x2122232425262728ull;
  e.cdw10 = 0xC0C0C00A;
  e.cdw11 = 0xC0C0C00B;
  e.cdw12 = 0xC0C0C00C;
  e.cdw13 = 0xC0C0C00D;
  e.cdw14 = 0xC0C0C00E;
  e.cdw15 = 0xC0C0C00F;
  uint8_t b[64];
  static_assert(sizeof(e) == sizeof(b), "64-byte SQE");
  std::memcpy(b, &e, sizeof(b));

  // CDW0: opcode 7:0, FUSE/PSDT 15:8, CID 31:16 (bytes 0..3).
  CHECK(b[0] == 0x02);
  CHECK(b[1] == 0x40);
  CHECK(b[2] == 0xEF);
  CHECK(b[3] == 0xBE);
  CHECK(le_at(b, 4, 4) == 0x11223344u);               // NSID, bytes 7:4
  CHECK(le_at(b, 8, 4) == 0xA2A2A2A2u);               // CDW2
  CHECK(le_at(b, 12, 4) == 0xA3A3A3A3u);              // CDW3
  CHECK(le_at(b, 16, 8) == 0x0102030405060708ull);    // MPTR, bytes 23:16
  CHECK(le_at(b, 24, 8) == 0x1112131415161718ull);    // PRP1, bytes 31:24
  CHECK(le_at(b, 32, 8) == 0x2122232425262728ull);    // PRP2, bytes 39:32
  for (uint32_t dw = 10; dw <= 15; ++dw) {
    INFO("CDW" << dw);
    CHECK(le_at(b, 4 * dw, 4) == 0xC0C0C000u + dw);  // CDWn at byte 4n
  }
  CHECK(b[0x28] == 0x0A);  // CDW10 at byte 40
  CHECK(b[0x3C] == 0x0F);  // CDW15 at byte 60
  CHECK(SQE_SIZE == 64);
}

TEST_CASE("nvme_spec: completion entry byte positions and phase tag", "[nvme_spec]") {
  CompletionEntry e{};
  e.dw0 = 0xD0D0D0D0;
  e.dw1 = 0;
  e.sq_head = 0x1234;
  e.sq_id = 0x0056;
  e.cid = 0xCAFE;
  e.status = cqe_status_word(status_generic(sc::INVALID_FIELD, true), true);
  uint8_t b[16];
  static_assert(sizeof(e) == sizeof(b), "16-byte CQE");
  std::memcpy(b, &e, sizeof(b));

  CHECK(le_at(b, 0, 4) == 0xD0D0D0D0u);  // DW0
  CHECK(le_at(b, 8, 2) == 0x1234);       // DW2 15:0 SQ Head Pointer
  CHECK(le_at(b, 10, 2) == 0x0056);      // DW2 31:16 SQ Identifier
  CHECK(le_at(b, 12, 2) == 0xCAFE);      // DW3 15:0 Command Identifier

  // DW3: phase tag bit 16, SC 24:17, SCT 27:25, CRD 29:28, M 30, DNR 31.
  const uint32_t dw3 = uint32_t(le_at(b, 12, 4));
  CHECK(((dw3 >> 16) & 1) == 1);
  CHECK(((dw3 >> 17) & 0xFF) == 0x02);
  CHECK(((dw3 >> 25) & 0x7) == 0);
  CHECK(((dw3 >> 31) & 1) == 1);
  CHECK(b[14] == 0x05);  // phase 1, SC 0x02 at bits 8:1 of the status word
  CHECK(b[15] == 0x80);  // DNR at bit 15 of the status word

  // Phase tag alone is bit 0 of the status word (byte 14 bit 0).
  e.status = cqe_status_word(STATUS_SUCCESS, true);
  std::memcpy(b, &e, sizeof(b));
  CHECK(b[14] == 0x01);
  CHECK(b[15] == 0x00);
  e.status = cqe_status_word(STATUS_SUCCESS, false);
  std::memcpy(b, &e, sizeof(b));
  CHECK(b[14] == 0x00);
  CHECK(CQE_SIZE == 16);
}

TEST_CASE("nvme_spec: status field encoding SC, SCT, DNR", "[nvme_spec]") {
  // Status field (15 bits): SC 7:0, SCT 10:8, CRD 12:11, M 13, DNR 14.
  const uint16_t s = make_status(StatusCodeType::CommandSpecific,
                                 sc_specific::INVALID_QUEUE_IDENTIFIER, true);
  CHECK(s == ((1u << 14) | (1u << 8) | 0x01));
  CHECK(status_sc(s) == 0x01);
  CHECK(status_sct(s) == 1);
  CHECK(status_dnr(s));
  const uint16_t m = make_status(StatusCodeType::MediaError, 0x81, false);
  CHECK(m == ((2u << 8) | 0x81));
  CHECK(status_sct(m) == 2);
  CHECK(status_sc(m) == 0x81);
  CHECK_FALSE(status_dnr(m));
  CHECK(status_generic(sc::LBA_OUT_OF_RANGE) == ((1u << 14) | 0x80));
  CHECK(status_generic(sc::LBA_OUT_OF_RANGE, false) == 0x80);
  CHECK(status_specific(sc_specific::INVALID_QUEUE_SIZE) == ((1u << 14) | (1u << 8) | 0x02));
  // In the CQE word the field sits one bit up, above the phase tag.
  CHECK(cqe_status_word(s, false) == ((1u << 15) | (1u << 9) | (0x01 << 1)));
  CHECK(cqe_status_word(0x7FFF, true) == 0xFFFF);
}

TEST_CASE("nvme_spec: doorbell register offsets for DSTRD 0..3", "[nvme_spec]") {
  // SQyTDBL at 1000h + (2y * (4 << DSTRD)); CQyHDBL at 1000h + ((2y+1) * (4 << DSTRD)).
  CHECK(sq_tail_doorbell(0, 0) == 0x1000);
  CHECK(cq_head_doorbell(0, 0) == 0x1004);
  CHECK(sq_tail_doorbell(1, 0) == 0x1008);
  CHECK(cq_head_doorbell(1, 0) == 0x100C);
  CHECK(sq_tail_doorbell(1, 1) == 0x1010);
  CHECK(cq_head_doorbell(1, 1) == 0x1018);
  CHECK(cq_head_doorbell(0, 2) == 0x1010);
  CHECK(sq_tail_doorbell(1, 3) == 0x1040);
  CHECK(cq_head_doorbell(1, 3) == 0x1060);
  for (uint32_t dstrd = 0; dstrd <= 3; ++dstrd) {
    CHECK(doorbell_stride(dstrd) == (4u << dstrd));
    for (uint32_t qid : {0u, 7u, 65535u}) {
      INFO("dstrd " << dstrd << " qid " << qid);
      const uint64_t stride = uint64_t(4) << dstrd;
      CHECK(uint64_t(sq_tail_doorbell(uint16_t(qid), dstrd)) == 0x1000 + 2 * qid * stride);
      CHECK(uint64_t(cq_head_doorbell(uint16_t(qid), dstrd)) ==
            0x1000 + (2 * uint64_t(qid) + 1) * stride);
    }
  }
  CHECK(reg::CAP == 0x00);
  CHECK(reg::VS == 0x08);
  CHECK(reg::CC == 0x14);
  CHECK(reg::CSTS == 0x1C);
  CHECK(reg::AQA == 0x24);
  CHECK(reg::ASQ == 0x28);
  CHECK(reg::ACQ == 0x30);
}

TEST_CASE("nvme_spec: CAP field extraction", "[nvme_spec]") {
  // Built by hand from the spec's bit positions: MQES 15:0, CQR 16, TO 31:24,
  // DSTRD 35:32, CSS 44:37, MPSMIN 51:48, MPSMAX 55:52.
  const uint64_t cap = 0x03FFull                 // MQES: 1024 entries, 0's based
                       | (1ull << 16)             // CQR
                       | (0x14ull << 24)          // TO: 20 * 500 ms
                       | (0x3ull << 32)           // DSTRD 3
                       | (0x1ull << 37)           // CSS: NVM command set
                       | (0x0ull << 48)           // MPSMIN: 4 KiB
                       | (0x4ull << 52);          // MPSMAX: 64 KiB
  CHECK(cap::mqes(cap) == 0x3FF);
  CHECK(cap::cqr(cap) == 1);
  CHECK(cap::to(cap) == 0x14);
  CHECK(cap::dstrd(cap) == 3);
  CHECK(cap::css(cap) == 1);
  CHECK(cap::mpsmin(cap) == 0);
  CHECK(cap::mpsmax(cap) == 4);
  CHECK(cap::make(0x3FF, true, 0x14, 3, 0, 4) == cap);

  // Neighbouring bits set must not leak into a field.
  const uint64_t noisy = ~0ull;
  CHECK(cap::mqes(noisy) == 0xFFFF);
  CHECK(cap::cqr(noisy) == 1);
  CHECK(cap::to(noisy) == 0xFF);
  CHECK(cap::dstrd(noisy) == 0xF);
  CHECK(cap::css(noisy) == 0xFF);
  CHECK(cap::mpsmin(noisy) == 0xF);
  CHECK(cap::mpsmax(noisy) == 0xF);
  const uint64_t dstrd_only = 0xFull << 32;
  CHECK(cap::dstrd(dstrd_only) == 0xF);
  CHECK(cap::to(dstrd_only) == 0);
  CHECK(cap::css(dstrd_only) == 0);
}
