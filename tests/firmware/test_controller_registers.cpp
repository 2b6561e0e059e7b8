// Controller register file: CAP/VS, CC.EN/CSTS.RDY, reset, shutdown,
// interrupt masks, doorbell faults and asynchronous events.
#include "tests/firmware/test_controller_env.h"

using namespace ctltest;
namespace reg = nvmesim::nvme::reg;

TEST_CASE("controller: CAP and VS", "[controller]") {
  Harness h;
  // MQES 4095 | CQR bit 16 | TO 20 at 31:24 | DSTRD 0 | CSS bit 37 | MPSMIN 0 | MPSMAX 4 at 55:52
  const uint64_t cap = 0xFFFull | (1ull << 16) | (20ull << 24) | (1ull << 37) | (4ull << 52);
  CHECK(h.ctrl.bar0_read(reg::CAP, 8) == cap);
  CHECK(h.ctrl.bar0_read(reg::CAP, 4) == (cap & 0xFFFFFFFF));
  CHECK(h.ctrl.bar0_read(reg::CAP + 4, 4) == (cap >> 32));
  CHECK(h.ctrl.bar0_read(reg::VS, 4) == 0x00010300u);
  h.ctrl.bar0_write(reg::CAP, 0, 8);  // read-only
  CHECK(h.ctrl.bar0_read(reg::CAP, 8) == cap);

  ControllerConfig c;
  c.dstrd = 2;
  c.mqes = 255;
  Harness h2(c);
  CHECK(((h2.ctrl.bar0_read(reg::CAP, 8) >> 32) & 0xF) == 2);
  CHECK((h2.ctrl.bar0_read(reg::CAP, 8) & 0xFFFF) == 255);
}

TEST_CASE("controller: CC.EN / CSTS.RDY handshake builds the admin queues", "[controller]") {
  Harness h;
  CHECK(h.ctrl.bar0_read(reg::CSTS, 4) == 0);
  h.ctrl.bar0_write(reg::AQA, nvme::aqa::make(16, 8), 4);
  h.ctrl.bar0_write(reg::ASQ, 0x1234567000ull, 8);  // one 64-bit write
  h.ctrl.bar0_write(reg::ACQ, 0x89000, 4);          // two 32-bit halves
  h.ctrl.bar0_write(reg::ACQ + 4, 0x1, 4);
  CHECK(h.ctrl.bar0_read(reg::ASQ, 8) == 0x1234567000ull);
  CHECK(h.ctrl.bar0_read(reg::ASQ, 4) == 0x34567000u);
  CHECK(h.ctrl.bar0_read(reg::ASQ + 4, 4) == 0x12u);
  CHECK(h.ctrl.bar0_read(reg::ACQ, 8) == 0x100089000ull);
  CHECK(h.ctrl.bar0_read(reg::AQA, 4) == 0x0007000Fu);

  auto e = h.ctrl.bar0_write(reg::CC, nvme::cc::make(true, 0), 4);
  CHECK(e.kind == Bar0WriteEffect::EnableRequested);
  CHECK(h.ctrl.bar0_read(reg::CC, 4) == nvme::cc::make(true, 0));
  CHECK(!h.ctrl.enabled());
  CHECK((h.ctrl.bar0_read(reg::CSTS, 4) & 1) == 0);
  h.ctrl.complete_enable();
  CHECK(h.ctrl.bar0_read(reg::CSTS, 4) == 1);
  auto sq = h.ctrl.sq_state(0);
  auto cq = h.ctrl.cq_state(0);
  CHECK(sq.exists);
  CHECK(sq.base == 0x1234567000ull);
  CHECK(sq.size == 16);
  CHECK(cq.exists);
  CHECK(cq.base == 0x100089000ull);
  CHECK(cq.size == 8);
  CHECK(cq.phase);
  CHECK(cq.interrupts_enabled);
  CHECK(cq.vector == 0);
}

TEST_CASE("controller: invalid enable sets CSTS.CFS", "[controller]") {
  auto try_enable = [](uint32_t aqa, uint64_t asq, uint64_t acq, uint8_t mps) {
    Harness h;
    h.ctrl.bar0_write(reg::AQA, aqa, 4);
    h.ctrl.bar0_write(reg::ASQ, asq, 8);
    h.ctrl.bar0_write(reg::ACQ, acq, 8);
    h.ctrl.bar0_write(reg::CC, nvme::cc::make(true, mps), 4);
    h.ctrl.complete_enable();
    return h.ctrl.bar0_read(reg::CSTS, 4);
  };
  CHECK(try_enable(nvme::aqa::make(16, 16), 0x10000, 0x20000, 0) == 1);      // valid
  CHECK(try_enable(nvme::aqa::make(16, 16), 0x10800, 0x20000, 0) == 2);      // ASQ misaligned
  CHECK(try_enable(nvme::aqa::make(16, 16), 0x10000, 0x20004, 0) == 2);      // ACQ misaligned
  CHECK(try_enable(nvme::aqa::make(16, 16), 0, 0x20000, 0) == 2);            // ASQ zero
  CHECK(try_enable(0, 0x10000, 0x20000, 0) == 2);                            // AQA sizes 0
  CHECK(try_enable(nvme::aqa::make(16, 16), 0x10000, 0x20000, 5) == 2);      // MPS > MPSMAX 4
  CHECK(try_enable(nvme::aqa::make(16, 16), 0x10000, 0x20000, 1) == 1);      // 8 KiB pages
  CHECK(try_enable(nvme::aqa::make(16, 16), 0x11000, 0x20000, 1) == 2);      // not 8 KiB aligned
}

