// The controller's side of command arbitration (NVMe Base Specification
// 1.4: CAP.AMS, CC.AMS, Set/Get Features Arbitration 01h, Create I/O SQ
// QPRIO) and its arbiter driving process_sq as the hardware engine does.
#include "tests/firmware/test_controller_env.h"

#include "nvmesim/firmware/nvme/arbitration.h"

using namespace ctltest;
namespace reg = nvmesim::nvme::reg;
namespace admin = nvmesim::nvme::admin;

namespace {

nvme::SubmissionEntry features(bool set, uint8_t fid, uint32_t cdw11) {
  nvme::SubmissionEntry c{};
  c.opcode = set ? admin::SET_FEATURES : admin::GET_FEATURES;
  c.cdw10 = fid;
  c.cdw11 = cdw11;
  return c;
}

// CC.EN 0 -> 1 with CC.AMS = ams; the CSTS it ends with.
uint32_t enable_with_ams(Harness& h, uint8_t ams) {
  h.ctrl.bar0_write(reg::AQA, nvme::aqa::make(ADMIN_ENTRIES, ADMIN_ENTRIES), 4);
  h.ctrl.bar0_write(reg::ASQ, ASQ, 8);
  h.ctrl.bar0_write(reg::ACQ, ACQ, 8);
  h.ctrl.bar0_write(reg::CC, nvme::cc::make(true, 0, 6, 4, ams), 4);
  h.ctrl.complete_enable();
  h.asq_tail = h.acq_head = 0;
  h.acq_phase = true;
  return uint32_t(h.ctrl.bar0_read(reg::CSTS, 4));
}

ControllerConfig wrr_config() {
  ControllerConfig c;
  c.wrr_urgent = true;
  return c;
}

}  // namespace

TEST_CASE("controller arbitration: CAP.AMS bit 17 follows the configuration", "[controller][arbitration]") {
  Harness off;  // the default: round robin only, as QEMU's controller
  CHECK(nvme::cap::ams(off.ctrl.bar0_read(reg::CAP, 8)) == 0);
  CHECK(!ControllerConfig{}.wrr_urgent);
  Harness on(wrr_config());
  const uint64_t cap = on.ctrl.bar0_read(reg::CAP, 8);
  CHECK(nvme::cap::ams(cap) == 1);        // bit 17: WRR with Urgent; bit 18 (vendor) clear
  CHECK(((cap >> 17) & 1) == 1);
  CHECK((cap & ~(1ull << 17)) == off.ctrl.bar0_read(reg::CAP, 8));  // nothing else changes
}

TEST_CASE("controller arbitration: CC.AMS is checked at enable", "[controller][arbitration]") {
  // 000b (round robin) always; 001b only with CAP.AMS bit 17; 111b (vendor
  // specific) and the reserved values never: the controller does not become
  // ready and reports CSTS.CFS (the specification leaves this undefined).
  for (uint8_t ams = 0; ams < 8; ++ams) {
    INFO("CC.AMS " << unsigned(ams));
    Harness rr;
    CHECK(enable_with_ams(rr, ams) == (ams == 0 ? nvme::csts::RDY : nvme::csts::CFS));
    Harness wrr(wrr_config());
    CHECK(enable_with_ams(wrr, ams) == (ams <= 1 ? nvme::csts::RDY : nvme::csts::CFS));
    if (ams <= 1)
      CHECK(wrr.ctrl.arbiter().mechanism() == (ams == 1 ? ArbitrationMechanism::WeightedRoundRobinUrgent
                                                        : ArbitrationMechanism::RoundRobin));
  }
}

TEST_CASE("controller arbitration: Set/Get Features Arbitration (01h)", "[controller][arbitration]") {
  Harness h(wrr_config());
  REQUIRE(enable_with_ams(h, 1) == nvme::csts::RDY);
  // Default: AB 111b (no limit), weights 0.
  auto e = h.admin(features(false, 0x01, 0));
  REQUIRE(field(e.status) == 0);
  CHECK(e.dw0 == 0x00000007u);
  // HPW 31:24 = 8, MPW 23:16 = 4, LPW 15:8 = 2, AB 2:0 = 3; reserved 7:3 dropped.
  e = h.admin(features(true, 0x01, 0x08040203u | 0xF8u));
  REQUIRE(field(e.status) == 0);
  CHECK(e.dw0 == 0x08040203u);
  e = h.admin(features(false, 0x01, 0));
  REQUIRE(field(e.status) == 0);
  CHECK(e.dw0 == 0x08040203u);
  CHECK(h.ctrl.arbitration_feature().hpw == 8);
  CHECK(h.ctrl.arbiter().feature().dword() == 0x08040203u);
  CHECK(h.ctrl.arbiter().feature().burst() == 8);

  // Without WRR the feature is set and read back all the same (its weights
  // unused); a Controller Level Reset brings the default back.
  Harness rr;
  rr.enable();
  e = rr.admin(features(true, 0x01, 0xFF000001u));
  REQUIRE(field(e.status) == 0);
  CHECK(rr.admin(features(false, 0x01, 0)).dw0 == 0xFF000001u);
  rr.ctrl.bar0_write(reg::CC, nvme::cc::make(false, 0), 4);
  rr.enable();
  CHECK(rr.admin(features(false, 0x01, 0)).dw0 == 0x00000007u);
}

