// Controller admin command set: Identify, features, queue management and
// their exact error statuses.
#include "tests/firmware/test_controller_env.h"

using namespace ctltest;
namespace admin = nvmesim::nvme::admin;

namespace {
nvme::SubmissionEntry features(bool set, uint8_t fid, uint32_t cdw11) {
  nvme::SubmissionEntry c{};
  c.opcode = set ? admin::SET_FEATURES : admin::GET_FEATURES;
  c.cdw10 = fid;
  c.cdw11 = cdw11;
  return c;
}
nvme::SubmissionEntry delete_q(uint8_t opcode, uint16_t qid) {
  nvme::SubmissionEntry c{};
  c.opcode = opcode;
  c.cdw10 = qid;
  return c;
}
}  // namespace

TEST_CASE("controller: Identify Controller fields", "[controller]") {
  for (auto mode : {DbbufMode::Spec, DbbufMode::Off, DbbufMode::Vendor}) {
    ControllerConfig c;
    c.dbbuf = mode;
    if (mode == DbbufMode::Vendor) c.pci_vendor_id = 0x1AE0;
    Harness h(c);
    h.enable();
    const uint64_t buf = DATA;
    auto e = h.admin(identify(1, 0, buf));
    REQUIRE(field(e.status) == 0);
    CHECK(e.sq_id == 0);
    CHECK(h.env.r16(buf + 0) == (mode == DbbufMode::Vendor ? 0x1AE0 : 0x1B36));
    CHECK(h.env.r16(buf + 2) == (mode == DbbufMode::Vendor ? 0x1AE0 : 0x1B36));
    CHECK(std::string(reinterpret_cast<const char*>(&h.env.mem[buf + 4]), 20) ==
          "NVMESIM0001         ");
    CHECK(h.env.mem[buf + 4 + 19] == ' ');
    CHECK(h.env.mem[buf + 77] == 5);                 // MDTS
    CHECK(h.env.r32(buf + 80) == 0x00010300u);       // VER
    CHECK(h.env.r16(buf + 256) == (mode == DbbufMode::Spec ? 0x0100 : 0x0000));  // OACS bit 8
    CHECK(h.env.mem[buf + 259] == 3);                // AERL
    CHECK(h.env.mem[buf + 512] == 0x66);             // SQES
    CHECK(h.env.mem[buf + 513] == 0x44);             // CQES
    CHECK(h.env.r32(buf + 516) == 1);                // NN
  }
}

TEST_CASE("controller: Identify Namespace and active list", "[controller]") {
  ControllerConfig c;
  c.namespace_lbas = 0x123456;
  c.lba_bytes = 4096;
  Harness h(c);
  h.enable();
  // PRP1 with an offset: the 4 KiB structure spans into PRP2's page.
  const uint64_t p1 = DATA + 0x800, p2 = DATA + 0x3000;
  auto e = h.admin(identify(0, 1, p1, p2));
  REQUIRE(field(e.status) == 0);
  CHECK(h.env.r64(p1 + 0) == 0x123456u);   // NSZE
  CHECK(h.env.r64(p1 + 8) == 0x123456u);   // NCAP
  CHECK(h.env.r64(p1 + 16) == 0x123456u);  // NUSE
  CHECK(h.env.mem[p1 + 25] == 0);          // NLBAF
  CHECK(h.env.mem[p1 + 26] == 0);          // FLBAS
  // LBAF0 at byte 128 lies in PRP2's page: 0x800 + 128 < 0x1000, so still PRP1.
  CHECK(h.env.r32(p1 + 128) == (12u << 16));  // LBADS = log2(4096)
  // Byte 0x800.. of the structure land at the start of PRP2's page (zeros),
  // and nothing beyond 0x800 bytes is written there.
  h.env.mem[p2 + 0x800] = 0xAB;
  e = h.admin(identify(0, 1, p1, p2));
  CHECK(h.env.mem[p2 + 0x800] == 0xAB);

  check_status(h.admin(identify(0, 2, DATA)), 0, 0x0B, true);
  check_status(h.admin(identify(0, 0, DATA)), 0, 0x0B, true);
  h.env.w32(DATA + 0x5000, 0xDEADBEEF);
  e = h.admin(identify(2, 0, DATA + 0x5000));
  REQUIRE(field(e.status) == 0);
  CHECK(h.env.r32(DATA + 0x5000) == 1);
  CHECK(h.env.r32(DATA + 0x5004) == 0);
  check_status(h.admin(identify(0x10, 0, DATA)), 0, 0x02, true);
  // Bad PRP1 offset
  check_status(h.admin(identify(1, 0, DATA + 2)), 0, 0x13, true);
}