TEST_CASE("controller: reset drops queues, doorbell buffer and abandons I/O", "[controller]") {
  Harness h;
  h.enable();
  h.create_pair(1, 16, 16);
  auto e = h.admin(dbbuf_cmd(0x600000, 0x601000));
  REQUIRE(field(e.status) == 0);
  REQUIRE(h.ctrl.dbbuf_active());
  h.shadow = 0x600000;
  h.submit_io(1, Harness::read_cmd(0, 8, DATA));
  REQUIRE(h.ctrl.process_sq(1, 8) == 1);
  REQUIRE(h.env.submitted.size() == 1);
  REQUIRE(h.ctrl.outstanding_io() == 1);
  const uint32_t tag = h.env.submitted[0].tag;

  auto r = h.ctrl.bar0_write(reg::CC, nvme::cc::make(false, 0), 4);
  CHECK(r.kind == Bar0WriteEffect::Reset);
  CHECK(!h.ctrl.enabled());
  CHECK(h.ctrl.bar0_read(reg::CSTS, 4) == 0);
  CHECK(!h.ctrl.sq_state(0).exists);
  CHECK(!h.ctrl.sq_state(1).exists);
  CHECK(!h.ctrl.cq_state(1).exists);
  CHECK(!h.ctrl.dbbuf_active());
  CHECK(h.ctrl.shadow_buffer_addr() == 0);
  CHECK(h.ctrl.outstanding_io() == 0);
  // Doorbells while disabled are ignored (no async event counted).
  CHECK(h.ctrl.bar0_write(h.sq_db(1), 1, 4).kind == Bar0WriteEffect::None);
  CHECK(h.ctrl.counters().invalid_doorbell_writes == 0);

  // Bring up again; the abandoned tag must be ignored even after reuse.
  h.enable();
  h.shadow = 0;
  h.create_pair(1, 16, 16);
  CHECK(!h.ctrl.dbbuf_active());
  h.ctrl.complete_io(tag, 0);
  CHECK(!h.ctrl.cq_has_pending(1));
  CHECK(h.ctrl.post_completions(1) == 0);
  h.submit_io(1, Harness::read_cmd(0, 8, DATA));
  REQUIRE(h.ctrl.process_sq(1, 8) == 1);
  const uint32_t tag2 = h.env.submitted.back().tag;
  CHECK(tag2 != tag);
  h.ctrl.complete_io(tag, 0);  // stale again
  CHECK(h.ctrl.outstanding_io() == 1);
  h.ctrl.complete_io(tag2, 0);
  CHECK(h.ctrl.outstanding_io() == 0);
  CHECK(h.ctrl.post_completions(1) == 1);
  h.ctrl.complete_io(0xFFFFFFFFu, 0);  // nonsense tag: ignored
}

TEST_CASE("controller: shutdown notification completes at once", "[controller]") {
  Harness h;
  h.enable();
  auto e = h.ctrl.bar0_write(reg::CC, nvme::cc::make(true, 0) | (1u << 14), 4);
  CHECK(e.kind == Bar0WriteEffect::Shutdown);
  CHECK(h.ctrl.bar0_read(reg::CSTS, 4) == (1u | (2u << 2)));
  h.ctrl.bar0_write(reg::CC, nvme::cc::make(true, 0), 4);
  CHECK(h.ctrl.bar0_read(reg::CSTS, 4) == 1u);
}

TEST_CASE("controller: INTMS/INTMC hold and release MSI-X", "[controller]") {
  Harness h;
  h.enable();
  h.create_pair(1, 16, 16, /*vector=*/3);
  h.ctrl.bar0_write(reg::INTMS, 1u << 3, 4);
  CHECK(h.ctrl.bar0_read(reg::INTMS, 4) == (1u << 3));
  CHECK(h.ctrl.bar0_read(reg::INTMC, 4) == (1u << 3));
  h.env.msix_log.clear();
  h.submit_io(1, Harness::read_cmd(0, 1, DATA));
  h.ctrl.process_sq(1, 8);
  h.ctrl.complete_io(h.env.submitted[0].tag, 0);
  CHECK(h.ctrl.post_completions(1) == 1);
  CHECK(h.env.msix_log.empty());
  h.ctrl.bar0_write(reg::INTMC, 1u << 3, 4);
  CHECK(h.ctrl.bar0_read(reg::INTMS, 4) == 0);
  REQUIRE(h.env.msix_log.size() == 1);
  CHECK(h.env.msix_log[0] == 3);
  h.ctrl.bar0_write(reg::INTMC, 1u << 3, 4);  // nothing pending any more
  CHECK(h.env.msix_log.size() == 1);
}

