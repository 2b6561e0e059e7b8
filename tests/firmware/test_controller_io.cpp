// I/O commands, completion posting, phase tags, MSI-X batching, CQ full.
#include "tests/firmware/test_controller_env.h"

using namespace ctltest;

TEST_CASE("controller: I/O completion is enqueued, then posted with the CQE layout",
          "[controller]") {
  Harness h;
  h.enable();
  h.create_pair(1, 4, 8, /*vector=*/2);
  const uint16_t cid = h.submit_io(1, Harness::read_cmd(7, 8, DATA));
  CHECK(h.ctrl.sq_has_work(1));
  REQUIRE(h.ctrl.process_sq(1, 8) == 1);
  CHECK(!h.ctrl.sq_has_work(1));
  REQUIRE(h.env.submitted.size() == 1);
  h.env.msix_log.clear();
  h.ctrl.complete_io(h.env.submitted[0].tag, 0);
  CHECK(h.ctrl.cq_has_pending(1));
  CHECK(h.ctrl.cq_state(1).pending == 1);
  CHECK(h.env.r16(Harness::io_cq_base(1) + 14) == 0);  // not posted yet
  CHECK(h.env.msix_log.empty());
  CHECK(h.ctrl.post_completions(1) == 1);
  auto e = h.io_cqe(1, 0);
  CHECK(e.dw0 == 0);
  CHECK(e.dw1 == 0);
  CHECK(e.sq_head == 1);
  CHECK(e.sq_id == 1);
  CHECK(e.cid == cid);
  CHECK(e.status == 0x0001);  // success, phase 1
  REQUIRE(h.env.msix_log.size() == 1);
  CHECK(h.env.msix_log[0] == 2);
  CHECK(h.ctrl.cq_state(1).tail == 1);
  CHECK(h.ctrl.outstanding_io() == 0);
  // A backend error status lands in the status word with the phase.
  h.submit_io(1, Harness::read_cmd(7, 8, DATA));
  h.ctrl.process_sq(1, 8);
  // Media error (SCT 2) 0x81, Unrecovered Read Error: field 0x281.
  h.ctrl.complete_io(h.env.submitted[1].tag,
                     nvme::make_status(nvme::StatusCodeType::MediaError, 0x81));
  h.ctrl.post_completions(1);
  CHECK(h.io_cqe(1, 1).status == 0x0503);
  CHECK(h.ctrl.counters().io_commands == 2);
  CHECK(h.ctrl.counters().completions_posted >= 2);
}

TEST_CASE("controller: phase tag flips over two laps", "[controller]") {
  Harness h;
  h.enable();
  h.create_pair(1, 4, 8);
  uint32_t cq_head = 0;
  for (int i = 0; i < 8; ++i) {
    const uint16_t cid = h.submit_io(1, Harness::read_cmd(0, 1, DATA));
    REQUIRE(h.ctrl.process_sq(1, 8) == 1);
    h.ctrl.complete_io(h.env.submitted.back().tag, 0);
    REQUIRE(h.ctrl.post_completions(1) == 1);
    auto e = h.io_cqe(1, uint32_t(i % 4));
    CHECK(e.cid == cid);
    CHECK((e.status & 1) == (i < 4 ? 1 : 0));
    CHECK(e.sq_head == uint16_t((i + 1) % 8));
    cq_head = (cq_head + 1) % 4;
    h.ctrl.bar0_write(h.cq_db(1), cq_head, 4);
  }
  CHECK(h.ctrl.cq_state(1).phase == true);  // two wraps of a 4-entry CQ
  CHECK(h.ctrl.cq_state(1).tail == 0);
}