TEST_CASE("controller: Set/Get Features", "[controller]") {
  ControllerConfig c;
  c.max_io_queues = 64;
  Harness h(c);
  h.enable();
  auto e = h.admin(features(true, 0x07, (3u << 16) | 3u));
  REQUIRE(field(e.status) == 0);
  CHECK(e.dw0 == 0x00030003u);
  e = h.admin(features(true, 0x07, (200u << 16) | 100u));
  CHECK(e.dw0 == 0x003F003Fu);  // min(requested, 64) 0's based
  e = h.admin(features(false, 0x07, 0));
  CHECK(e.dw0 == 0x003F003Fu);
  check_status(h.admin(features(true, 0x07, 0xFFFFu)), 0, 0x02, true);
  check_status(h.admin(features(true, 0x07, 0xFFFF0000u)), 0, 0x02, true);

  e = h.admin(features(true, 0x08, (5u << 8) | 7u));
  REQUIRE(field(e.status) == 0);
  CHECK(h.ctrl.interrupt_coalescing_threshold() == 7);
  CHECK(h.ctrl.interrupt_coalescing_time_100us() == 5);
  e = h.admin(features(false, 0x08, 0));
  CHECK(e.dw0 == 0x0507u);
  check_status(h.admin(features(true, 0x0B, 0)), 0, 0x02, true);
}

// NVMe 1.4, 5.21.1.7: Number of Queues may be set only before any I/O
// queue is created (else Command Sequence Error, 0x0C); queues are created
// only up to the number allocated (else Invalid Queue Identifier).
TEST_CASE("controller: Number of Queues bounds creation and is refused once queues exist",
          "[controller]") {
  ControllerConfig c;
  c.max_io_queues = 8;
  c.mqes = 255;
  c.msix_vectors = 9;
  Harness h(c);
  h.enable();
  auto e = h.admin(features(true, 0x07, (1u << 16) | 1u));  // 2 SQs and 2 CQs, 0's based
  REQUIRE(field(e.status) == 0);
  CHECK(e.dw0 == 0x00010001u);
  check_status(h.admin(Harness::create_cq_cmd(3, 16, Harness::io_cq_base(3), 3)), 1, 0x01, true);
  REQUIRE(field(h.admin(Harness::create_cq_cmd(2, 16, Harness::io_cq_base(2), 2)).status) == 0);
  check_status(h.admin(Harness::create_sq_cmd(3, 16, Harness::io_sq_base(3), 2)), 1, 0x01, true);
  REQUIRE(field(h.admin(Harness::create_sq_cmd(2, 16, Harness::io_sq_base(2), 2)).status) == 0);
  // Queues exist now: the feature cannot change, nor can it be read back changed.
  check_status(h.admin(features(true, 0x07, (7u << 16) | 7u)), 0, 0x0C, true);
  CHECK(h.admin(features(false, 0x07, 0)).dw0 == 0x00010001u);
  // Deleting them all makes it settable again.
  REQUIRE(field(h.admin(delete_q(admin::DELETE_IO_SQ, 2)).status) == 0);
  check_status(h.admin(features(true, 0x07, (7u << 16) | 7u)), 0, 0x0C, true);  // CQ 2 remains
  REQUIRE(field(h.admin(delete_q(admin::DELETE_IO_CQ, 2)).status) == 0);
  e = h.admin(features(true, 0x07, (7u << 16) | 7u));
  REQUIRE(field(e.status) == 0);
  CHECK(e.dw0 == 0x00070007u);
}

