// NVMe definitions used by the driver and the controller: BAR0 registers,
// queue entries, opcodes, status codes and the Identify fields we use.
// Names follow the NVMe Base Specification (1.3/1.4).
#pragma once

#include <cstddef>
#include <cstdint>

namespace nvmesim::nvme {

// ---------------------------------------------------------------- registers
namespace reg {
constexpr uint32_t CAP = 0x00;    // Controller Capabilities (64-bit)
constexpr uint32_t VS = 0x08;     // Version
constexpr uint32_t INTMS = 0x0C;  // Interrupt Mask Set
constexpr uint32_t INTMC = 0x10;  // Interrupt Mask Clear
constexpr uint32_t CC = 0x14;     // Controller Configuration
constexpr uint32_t CSTS = 0x1C;   // Controller Status
constexpr uint32_t NSSR = 0x20;   // NVM Subsystem Reset
constexpr uint32_t AQA = 0x24;    // Admin Queue Attributes
constexpr uint32_t ASQ = 0x28;    // Admin SQ Base Address (64-bit)
constexpr uint32_t ACQ = 0x30;    // Admin CQ Base Address (64-bit)
constexpr uint32_t DOORBELL_BASE = 0x1000;
}  // namespace reg

// CAP fields.
namespace cap {
constexpr uint64_t mqes(uint64_t cap) { return cap & 0xFFFF; }          // 0's based
constexpr uint64_t cqr(uint64_t cap) { return (cap >> 16) & 1; }
// AMS (bits 18:17): bit 17 Weighted Round Robin with Urgent Priority Class,
// bit 18 vendor specific; Round Robin is always supported.
constexpr uint64_t ams(uint64_t cap) { return (cap >> 17) & 0x3; }
constexpr uint64_t AMS_WRR_URGENT = uint64_t(1) << 17;
constexpr uint64_t to(uint64_t cap) { return (cap >> 24) & 0xFF; }      // 500 ms units
constexpr uint64_t dstrd(uint64_t cap) { return (cap >> 32) & 0xF; }
constexpr uint64_t css(uint64_t cap) { return (cap >> 37) & 0xFF; }
constexpr uint64_t mpsmin(uint64_t cap) { return (cap >> 48) & 0xF; }  // 2^(12+MPSMIN)
constexpr uint64_t mpsmax(uint64_t cap) { return (cap >> 52) & 0xF; }
constexpr uint64_t make(uint16_t mqes, bool cqr, uint8_t to, uint8_t dstrd, uint8_t mpsmin,
                        uint8_t mpsmax, bool ams_wrr_urgent = false) {
  return uint64_t(mqes) | (uint64_t(cqr) << 16) | (ams_wrr_urgent ? AMS_WRR_URGENT : 0) |
         (uint64_t(to) << 24) |
         (uint64_t(dstrd & 0xF) << 32) | (uint64_t(1) << 37) /* CSS: NVM command set */ |
         (uint64_t(mpsmin & 0xF) << 48) | (uint64_t(mpsmax & 0xF) << 52);
}
}  // namespace cap

constexpr uint32_t make_version(uint16_t major, uint8_t minor, uint8_t tertiary = 0) {
  return (uint32_t(major) << 16) | (uint32_t(minor) << 8) | tertiary;
}

// CC fields.
namespace cc {
constexpr uint32_t EN = 1u << 0;
constexpr uint32_t css(uint32_t v) { return (v >> 4) & 0x7; }
constexpr uint32_t mps(uint32_t v) { return (v >> 7) & 0xF; }  // page = 2^(12+MPS)
constexpr uint32_t ams(uint32_t v) { return (v >> 11) & 0x7; }  // 000b RR, 001b WRR+urgent, 111b vendor
constexpr uint32_t AMS_RR = 0;
constexpr uint32_t AMS_WRR_URGENT = 1;
constexpr uint32_t shn(uint32_t v) { return (v >> 14) & 0x3; }
constexpr uint32_t iosqes(uint32_t v) { return (v >> 16) & 0xF; }  // log2 SQ entry size
constexpr uint32_t iocqes(uint32_t v) { return (v >> 20) & 0xF; }  // log2 CQ entry size
constexpr uint32_t make(bool en, uint8_t mps, uint8_t iosqes = 6, uint8_t iocqes = 4,
                        uint8_t ams = 0) {
  return (en ? EN : 0) | (uint32_t(mps & 0xF) << 7) | (uint32_t(ams & 0x7) << 11) |
         (uint32_t(iosqes) << 16) | (uint32_t(iocqes) << 20);
}
}  // namespace cc

// CSTS fields.
namespace csts {
constexpr uint32_t RDY = 1u << 0;
constexpr uint32_t CFS = 1u << 1;  // Controller Fatal Status
constexpr uint32_t SHST_MASK = 3u << 2;
constexpr uint32_t SHST_COMPLETE = 2u << 2;
}  // namespace csts

// AQA fields (both 0's based).
namespace aqa {
constexpr uint32_t asqs(uint32_t v) { return v & 0xFFF; }
constexpr uint32_t acqs(uint32_t v) { return (v >> 16) & 0xFFF; }
constexpr uint32_t make(uint32_t sq_entries, uint32_t cq_entries) {
  return ((sq_entries - 1) & 0xFFF) | (((cq_entries - 1) & 0xFFF) << 16);
}
}  // namespace aqa

// Doorbell register offsets in BAR0 (SQyTDBL, CQyHDBL).
constexpr uint32_t doorbell_stride(uint32_t dstrd) { return 4u << dstrd; }
constexpr uint32_t sq_tail_doorbell(uint16_t qid, uint32_t dstrd) {
  return reg::DOORBELL_BASE + (2u * qid) * doorbell_stride(dstrd);
}
constexpr uint32_t cq_head_doorbell(uint16_t qid, uint32_t dstrd) {
  return reg::DOORBELL_BASE + (2u * qid + 1u) * doorbell_stride(dstrd);
}

// ---------------------------------------------------------------- entries
// Submission Queue Entry: 64 bytes, little-endian.
struct SubmissionEntry {
  uint8_t opcode;  // CDW0 bits 7:0
  uint8_t flags;   // CDW0 bits 15:8: FUSE 9:8, PSDT 15:14
  uint16_t cid;    // CDW0 bits 31:16: Command Identifier
  uint32_t nsid;
  uint32_t cdw2;
  uint32_t cdw3;
  uint64_t mptr;
  uint64_t prp1;
  uint64_t prp2;
  uint32_t cdw10;
  uint32_t cdw11;
  uint32_t cdw12;
  uint32_t cdw13;
  uint32_t cdw14;
  uint32_t cdw15;
};
static_assert(sizeof(SubmissionEntry) == 64, "SQE is 64 bytes");
static_assert(offsetof(SubmissionEntry, cid) == 2, "CID at byte 2");
static_assert(offsetof(SubmissionEntry, nsid) == 4, "NSID at byte 4");
static_assert(offsetof(SubmissionEntry, mptr) == 16, "MPTR at byte 16");
static_assert(offsetof(SubmissionEntry, prp1) == 24, "PRP1 at byte 24");
static_assert(offsetof(SubmissionEntry, prp2) == 32, "PRP2 at byte 32");
static_assert(offsetof(SubmissionEntry, cdw10) == 40, "CDW10 at byte 40");
static_assert(offsetof(SubmissionEntry, cdw15) == 60, "CDW15 at byte 60");

// Completion Queue Entry: 16 bytes.
struct CompletionEntry {
  uint32_t dw0;     // command specific
  uint32_t dw1;     // reserved
  uint16_t sq_head; // SQHD
  uint16_t sq_id;   // SQID
  uint16_t cid;     // Command Identifier
  uint16_t status;  // bit 0: Phase Tag; bits 15:1: Status Field
};
static_assert(sizeof(CompletionEntry) == 16, "CQE is 16 bytes");
static_assert(offsetof(CompletionEntry, sq_head) == 8, "SQHD at byte 8");
static_assert(offsetof(CompletionEntry, sq_id) == 10, "SQID at byte 10");
static_assert(offsetof(CompletionEntry, cid) == 12, "CID at byte 12");
static_assert(offsetof(CompletionEntry, status) == 14, "status at byte 14");

constexpr uint32_t SQE_SIZE = 64;
constexpr uint32_t CQE_SIZE = 16;

// ---------------------------------------------------------------- status
// A 15-bit Status Field: SC bits 7:0, SCT bits 10:8, CRD 12:11, M 13, DNR 14
// (as it stands in CQE DW3 bits 31:17, i.e. CompletionEntry::status >> 1).
enum class StatusCodeType : uint8_t { Generic = 0, CommandSpecific = 1, MediaError = 2 };

constexpr uint16_t STATUS_DNR = 1u << 14;
constexpr uint16_t STATUS_MORE = 1u << 13;
constexpr uint16_t make_status(StatusCodeType sct, uint8_t sc, bool dnr = false) {
  return uint16_t(uint16_t(sc) | (uint16_t(sct) << 8) | (dnr ? STATUS_DNR : 0));
}
constexpr uint8_t status_sc(uint16_t s) { return uint8_t(s & 0xFF); }
constexpr uint8_t status_sct(uint16_t s) { return uint8_t((s >> 8) & 0x7); }
constexpr bool status_dnr(uint16_t s) { return (s & STATUS_DNR) != 0; }
// CQE status word = (status field << 1) | phase.
constexpr uint16_t cqe_status_word(uint16_t status_field, bool phase) {
  return uint16_t((status_field << 1) | (phase ? 1 : 0));
}

namespace sc {  // Generic Command Status (SCT 0)
constexpr uint8_t SUCCESS = 0x00;
constexpr uint8_t INVALID_OPCODE = 0x01;
constexpr uint8_t INVALID_FIELD = 0x02;
constexpr uint8_t CID_CONFLICT = 0x03;
constexpr uint8_t DATA_TRANSFER_ERROR = 0x04;
constexpr uint8_t INTERNAL_ERROR = 0x06;
constexpr uint8_t ABORT_REQUESTED = 0x07;
constexpr uint8_t ABORTED_SQ_DELETION = 0x08;
constexpr uint8_t INVALID_NAMESPACE = 0x0B;
constexpr uint8_t COMMAND_SEQUENCE_ERROR = 0x0C;
constexpr uint8_t PRP_OFFSET_INVALID = 0x13;
constexpr uint8_t LBA_OUT_OF_RANGE = 0x80;
}  // namespace sc

namespace sc_specific {  // Command Specific Status (SCT 1)
constexpr uint8_t COMPLETION_QUEUE_INVALID = 0x00;
constexpr uint8_t INVALID_QUEUE_IDENTIFIER = 0x01;
constexpr uint8_t INVALID_QUEUE_SIZE = 0x02;
constexpr uint8_t ASYNC_EVENT_LIMIT_EXCEEDED = 0x05;
constexpr uint8_t INVALID_INTERRUPT_VECTOR = 0x08;
constexpr uint8_t INVALID_QUEUE_DELETION = 0x0C;
constexpr uint8_t FEATURE_NOT_CHANGEABLE = 0x0E;
}  // namespace sc_specific

constexpr uint16_t STATUS_SUCCESS = 0;
constexpr uint16_t status_generic(uint8_t code, bool dnr = true) {
  return make_status(StatusCodeType::Generic, code, dnr);
}
constexpr uint16_t status_specific(uint8_t code, bool dnr = true) {
  return make_status(StatusCodeType::CommandSpecific, code, dnr);
}

// Asynchronous Event: type Error (0), information for doorbell faults.
namespace async_event {
constexpr uint8_t TYPE_ERROR = 0x0;
constexpr uint8_t INFO_INVALID_DOORBELL_REGISTER = 0x00;
constexpr uint8_t INFO_INVALID_DOORBELL_VALUE = 0x01;
constexpr uint32_t make_dw0(uint8_t type, uint8_t info, uint8_t log_page) {
  return uint32_t(type) | (uint32_t(info) << 8) | (uint32_t(log_page) << 16);
}
constexpr uint8_t LOG_ERROR_INFORMATION = 0x01;
}  // namespace async_event

// ---------------------------------------------------------------- opcodes
namespace admin {
constexpr uint8_t DELETE_IO_SQ = 0x00;
constexpr uint8_t CREATE_IO_SQ = 0x01;
constexpr uint8_t GET_LOG_PAGE = 0x02;
constexpr uint8_t DELETE_IO_CQ = 0x04;
constexpr uint8_t CREATE_IO_CQ = 0x05;
constexpr uint8_t IDENTIFY = 0x06;
constexpr uint8_t ABORT = 0x08;
constexpr uint8_t SET_FEATURES = 0x09;
constexpr uint8_t GET_FEATURES = 0x0A;
constexpr uint8_t ASYNC_EVENT_REQUEST = 0x0C;
constexpr uint8_t DOORBELL_BUFFER_CONFIG = 0x7C;         // NVMe 1.3
constexpr uint8_t VENDOR_DOORBELL_BUFFER_CONFIG = 0xC0;  // the Google vendor extension
}  // namespace admin

namespace io {
constexpr uint8_t FLUSH = 0x00;
constexpr uint8_t WRITE = 0x01;
constexpr uint8_t READ = 0x02;
}  // namespace io

// Create I/O CQ / SQ dwords.
namespace create_queue {
constexpr uint32_t cdw10(uint16_t qid, uint32_t entries) {
  return uint32_t(qid) | (((entries - 1) & 0xFFFF) << 16);
}
constexpr uint16_t qid(uint32_t cdw10) { return uint16_t(cdw10 & 0xFFFF); }
constexpr uint32_t entries(uint32_t cdw10) { return ((cdw10 >> 16) & 0xFFFF) + 1; }
constexpr uint32_t PC = 1u << 0;   // physically contiguous
constexpr uint32_t IEN = 1u << 1;  // CQ: interrupts enabled
constexpr uint32_t cq_cdw11(uint16_t vector, bool ien) {
  return PC | (ien ? IEN : 0) | (uint32_t(vector) << 16);
}
// SQ CDW11 QPRIO (bits 2:1), used under Weighted Round Robin only: 00b
// Urgent, 01b High, 10b Medium, 11b Low.
constexpr uint32_t sq_cdw11(uint16_t cqid, uint8_t qprio = 0) {
  return PC | (uint32_t(qprio & 0x3) << 1) | (uint32_t(cqid) << 16);
}
constexpr uint8_t sq_qprio(uint32_t cdw11) { return uint8_t((cdw11 >> 1) & 0x3); }
constexpr uint16_t cq_vector(uint32_t cdw11) { return uint16_t(cdw11 >> 16); }
constexpr uint16_t sq_cqid(uint32_t cdw11) { return uint16_t(cdw11 >> 16); }
}  // namespace create_queue

// Identify CNS values.
namespace cns {
constexpr uint8_t NAMESPACE = 0x00;
constexpr uint8_t CONTROLLER = 0x01;
constexpr uint8_t ACTIVE_NAMESPACE_LIST = 0x02;
}  // namespace cns

// Feature identifiers.
namespace feature {
constexpr uint8_t ARBITRATION = 0x01;           // DW11: AB 2:0, LPW 15:8, MPW 23:16, HPW 31:24
constexpr uint8_t NUMBER_OF_QUEUES = 0x07;      // DW11: NSQR 15:0, NCQR 31:16, 0's based
constexpr uint8_t INTERRUPT_COALESCING = 0x08;  // DW11: THR 7:0 (0's based), TIME 15:8 (100 us)
}  // namespace feature

// Identify Controller data structure (4096 bytes): the fields we use.
namespace id_ctrl {
constexpr uint32_t SIZE = 4096;
constexpr uint32_t VID = 0;      // PCI Vendor ID (2)
constexpr uint32_t SSVID = 2;    // PCI Subsystem Vendor ID (2)
constexpr uint32_t SN = 4;       // Serial Number (20, ASCII)
constexpr uint32_t MN = 24;      // Model Number (40, ASCII)
constexpr uint32_t FR = 64;      // Firmware Revision (8, ASCII)
constexpr uint32_t MDTS = 77;    // Maximum Data Transfer Size (2^n min pages, 0 = none)
constexpr uint32_t CNTLID = 78;  // Controller ID (2)
constexpr uint32_t VER = 80;     // Version (4)
constexpr uint32_t OACS = 256;   // Optional Admin Command Support (2)
constexpr uint16_t OACS_DOORBELL_BUFFER_CONFIG = 1u << 8;
constexpr uint32_t AERL = 259;   // Async Event Request Limit (0's based)
constexpr uint32_t SQES = 512;   // required 3:0, max 7:4 (log2)
constexpr uint32_t CQES = 513;
constexpr uint32_t MAXCMD = 514; // (2)
constexpr uint32_t NN = 516;     // Number of Namespaces (4)
constexpr uint32_t ONCS = 520;   // Optional NVM Command Support (2)
constexpr uint32_t VWC = 525;    // Volatile Write Cache
}  // namespace id_ctrl

// Identify Namespace data structure (4096 bytes): the fields we use.
namespace id_ns {
constexpr uint32_t SIZE = 4096;
constexpr uint32_t NSZE = 0;    // Namespace Size, LBAs (8)
constexpr uint32_t NCAP = 8;    // Namespace Capacity (8)
constexpr uint32_t NUSE = 16;   // Namespace Utilization (8)
constexpr uint32_t NLBAF = 25;  // Number of LBA Formats (0's based)
constexpr uint32_t FLBAS = 26;  // Formatted LBA Size
constexpr uint32_t LBAF0 = 128; // LBA Format 0 (4): LBADS at bits 23:16
}  // namespace id_ns

// PCI identity.
constexpr uint16_t PCI_VENDOR_QEMU = 0x1B36;   // QEMU's emulated NVMe controller
constexpr uint16_t PCI_VENDOR_VENDOR_EXT = 0x1AE0;  // the Google vendor-extension device

}  // namespace nvmesim::nvme