TEST_CASE("controller: one MSI-X per post_completions batch, SQ head in CQEs", "[controller]") {
  Harness h;
  h.enable();
  h.create_pair(1, 16, 16, 1);
  for (int i = 0; i < 3; ++i) h.submit_io(1, Harness::read_cmd(uint64_t(i), 1, DATA));
  REQUIRE(h.ctrl.process_sq(1, 2) == 2);  // budget
  CHECK(h.ctrl.sq_state(1).head == 2);
  REQUIRE(h.ctrl.process_sq(1, 8) == 1);
  h.env.msix_log.clear();
  // Completed out of order: CQEs follow completion order, SQHD = head now (3).
  h.ctrl.complete_io(h.env.submitted[2].tag, 0);
  h.ctrl.complete_io(h.env.submitted[0].tag, 0);
  h.ctrl.complete_io(h.env.submitted[1].tag, 0);
  CHECK(h.ctrl.post_completions(1) == 3);
  CHECK(h.env.msix_log.size() == 1);
  CHECK(h.io_cqe(1, 0).cid == h.env.submitted[2].cid);
  CHECK(h.io_cqe(1, 1).cid == h.env.submitted[0].cid);
  CHECK(h.io_cqe(1, 2).cid == h.env.submitted[1].cid);
  for (int i = 0; i < 3; ++i) CHECK(h.io_cqe(1, uint32_t(i)).sq_head == 3);
  CHECK(h.ctrl.post_completions(1) == 0);
  CHECK(h.env.msix_log.size() == 1);  // nothing posted: no interrupt
}

TEST_CASE("controller: no interrupt for a CQ with IEN = 0", "[controller]") {
  Harness h;
  h.enable();
  h.create_pair(1, 16, 16, 1, /*ien=*/false);
  h.submit_io(1, Harness::read_cmd(0, 1, DATA));
  h.ctrl.process_sq(1, 8);
  h.env.msix_log.clear();
  h.ctrl.complete_io(h.env.submitted[0].tag, 0);
  CHECK(h.ctrl.post_completions(1) == 1);
  CHECK(h.env.msix_log.empty());
}

TEST_CASE("controller: a full CQ holds completions until its head moves", "[controller]") {
  Harness h;
  h.enable();
  h.create_pair(1, 4, 8);  // 3 usable CQ slots
  for (int i = 0; i < 5; ++i) h.submit_io(1, Harness::read_cmd(0, 1, DATA));
  REQUIRE(h.ctrl.process_sq(1, 8) == 5);
  for (auto& r : h.env.submitted) h.ctrl.complete_io(r.tag, 0);
  CHECK(h.ctrl.post_completions(1) == 3);
  CHECK(h.ctrl.cq_state(1).pending == 2);
  CHECK(h.ctrl.counters().cq_full_waits == 1);
  CHECK(h.ctrl.post_completions(1) == 0);
  CHECK(h.ctrl.counters().cq_full_waits == 1);  // once per stall
  // Head 0 -> 1: one slot; the doorbell asks for post_completions.
  auto eff = h.ctrl.bar0_write(h.cq_db(1), 1, 4);
  CHECK(eff.kind == Bar0WriteEffect::CqDoorbell);
  CHECK(eff.qid == 1);
  CHECK(h.ctrl.post_completions(1) == 1);
  CHECK(h.io_cqe(1, 3).cid == h.env.submitted[3].cid);
  CHECK(h.ctrl.counters().cq_full_waits == 2);  // stalled again with 1 pending
  h.ctrl.bar0_write(h.cq_db(1), 3, 4);
  CHECK(h.ctrl.post_completions(1) == 1);
  auto last = h.io_cqe(1, 0);  // wrapped: phase 0
  CHECK(last.cid == h.env.submitted[4].cid);
  CHECK((last.status & 1) == 0);
  CHECK(!h.ctrl.cq_has_pending(1));
  CHECK(h.ctrl.bar0_write(h.cq_db(1), 0, 4).kind == Bar0WriteEffect::None);
}

// QEMU's nvme_process_db schedules posting on a CQ head write only when the
// CQ was full before it; otherwise the completions' own posting is due.
TEST_CASE("controller: a CQ head write asks for posting only if the CQ was full", "[controller]") {
  Harness h;
  h.enable();
  h.create_pair(1, 8, 8);  // 7 usable CQ slots
  for (int i = 0; i < 3; ++i) h.submit_io(1, Harness::read_cmd(0, 1, DATA));
  REQUIRE(h.ctrl.process_sq(1, 8) == 3);
  h.ctrl.complete_io(h.env.submitted[0].tag, 0);
  CHECK(h.ctrl.post_completions(1) == 1);
  h.ctrl.complete_io(h.env.submitted[1].tag, 0);  // pending, CQ not full
  REQUIRE(h.ctrl.cq_state(1).pending == 1);
  CHECK(h.ctrl.bar0_write(h.cq_db(1), 1, 4).kind == Bar0WriteEffect::None);
  CHECK(h.ctrl.cq_state(1).head == 1);  // the value is taken all the same
}