TEST_CASE("controller: Create I/O CQ errors", "[controller]") {
  ControllerConfig c;
  c.max_io_queues = 4;
  c.mqes = 255;
  c.msix_vectors = 5;
  Harness h(c);
  h.enable();
  const uint64_t base = Harness::io_cq_base(1);
  check_status(h.admin(Harness::create_cq_cmd(0, 16, base, 1)), 1, 0x01, true);
  check_status(h.admin(Harness::create_cq_cmd(5, 16, base, 1)), 1, 0x01, true);
  check_status(h.admin(Harness::create_cq_cmd(1, 1, base, 1)), 1, 0x02, true);
  check_status(h.admin(Harness::create_cq_cmd(1, 257, base, 1)), 1, 0x02, true);
  auto no_pc = Harness::create_cq_cmd(1, 16, base, 1);
  no_pc.cdw11 &= ~1u;
  check_status(h.admin(no_pc), 0, 0x02, true);
  check_status(h.admin(Harness::create_cq_cmd(1, 16, base, 5)), 1, 0x08, true);
  check_status(h.admin(Harness::create_cq_cmd(1, 16, base + 0x100, 1)), 0, 0x13, true);
  CHECK(!h.ctrl.cq_state(1).exists);
  auto e = h.admin(Harness::create_cq_cmd(1, 256, base, 4));
  CHECK(field(e.status) == 0);
  auto cq = h.ctrl.cq_state(1);
  CHECK(cq.exists);
  CHECK(cq.size == 256);
  CHECK(cq.vector == 4);
  CHECK(cq.interrupts_enabled);
  check_status(h.admin(Harness::create_cq_cmd(1, 16, base, 1)), 1, 0x01, true);  // exists
}

TEST_CASE("controller: Create I/O SQ errors", "[controller]") {
  ControllerConfig c;
  c.max_io_queues = 4;
  c.mqes = 255;
  Harness h(c);
  h.enable();
  REQUIRE(field(h.admin(Harness::create_cq_cmd(1, 16, Harness::io_cq_base(1), 1)).status) == 0);
  const uint64_t base = Harness::io_sq_base(1);
  check_status(h.admin(Harness::create_sq_cmd(0, 16, base, 1)), 1, 0x01, true);
  check_status(h.admin(Harness::create_sq_cmd(5, 16, base, 1)), 1, 0x01, true);
  check_status(h.admin(Harness::create_sq_cmd(1, 16, base, 0)), 1, 0x00, true);
  check_status(h.admin(Harness::create_sq_cmd(1, 16, base, 2)), 1, 0x00, true);
  check_status(h.admin(Harness::create_sq_cmd(1, 1, base, 1)), 1, 0x02, true);
  check_status(h.admin(Harness::create_sq_cmd(1, 257, base, 1)), 1, 0x02, true);
  auto no_pc = Harness::create_sq_cmd(1, 16, base, 1);
  no_pc.cdw11 &= ~1u;
  check_status(h.admin(no_pc), 0, 0x02, true);
  check_status(h.admin(Harness::create_sq_cmd(1, 16, base + 8, 1)), 0, 0x13, true);
  REQUIRE(field(h.admin(Harness::create_sq_cmd(1, 16, base, 1)).status) == 0);
  check_status(h.admin(Harness::create_sq_cmd(1, 16, base, 1)), 1, 0x01, true);  // exists
  auto sq = h.ctrl.sq_state(1);
  CHECK(sq.size == 16);
  CHECK(sq.cqid == 1);
  CHECK(sq.base == base);
}