TEST_CASE("controller arbitration: Create I/O SQ keeps QPRIO, Delete forgets it", "[controller][arbitration]") {
  Harness h(wrr_config());
  REQUIRE(enable_with_ams(h, 1) == nvme::csts::RDY);
  const SqPriority want[] = {SqPriority::Urgent, SqPriority::High, SqPriority::Medium, SqPriority::Low};
  for (uint16_t q = 1; q <= 4; ++q) {
    REQUIRE(field(h.admin(Harness::create_cq_cmd(q, 16, Harness::io_cq_base(q), 1)).status) == 0);
    auto c = Harness::create_sq_cmd(q, 16, Harness::io_sq_base(q), q);
    c.cdw11 = nvme::create_queue::sq_cdw11(q, uint8_t(q - 1));  // QPRIO 00b..11b
    CHECK((c.cdw11 & 0x6) == uint32_t(q - 1) << 1);
    REQUIRE(field(h.admin(c).status) == 0);
    CHECK(h.ctrl.arbiter().priority(q) == want[q - 1]);
  }
  nvme::SubmissionEntry del{};
  del.opcode = admin::DELETE_IO_SQ;
  del.cdw10 = 4;
  REQUIRE(field(h.admin(del).status) == 0);
  CHECK(h.ctrl.arbiter().priority(4) == SqPriority::Urgent);
}

// The hardware engine's loop, without time: turns from the arbiter, each a
// process_sq of its burst. HPW=2 MPW=1 LPW=0 AB=0, three SQs of 8 commands:
// per round High 3, Medium 2, Low 1, until High runs out.
TEST_CASE("controller arbitration: the arbiter drives process_sq under WRR", "[controller][arbitration]") {
  Harness h(wrr_config());
  REQUIRE(enable_with_ams(h, 1) == nvme::csts::RDY);
  REQUIRE(field(h.admin(features(true, 0x01, 0x02010000u)).status) == 0);
  const uint8_t qprio[] = {0, 1, 2, 3};  // SQ 1 High, 2 Medium, 3 Low
  for (uint16_t q = 1; q <= 3; ++q) {
    REQUIRE(field(h.admin(Harness::create_cq_cmd(q, 16, Harness::io_cq_base(q), 1)).status) == 0);
    auto c = Harness::create_sq_cmd(q, 16, Harness::io_sq_base(q), q);
    c.cdw11 = nvme::create_queue::sq_cdw11(q, qprio[q]);
    REQUIRE(field(h.admin(c).status) == 0);
    for (int i = 0; i < 8; ++i) h.submit_io(q, Harness::read_cmd(uint64_t(8 * i), 8, DATA));
    h.ctrl.arbiter().set_ready(q, true);
  }
  Arbiter& arb = h.ctrl.arbiter();
  std::vector<uint16_t> order;
  while (const Arbiter::Grant g = arb.next()) {
    const unsigned n = h.ctrl.process_sq(g.sqid, g.commands);
    arb.consumed(g, n);
    for (unsigned i = 0; i < n; ++i) order.push_back(g.sqid);
    if (n < g.commands || !h.ctrl.sq_has_work(g.sqid)) arb.set_ready(g.sqid, false);
  }
  // Rounds 1-2: 1 1 1 2 2 3; round 3: 1 1 (High empty) 2 2 3; then Medium
  // and Low share 2:1 until Medium empties, then Low alone.
  const std::vector<uint16_t> want = {1, 1, 1, 2, 2, 3, 1, 1, 1, 2, 2, 3, 1, 1, 2, 2, 3,
                                      2, 2, 3, 3, 3, 3, 3};
  CHECK(order == want);
  std::vector<uint16_t> submitted;
  for (const IoRequest& r : h.env.submitted) submitted.push_back(r.sqid);
  CHECK(submitted == want);  // the backend saw them in that order
}