TEST_CASE("controller: I/O command checks", "[controller]") {
  ControllerConfig c;
  c.namespace_lbas = 1000;
  Harness h(c);
  h.enable();
  h.create_pair(1, 16, 16);
  auto bad_ns = Harness::read_cmd(0, 1, DATA);
  bad_ns.nsid = 2;
  h.submit_io(1, bad_ns);
  h.submit_io(1, Harness::read_cmd(999, 2, DATA, DATA + 0x1000));  // 999 + 2 > 1000
  h.submit_io(1, Harness::read_cmd(0, 257, DATA, 0x300000));        // 131584 B > MDTS 128 KiB
  auto bad_op = Harness::read_cmd(0, 1, DATA);
  bad_op.opcode = 0x05;
  h.submit_io(1, bad_op);
  nvme::SubmissionEntry flush{};
  flush.opcode = nvme::io::FLUSH;
  flush.nsid = 0xFFFFFFFFu;
  h.submit_io(1, flush);
  flush.nsid = 3;
  h.submit_io(1, flush);
  h.submit_io(1, Harness::read_cmd(999, 1, DATA));  // last LBA: fine
  REQUIRE(h.ctrl.process_sq(1, 16) == 7);
  // Posted at once by process_sq: 5 failures in submission order.
  auto s = [&](uint32_t i) { return h.io_cqe(1, i).status; };
  CHECK(s(0) == uint16_t((0x4000u | 0x0B) << 1 | 1));
  CHECK(s(1) == uint16_t((0x4000u | 0x80) << 1 | 1));
  CHECK(s(2) == uint16_t((0x4000u | 0x02) << 1 | 1));
  CHECK(s(3) == uint16_t((0x4000u | 0x01) << 1 | 1));
  CHECK(s(4) == uint16_t((0x4000u | 0x0B) << 1 | 1));
  REQUIRE(h.env.submitted.size() == 2);
  CHECK(h.env.submitted[0].opcode == nvme::io::FLUSH);
  CHECK(h.env.submitted[0].bytes == 0);
  CHECK(h.env.submitted[0].segment_count == 0);
  CHECK(h.env.submitted[1].slba == 999);
  CHECK(h.ctrl.outstanding_io() == 2);
}

TEST_CASE("controller: Delete I/O SQ drops its commands", "[controller]") {
  Harness h;
  h.enable();
  h.create_pair(1, 16, 16);
  h.submit_io(1, Harness::read_cmd(0, 1, DATA));
  h.submit_io(1, Harness::read_cmd(1, 1, DATA));
  REQUIRE(h.ctrl.process_sq(1, 8) == 2);
  h.ctrl.complete_io(h.env.submitted[0].tag, 0);  // pending, not posted
  nvme::SubmissionEntry del{};
  del.opcode = nvme::admin::DELETE_IO_SQ;
  del.cdw10 = 1;
  REQUIRE(field(h.admin(del).status) == 0);
  CHECK(h.ctrl.outstanding_io() == 0);
  CHECK(!h.ctrl.cq_has_pending(1));
  h.ctrl.complete_io(h.env.submitted[1].tag, 0);  // abandoned: ignored
  CHECK(h.ctrl.post_completions(1) == 0);
  CHECK(h.env.r16(Harness::io_cq_base(1) + 14) == 0);
}

TEST_CASE("controller: unreadable SQ memory is a controller fatal status", "[controller]") {
  Harness h;
  h.enable();
  auto e = h.admin(Harness::create_cq_cmd(1, 16, Harness::io_cq_base(1), 1));
  REQUIRE(field(e.status) == 0);
  e = h.admin(Harness::create_sq_cmd(1, 16, 0x7F000000ull, 1));  // outside guest memory
  REQUIRE(field(e.status) == 0);
  h.ctrl.bar0_write(h.sq_db(1), 1, 4);
  CHECK(h.ctrl.process_sq(1, 8) == 0);
  CHECK(h.ctrl.fatal());
  CHECK((h.ctrl.bar0_read(nvme::reg::CSTS, 4) & 2) == 2);
}