TEST_CASE("controller: CC.IOSQES/IOCQES checked at Create", "[controller]") {
  Harness h;
  h.ctrl.bar0_write(nvme::reg::AQA, nvme::aqa::make(16, 16), 4);
  h.ctrl.bar0_write(nvme::reg::ASQ, ASQ, 8);
  h.ctrl.bar0_write(nvme::reg::ACQ, ACQ, 8);
  h.ctrl.bar0_write(nvme::reg::CC, nvme::cc::make(true, 0, 0, 0), 4);
  h.ctrl.complete_enable();
  REQUIRE(h.ctrl.enabled());
  check_status(h.admin(Harness::create_cq_cmd(1, 16, Harness::io_cq_base(1), 1)), 0, 0x02, true);
}

TEST_CASE("controller: Delete I/O SQ/CQ", "[controller]") {
  ControllerConfig c;
  c.max_io_queues = 4;
  Harness h(c);
  h.enable();
  h.create_pair(1, 16, 16);
  check_status(h.admin(delete_q(admin::DELETE_IO_SQ, 2)), 1, 0x01, true);
  check_status(h.admin(delete_q(admin::DELETE_IO_SQ, 0)), 1, 0x01, true);
  check_status(h.admin(delete_q(admin::DELETE_IO_CQ, 2)), 1, 0x01, true);
  check_status(h.admin(delete_q(admin::DELETE_IO_CQ, 1)), 1, 0x0C, true);  // SQ 1 attached
  CHECK(field(h.admin(delete_q(admin::DELETE_IO_SQ, 1)).status) == 0);
  CHECK(!h.ctrl.sq_state(1).exists);
  CHECK(field(h.admin(delete_q(admin::DELETE_IO_CQ, 1)).status) == 0);
  CHECK(!h.ctrl.cq_state(1).exists);
  // The qid can be created again.
  h.create_pair(1, 8, 8);
  CHECK(h.ctrl.sq_state(1).size == 8);
}

TEST_CASE("controller: other admin commands", "[controller]") {
  Harness h;
  h.enable();
  nvme::SubmissionEntry c{};
  c.opcode = 0x7F;
  check_status(h.admin(c), 0, 0x01, true);
  c.opcode = admin::ABORT;
  auto e = h.admin(c);
  CHECK(field(e.status) == 0);
  CHECK(e.dw0 == 1u);
  // Get Log Page, Error Information, 64 bytes (NUMDL 15): zeroed.
  c = nvme::SubmissionEntry{};
  c.opcode = admin::GET_LOG_PAGE;
  c.prp1 = DATA;
  c.cdw10 = 0x01 | (15u << 16);
  std::memset(&h.env.mem[DATA], 0xEE, 128);
  e = h.admin(c);
  CHECK(field(e.status) == 0);
  CHECK(h.env.r64(DATA) == 0);
  CHECK(h.env.r64(DATA + 56) == 0);
  CHECK(h.env.mem[DATA + 64] == 0xEE);
  c.cdw10 = 0x05;
  check_status(h.admin(c), 0, 0x02, true);
  // Doorbell Buffer Config opcodes by mode.
  check_status(h.admin(dbbuf_cmd(0x600000, 0x601000, 0xC0)), 0, 0x01, true);
  ControllerConfig off;
  off.dbbuf = DbbufMode::Off;
  Harness h2(off);
  h2.enable();
  check_status(h2.admin(dbbuf_cmd(0x600000, 0x601000, 0x7C)), 0, 0x01, true);
  check_status(h2.admin(dbbuf_cmd(0x600000, 0x601000, 0xC0)), 0, 0x01, true);
  ControllerConfig vend;
  vend.dbbuf = DbbufMode::Vendor;
  Harness h3(vend);
  h3.enable();
  check_status(h3.admin(dbbuf_cmd(0x600000, 0x601000, 0x7C)), 0, 0x01, true);
  CHECK(field(h3.admin(dbbuf_cmd(0x600000, 0x601000, 0xC0)).status) == 0);
  CHECK(h3.ctrl.dbbuf_active());
  CHECK(h.ctrl.counters().admin_commands == 5);
}