TEST_CASE("controller: doorbell faults raise asynchronous events", "[controller]") {
  ControllerConfig c;
  c.max_io_queues = 4;
  Harness h(c);
  h.enable();
  h.create_pair(1, 4, 8);
  const uint64_t ae0 = h.ctrl.counters().async_events;

  SECTION("missing queue: Invalid Doorbell Register, completes a waiting AER") {
    h.submit_aer();
    CHECK(!h.admin_cqe_ready());
    CHECK(h.ctrl.bar0_write(h.sq_db(2), 1, 4).kind == Bar0WriteEffect::None);
    REQUIRE(h.admin_cqe_ready());
    auto e = h.pop_admin_cqe();
    CHECK(field(e.status) == 0);
    CHECK(e.dw0 == 0x00010000u);  // type Error 0, info 0x00, log page 0x01
    CHECK(h.ctrl.sq_state(2).exists == false);
    // qid beyond max_io_queues, and a CQ doorbell of a missing CQ
    h.submit_aer();
    h.ctrl.bar0_write(h.cq_db(9), 0, 4);
    e = h.pop_admin_cqe();
    CHECK(e.dw0 == 0x00010000u);
    CHECK(h.ctrl.counters().invalid_doorbell_writes == 2);
    CHECK(h.ctrl.counters().async_events == ae0 + 2);
  }
  SECTION("SQ tail >= size: Invalid Doorbell Write Value, ignored") {
    h.submit_aer();
    CHECK(h.ctrl.bar0_write(h.sq_db(1), 8, 4).kind == Bar0WriteEffect::None);
    auto e = h.pop_admin_cqe();
    CHECK(e.dw0 == 0x00010100u);
    CHECK(h.ctrl.sq_state(1).tail == 0);
    CHECK(h.ctrl.bar0_write(h.sq_db(1), 7, 4).kind == Bar0WriteEffect::SqDoorbell);
    CHECK(h.ctrl.sq_state(1).tail == 7);
  }
  SECTION("CQ head beyond the posted entries: Invalid Doorbell Write Value") {
    // One CQE posted: head may go 0 -> 1, not to 2.
    h.submit_io(1, Harness::read_cmd(0, 1, DATA));
    h.ctrl.process_sq(1, 8);
    h.ctrl.complete_io(h.env.submitted[0].tag, 0);
    h.ctrl.post_completions(1);
    h.submit_aer();
    CHECK(h.ctrl.bar0_write(h.cq_db(1), 2, 4).kind == Bar0WriteEffect::None);
    auto e = h.pop_admin_cqe();
    CHECK(e.dw0 == 0x00010100u);
    CHECK(h.ctrl.cq_state(1).head == 0);
    CHECK(h.ctrl.bar0_write(h.cq_db(1), 1, 4).kind == Bar0WriteEffect::None);
    CHECK(h.ctrl.cq_state(1).head == 1);
    h.submit_aer();
    h.ctrl.bar0_write(h.cq_db(1), 4, 4);  // >= size
    CHECK(h.pop_admin_cqe().dw0 == 0x00010100u);
  }
  SECTION("no AER waiting: the event waits for the next AER") {
    h.ctrl.bar0_write(h.sq_db(3), 1, 4);
    CHECK(!h.admin_cqe_ready());
    h.submit_aer();
    REQUIRE(h.admin_cqe_ready());
    CHECK(h.pop_admin_cqe().dw0 == 0x00010000u);
  }
  SECTION("more than AERL+1 requests: Async Event Request Limit Exceeded") {
    for (int i = 0; i < 4; ++i) h.submit_aer();
    CHECK(!h.admin_cqe_ready());
    nvme::SubmissionEntry aer{};
    aer.opcode = nvme::admin::ASYNC_EVENT_REQUEST;
    auto e = h.admin(aer);
    check_status(e, 1, 0x05, false);
  }
}

TEST_CASE("controller: doorbell stride places the registers", "[controller]") {
  ControllerConfig c;
  c.dstrd = 1;  // 8-byte stride
  Harness h(c);
  h.enable();
  h.create_pair(1, 4, 8);
  // SQ1 tail doorbell at 0x1000 + 2*8 = 0x1010, CQ1 head at 0x1018.
  CHECK(h.ctrl.bar0_write(0x1010, 3, 4).kind == Bar0WriteEffect::SqDoorbell);
  CHECK(h.ctrl.sq_state(1).tail == 3);
  CHECK(h.ctrl.bar0_write(0x1014, 3, 4).kind == Bar0WriteEffect::None);  // stride padding
  CHECK(h.ctrl.sq_state(1).tail == 3);
  CHECK(h.ctrl.counters().invalid_doorbell_writes == 0);
}
