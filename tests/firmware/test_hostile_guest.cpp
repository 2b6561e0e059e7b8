// A buggy or hostile guest against fw::Controller: each case gets the status
// the NVMe spec prescribes (exact SCT/SC/DNR, the asynchronous event's DW0,
// or CSTS.CFS), and the controller keeps working afterwards. Cases already in
// test_controller_*.cpp (missing-queue doorbells, doorbell values >= size,
// Create SQ on a missing CQ, duplicate qids, unknown CNS and opcodes, a
// doorbell buffer outside memory, an SQ shadow value >= size) are not
// repeated here. The last case drives a whole SystemC platform (its own
// process, as every TEST_CASE).
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include <systemc>
#include <tlm>
#include <utility>

#include "nvmesim/models/nvme/nvme_controller.h"
#include "nvmesim/platform/config/params.h"
#include "nvmesim/platform/report/results.h"
#include "nvmesim/platform/system/system.h"
#include "tests/firmware/test_controller_env.h"

using namespace ctltest;
namespace reg = nvmesim::nvme::reg;

namespace {
constexpr uint64_t MEM = 8u << 20;  // TestEnv's default guest memory
constexpr uint64_t SHADOW = 0x600000;
constexpr uint64_t EVENTIDX = 0x601000;
// Asynchronous event DW0 (NVMe 1.3 figure 146): type Error (0), info, log page 01h.
constexpr uint32_t AE_INVALID_DOORBELL_VALUE = 0x00010100u;

// The CQE most recently posted on I/O CQ qid.
nvme::CompletionEntry last_cqe(const Harness& h, uint16_t qid) {
  const auto cq = h.ctrl.cq_state(qid);
  return h.io_cqe(qid, (cq.tail + cq.size - 1) % cq.size);
}

// A valid read on I/O queue qid goes through the backend and completes with
// success: the controller still works after whatever came before.
void check_io_works(Harness& h, uint16_t qid) {
  const size_t before = h.env.submitted.size();
  const uint16_t cid = h.submit_io(qid, Harness::read_cmd(7, 1, DATA));
  REQUIRE(h.ctrl.process_sq(qid, 64) >= 1);
  REQUIRE(h.env.submitted.size() == before + 1);
  h.ctrl.complete_io(h.env.submitted.back().tag, 0);
  REQUIRE(h.ctrl.post_completions(qid) >= 1);
  const auto e = last_cqe(h, qid);
  CHECK(e.cid == cid);
  CHECK(field(e.status) == 0);
  CHECK(!h.ctrl.fatal());
}

void check_admin_works(Harness& h) {
  nvme::SubmissionEntry abort{};
  abort.opcode = nvme::admin::ABORT;
  const auto e = h.admin(abort);
  CHECK(field(e.status) == 0);
  CHECK(e.dw0 == 1u);
}
}  // namespace

TEST_CASE("hostile: an SQ tail that overruns the head is refused", "[controller][hostile]") {
  Harness h;
  h.enable();
  h.create_pair(1, 16, 8);
  for (int i = 0; i < 3; ++i) h.submit_io(1, Harness::read_cmd(0, 1, DATA));
  REQUIRE(h.ctrl.process_sq(1, 64) == 3);  // fetch head 3
  for (auto& r : h.env.submitted) h.ctrl.complete_io(r.tag, 0);
  REQUIRE(h.ctrl.post_completions(1) == 3);  // their slots are free again
  // Two more commands: tail 3 -> 5.
  h.place_io(1, Harness::read_cmd(0, 1, DATA));
  h.place_io(1, Harness::read_cmd(0, 1, DATA));
  CHECK(h.ctrl.bar0_write(h.sq_db(1), 5, 4).kind == Bar0WriteEffect::SqDoorbell);
  h.submit_aer();
  // Tail 4 lies between head 3 and tail 5: 7 more entries than the ring has
  // room for. Invalid Doorbell Write Value, tail kept.
  CHECK(h.ctrl.bar0_write(h.sq_db(1), 4, 4).kind == Bar0WriteEffect::None);
  CHECK(h.ctrl.sq_state(1).tail == 5);
  REQUIRE(h.admin_cqe_ready());
  auto e = h.pop_admin_cqe();
  CHECK(field(e.status) == 0);
  CHECK(e.dw0 == AE_INVALID_DOORBELL_VALUE);
  // A tail back on the head (a full lap) is the same fault.
  h.submit_aer();
  CHECK(h.ctrl.bar0_write(h.sq_db(1), 3, 4).kind == Bar0WriteEffect::None);
  CHECK(h.ctrl.sq_state(1).tail == 5);
  REQUIRE(h.admin_cqe_ready());
  CHECK(h.pop_admin_cqe().dw0 == AE_INVALID_DOORBELL_VALUE);
  CHECK(h.ctrl.counters().invalid_doorbell_writes == 2);
  // Rewriting the current tail, and the fullest legal ring (7 of 8), pass.
  CHECK(h.ctrl.bar0_write(h.sq_db(1), 5, 4).kind == Bar0WriteEffect::SqDoorbell);
  CHECK(h.ctrl.bar0_write(h.sq_db(1), 2, 4).kind == Bar0WriteEffect::SqDoorbell);
  CHECK(h.ctrl.sq_state(1).tail == 2);
  CHECK(h.ctrl.counters().invalid_doorbell_writes == 2);
  // Fetch the 7 entries (slots 3..7, 0, 1: the 2 placed, 3 zeroed, 2 old), then carry on.
  CHECK(h.ctrl.process_sq(1, 64) == 7);
  for (auto& r : h.env.submitted) h.ctrl.complete_io(r.tag, 0);
  h.ctrl.post_completions(1);
  h.io_tail[1] = 2;
  check_io_works(h, 1);
}

TEST_CASE("hostile: an SQ shadow tail that overruns the head is not trusted",
          "[controller][hostile][dbbuf]") {
  Harness h;
  h.enable();
  h.create_pair(1, 16, 8);
  REQUIRE(field(h.admin(dbbuf_cmd(SHADOW, EVENTIDX)).status) == 0);
  h.shadow = SHADOW;
  for (int i = 0; i < 4; ++i) h.submit_io(1, Harness::read_cmd(0, 1, DATA));
  REQUIRE(h.ctrl.process_sq(1, 2) == 2);  // head 2, tail 4
  h.submit_aer();
  h.env.w32(SHADOW + 8, 3);  // between head 2 and tail 4: 7 more entries than there is room for
  CHECK(h.ctrl.refresh_sq_tail_from_shadow(1));
  CHECK(h.ctrl.sq_state(1).tail == 4);
  REQUIRE(h.admin_cqe_ready());
  CHECK(h.pop_admin_cqe().dw0 == AE_INVALID_DOORBELL_VALUE);
  h.env.w32(SHADOW + 8, 4);
  CHECK(h.ctrl.process_sq(1, 64) == 2);
  check_io_works(h, 1);
}

TEST_CASE("hostile: CQ shadow heads beyond the posted entries or >= size are not trusted",
          "[controller][hostile][dbbuf]") {
  Harness h;
  h.enable();
  h.create_pair(1, 4, 8);
  REQUIRE(field(h.admin(dbbuf_cmd(SHADOW, EVENTIDX)).status) == 0);
  h.shadow = SHADOW;
  h.submit_io(1, Harness::read_cmd(0, 1, DATA));
  REQUIRE(h.ctrl.process_sq(1, 8) == 1);
  h.ctrl.complete_io(h.env.submitted[0].tag, 0);
  REQUIRE(h.ctrl.post_completions(1) == 1);  // CQ1: head 0, tail 1
  for (uint32_t bad : {2u, 4u, 0xFFFFFFFFu}) {  // beyond tail 1; = size; huge
    h.submit_io(1, Harness::read_cmd(0, 1, DATA));
    REQUIRE(h.ctrl.process_sq(1, 8) == 1);
    h.ctrl.complete_io(h.env.submitted.back().tag, 0);
    h.submit_aer();
    h.env.w32(SHADOW + 12, bad);
    const uint32_t head_before = h.ctrl.cq_state(1).head;
    CHECK(h.ctrl.post_completions(1) >= 1);  // read before each CQE, rejected
    CHECK(h.ctrl.cq_state(1).head == head_before);
    REQUIRE(h.admin_cqe_ready());
    CHECK(h.pop_admin_cqe().dw0 == AE_INVALID_DOORBELL_VALUE);
    // The guest consumes what was posted, correctly this time.
    const uint32_t tail = h.ctrl.cq_state(1).tail;
    h.env.w32(SHADOW + 12, tail);
    h.ctrl.bar0_write(h.cq_db(1), tail, 4);
    CHECK(h.ctrl.cq_state(1).head == tail);
  }
  check_io_works(h, 1);
}

TEST_CASE("hostile: queue sizes at the edges of the 16-bit QSIZE field", "[controller][hostile]") {
  Harness h;  // MQES 4095: 4096 entries at most
  h.enable();
  auto cq = Harness::create_cq_cmd(1, 16, Harness::io_cq_base(1), 1);
  cq.cdw10 = 1u | (0xFFFFu << 16);  // QSIZE 0xFFFF: 65536 entries
  check_status(h.admin(cq).status, 1, 0x02, true);
  cq.cdw10 = 1u;  // QSIZE 0: one entry
  check_status(h.admin(cq).status, 1, 0x02, true);
  CHECK(!h.ctrl.cq_state(1).exists);
  auto e = h.admin(Harness::create_cq_cmd(1, 4096, Harness::io_cq_base(1), 1));  // MQES + 1
  REQUIRE(field(e.status) == 0);
  auto sq = Harness::create_sq_cmd(1, 16, 0x400000, 1);
  sq.cdw10 = 1u | (0xFFFFu << 16);
  check_status(h.admin(sq).status, 1, 0x02, true);
  sq.cdw10 = 1u;
  check_status(h.admin(sq).status, 1, 0x02, true);
  CHECK(!h.ctrl.sq_state(1).exists);

  // With MQES 65535, a 65536-entry queue is legal and its ring arithmetic wraps.
  ControllerConfig big;
  big.mqes = 65535;
  Harness h2(big);
  h2.enable();
  REQUIRE(field(h2.admin(Harness::create_cq_cmd(1, 65536, 0x600000, 1)).status) == 0);  // 1 MiB
  REQUIRE(field(h2.admin(Harness::create_sq_cmd(1, 65536, 0x100000, 1)).status) == 0);  // 4 MiB
  CHECK(h2.ctrl.sq_state(1).size == 65536);
  CHECK(h2.ctrl.bar0_write(h2.sq_db(1), 65535, 4).kind == Bar0WriteEffect::SqDoorbell);
  CHECK(h2.ctrl.bar0_write(h2.sq_db(1), 65536, 4).kind == Bar0WriteEffect::None);
  CHECK(h2.ctrl.sq_state(1).tail == 65535);
}

TEST_CASE("hostile: an admin queue of one entry is a controller fatal status, reset recovers",
          "[controller][hostile]") {
  Harness h;
  for (uint32_t aqa : {nvme::aqa::make(1, 16), nvme::aqa::make(16, 1)}) {
    h.ctrl.bar0_write(reg::AQA, aqa, 4);
    h.ctrl.bar0_write(reg::ASQ, ASQ, 8);
    h.ctrl.bar0_write(reg::ACQ, ACQ, 8);
    REQUIRE(h.ctrl.bar0_write(reg::CC, nvme::cc::make(true, 0), 4).kind ==
            Bar0WriteEffect::EnableRequested);
    h.ctrl.complete_enable();
    CHECK(h.ctrl.bar0_read(reg::CSTS, 4) == nvme::csts::CFS);
    CHECK(h.ctrl.bar0_write(h.sq_db(0), 1, 4).kind == Bar0WriteEffect::None);
    CHECK(h.ctrl.bar0_write(reg::CC, 0, 4).kind == Bar0WriteEffect::Reset);
  }
  h.enable();
  CHECK(h.ctrl.bar0_read(reg::CSTS, 4) == nvme::csts::RDY);
  check_admin_works(h);
}

TEST_CASE("hostile: PRP offsets where none is allowed", "[controller][hostile][prp]") {
  Harness h;
  h.enable();
  h.create_pair(1, 16, 16);
  // Identify: PRP1 at offset 0x800, the second half in PRP2, which must be
  // page aligned.
  nvme::SubmissionEntry id = identify(nvme::cns::CONTROLLER, 0, DATA + 0x800, DATA + 0x2010);
  check_status(h.admin(id).status, 0, 0x13, true);
  id.prp2 = DATA + 0x2000;
  CHECK(field(h.admin(id).status) == 0);
  // Get Log Page, 4 KiB from offset 0x400: the last 1 KiB goes to PRP2, which
  // has an offset.
  nvme::SubmissionEntry log{};
  log.opcode = nvme::admin::GET_LOG_PAGE;
  log.cdw10 = 0x01 | (1023u << 16);  // 1024 dwords
  log.prp1 = DATA + 0x400;
  log.prp2 = DATA + 0x3004;
  check_status(h.admin(log).status, 0, 0x13, true);
  // I/O: a PRP list entry of the second list page (after a chain) with an offset.
  const uint64_t list = 0x300FF0;  // two entries, the second chains
  h.env.w64(list, 0x211000);
  h.env.w64(list + 8, 0x301000);
  h.env.w64(0x301000, 0x212000);
  h.env.w64(0x301008, 0x213200);
  h.submit_io(1, Harness::read_cmd(0, 32, 0x210000, list));  // 16 KiB: PRP1 + 3 list entries
  REQUIRE(h.ctrl.process_sq(1, 8) == 1);
  CHECK(h.env.submitted.empty());
  check_status(last_cqe(h, 1).status, 0, 0x13, true);
  h.env.w64(0x301008, 0x213000);
  h.submit_io(1, Harness::read_cmd(0, 32, 0x210000, list));
  REQUIRE(h.ctrl.process_sq(1, 8) == 1);
  REQUIRE(h.env.submitted.size() == 1);
  CHECK(h.env.submitted[0].segment_count == 4);
  CHECK(h.env.submitted[0].segments[3].addr == 0x213000);
  h.ctrl.complete_io(h.env.submitted[0].tag, 0);
  h.ctrl.post_completions(1);
  check_io_works(h, 1);
}

TEST_CASE("hostile: PRP lists that chain to nowhere or outside memory", "[controller][hostile][prp]") {
  Harness h;
  h.enable();
  h.create_pair(1, 16, 16);
  // 16 KiB from PRP1 0x210000: 3 list entries; the list at 0x300FF0 has room
  // for 2, so its second entry is the chain pointer.
  const uint64_t list = 0x300FF0;
  h.env.w64(list, 0x211000);
  auto run = [&](uint64_t chain) {
    h.env.w64(list + 8, chain);
    h.submit_io(1, Harness::read_cmd(0, 32, 0x210000, list));
    REQUIRE(h.ctrl.process_sq(1, 8) == 1);
    return last_cqe(h, 1).status;
  };
  check_status(run(0), 0, 0x02, true);             // chain to 0: Invalid Field
  check_status(run(0x7F000000ull), 0, 0x04, true); // far beyond memory: Data Transfer Error
  check_status(run(MEM), 0, 0x04, true);           // the first page past the end
  check_status(run(0x301008), 0, 0x13, true);      // chain pointer with an offset
  CHECK(h.env.submitted.empty());
  check_io_works(h, 1);
}

TEST_CASE("hostile: data buffers outside guest memory", "[controller][hostile]") {
  ControllerConfig c;
  c.guest_memory_bytes = MEM;
  Harness h(c);
  h.enable();
  h.create_pair(1, 16, 16);
  h.submit_io(1, Harness::read_cmd(0, 1, 0x40000000ull));  // PRP1 far outside
  h.submit_io(1, Harness::read_cmd(0, 8, MEM - 2048, MEM));  // PRP2 = first byte past the end
  h.env.w64(0x300000, 0x211000);
  h.env.w64(0x300008, 0x7FFFF000ull);  // a list entry outside
  h.submit_io(1, Harness::read_cmd(0, 24, 0x210000, 0x300000));
  auto wr = Harness::read_cmd(0, 8, MEM - 4096);  // a write from the last page: fine
  wr.opcode = nvme::io::WRITE;
  h.submit_io(1, wr);
  REQUIRE(h.ctrl.process_sq(1, 8) == 4);
  for (uint32_t i = 0; i < 3; ++i) check_status(h.io_cqe(1, i).status, 0, 0x04, true);
  REQUIRE(h.env.submitted.size() == 1);  // only the good write reached the backend
  CHECK(h.env.submitted[0].segments[0].addr == MEM - 4096);
  h.ctrl.complete_io(h.env.submitted[0].tag, 0);
  h.ctrl.post_completions(1);
  // Identify into memory that is not there: Data Transfer Error too.
  nvme::SubmissionEntry id = identify(nvme::cns::CONTROLLER, 0, MEM);
  check_status(h.admin(id).status, 0, 0x04, true);
  check_io_works(h, 1);
}

TEST_CASE("hostile: fused operations and SGLs are refused", "[controller][hostile]") {
  Harness h;
  h.enable();
  h.create_pair(1, 16, 16);
  nvme::SubmissionEntry id = identify(nvme::cns::CONTROLLER, 0, DATA);
  id.flags = 0x40;  // PSDT 01b: SGL
  check_status(h.admin(id).status, 0, 0x02, true);
  id.flags = 0x01;  // FUSE 01b: first of a fused pair
  check_status(h.admin(id).status, 0, 0x02, true);
  auto rd = Harness::read_cmd(0, 1, DATA);
  rd.flags = 0x80;  // PSDT 10b
  h.submit_io(1, rd);
  rd.flags = 0x02;  // FUSE 10b
  h.submit_io(1, rd);
  REQUIRE(h.ctrl.process_sq(1, 8) == 2);
  check_status(h.io_cqe(1, 0).status, 0, 0x02, true);
  check_status(h.io_cqe(1, 1).status, 0, 0x02, true);
  CHECK(h.env.submitted.empty());
  check_io_works(h, 1);
}

TEST_CASE("hostile: admin doorbells while CC.EN = 0 or before CSTS.RDY are ignored",
          "[controller][hostile]") {
  Harness h;
  nvme::SubmissionEntry id = identify(nvme::cns::CONTROLLER, 0, DATA);
  std::memcpy(h.env.mem.data() + ASQ, &id, 64);
  h.ctrl.bar0_write(reg::AQA, nvme::aqa::make(ADMIN_ENTRIES, ADMIN_ENTRIES), 4);
  h.ctrl.bar0_write(reg::ASQ, ASQ, 8);
  h.ctrl.bar0_write(reg::ACQ, ACQ, 8);
  CHECK(h.ctrl.bar0_write(h.sq_db(0), 1, 4).kind == Bar0WriteEffect::None);  // CC.EN = 0
  CHECK(h.ctrl.process_sq(0, 64) == 0);
  CHECK(h.ctrl.bar0_write(reg::CC, nvme::cc::make(true, 0), 4).kind ==
        Bar0WriteEffect::EnableRequested);
  CHECK(h.ctrl.bar0_write(h.sq_db(0), 1, 4).kind == Bar0WriteEffect::None);  // RDY still 0
  CHECK(h.ctrl.process_sq(0, 64) == 0);
  CHECK(h.ctrl.post_completions(0) == 0);
  CHECK(h.ctrl.counters().invalid_doorbell_writes == 0);  // no queue yet: not an event
  CHECK(h.ctrl.counters().commands_fetched == 0);
  CHECK(h.env.r16(ACQ + 14) == 0);  // no CQE
  CHECK(h.env.r32(DATA) == 0);      // Identify not executed
  h.ctrl.complete_enable();
  REQUIRE(h.ctrl.enabled());
  // The queue starts empty (head = tail = 0): the early doorbell is forgotten.
  CHECK(!h.ctrl.sq_has_work(0));
  CHECK(h.ctrl.sq_state(0).tail == 0);
  check_admin_works(h);
}

TEST_CASE("hostile: CC.EN cleared with I/O in flight", "[controller][hostile]") {
  Harness h;
  h.enable();
  h.create_pair(1, 2, 8);  // 2-entry CQ: room for one CQE
  h.submit_aer();
  for (int i = 0; i < 3; ++i) h.submit_io(1, Harness::read_cmd(uint64_t(i), 1, DATA));
  REQUIRE(h.ctrl.process_sq(1, 8) == 3);
  REQUIRE(h.env.submitted.size() == 3);
  const std::vector<IoRequest> old = h.env.submitted;
  // First posted, second waits for CQ room, third still in the backend.
  h.ctrl.complete_io(old[0].tag, 0);
  h.ctrl.complete_io(old[1].tag, 0);
  REQUIRE(h.ctrl.post_completions(1) == 1);
  REQUIRE(h.ctrl.cq_state(1).pending == 1);
  REQUIRE(h.ctrl.outstanding_io() == 1);
  const auto cqe_before = h.io_cqe(1, 1);

  // CC.EN 1 -> 0 together with a shutdown notification.
  const auto r = h.ctrl.bar0_write(reg::CC, (1u << 14), 4);
  CHECK(r.kind == Bar0WriteEffect::Reset);
  CHECK(h.ctrl.bar0_read(reg::CSTS, 4) == nvme::csts::SHST_COMPLETE);
  CHECK(h.ctrl.outstanding_io() == 0);
  CHECK(!h.ctrl.cq_state(1).exists);
  // The backend finishes late: ignored, nothing written anywhere.
  const uint64_t writes = h.env.dma_writes;
  h.ctrl.complete_io(old[2].tag, 0);
  h.ctrl.complete_io(old[1].tag, 0);
  CHECK(h.ctrl.post_completions(1) == 0);
  CHECK(h.ctrl.post_completions(0) == 0);
  CHECK(h.env.dma_writes == writes);
  CHECK(std::memcmp(&cqe_before, h.env.mem.data() + Harness::io_cq_base(1) + 16, 16) == 0);

  // Re-enable: fresh queues, no stale CQE, the old AER is gone, the old tags
  // stay dead even after their slots are reused.
  h.ctrl.bar0_write(reg::CC, 0, 4);  // clear SHN
  // The driver zeroes its queue memory before a new bring-up.
  std::memset(h.env.mem.data() + ACQ, 0, ADMIN_ENTRIES * 16);
  std::memset(h.env.mem.data() + Harness::io_cq_base(1), 0, 64);
  h.enable();
  CHECK(h.ctrl.bar0_read(reg::CSTS, 4) == nvme::csts::RDY);
  h.create_pair(1, 2, 8);
  for (const auto& req : old) h.ctrl.complete_io(req.tag, 0);
  CHECK(!h.ctrl.cq_has_pending(1));
  CHECK(h.env.r16(Harness::io_cq_base(1) + 14) == 0);
  h.ctrl.bar0_write(h.sq_db(5), 1, 4);  // an error event: no AER waits any more
  CHECK(!h.admin_cqe_ready());
  h.env.submitted.clear();
  check_io_works(h, 1);
  CHECK(h.io_cqe(1, 0).status == 1);  // first CQE of the new queue: phase 1, success
}

TEST_CASE("hostile: queue memory outside guest memory is fatal until a reset",
          "[controller][hostile]") {
  Harness h;
  h.enable();
  // CQ 1 beyond memory: the first CQE cannot be written.
  REQUIRE(field(h.admin(Harness::create_cq_cmd(1, 16, 0x7F000000ull, 1)).status) == 0);
  REQUIRE(field(h.admin(Harness::create_sq_cmd(1, 16, Harness::io_sq_base(1), 1)).status) == 0);
  h.submit_io(1, Harness::read_cmd(0, 1, DATA));
  REQUIRE(h.ctrl.process_sq(1, 8) == 1);
  h.ctrl.complete_io(h.env.submitted[0].tag, 0);
  CHECK(h.ctrl.post_completions(1) == 0);
  CHECK(h.ctrl.bar0_read(reg::CSTS, 4) == (nvme::csts::RDY | nvme::csts::CFS));
  // Fatal: doorbells, processing and posting stop (no event either).
  const uint64_t ae = h.ctrl.counters().async_events;
  CHECK(h.ctrl.bar0_write(h.sq_db(0), 1, 4).kind == Bar0WriteEffect::None);
  CHECK(h.ctrl.bar0_write(h.sq_db(9), 1, 4).kind == Bar0WriteEffect::None);
  CHECK(h.ctrl.process_sq(0, 8) == 0);
  CHECK(h.ctrl.counters().async_events == ae);
  // The host resets and brings the controller up again.
  CHECK(h.ctrl.bar0_write(reg::CC, 0, 4).kind == Bar0WriteEffect::Reset);
  h.enable();
  CHECK(h.ctrl.bar0_read(reg::CSTS, 4) == nvme::csts::RDY);
  h.env.submitted.clear();
  h.create_pair(1, 16, 16);
  check_io_works(h, 1);
}

// ---------------------------------------------------------------- whole platform
// The same faults reach the controller model through its BAR0 socket in the
// middle of a run: each raises its event, and the guest's I/O carries on to
// the end (no stall, no abort).
TEST_CASE("hostile: bad doorbell writes in a running SystemC platform", "[hostile][platform]") {
  platform::Config cfg;
  cfg.set("number_ios", "300");
  cfg.set("iodepth", "8");
  cfg.set("nvme.dbbuf", "off");
  cfg.validate_all();
  platform::System sys(cfg);
  auto& model = sys.controller();
  sc_core::sc_spawn([&model] {
    sc_core::wait(sc_core::sc_time(30, sc_core::SC_US));
    const std::pair<uint32_t, uint32_t> writes[] = {
        {nvme::sq_tail_doorbell(9, 0), 1},       // no queue 9
        {nvme::sq_tail_doorbell(1, 0), 0xFFFF},  // beyond the 1024-entry SQ
        {nvme::cq_head_doorbell(1, 0), 0xFFFF},  // beyond the CQ
    };
    for (const auto& [offset, value] : writes) {
      uint32_t v = value;
      tlm::tlm_generic_payload p;
      p.set_command(tlm::TLM_WRITE_COMMAND);
      p.set_address(offset);
      p.set_data_ptr(reinterpret_cast<unsigned char*>(&v));
      p.set_data_length(4);
      p.set_streaming_width(4);
      sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
      model.bar0_target.get_base_interface().b_transport(p, delay);
      CHECK(p.get_response_status() == tlm::TLM_OK_RESPONSE);
    }
  });
  const platform::RunResults r = sys.run();
  CHECK(!r.stalled);
  CHECK(r.count("ios") == 300);
  // The writes came during bring-up (30 us in): counted there, and not in the
  // measured phase, whose statistics start from zero.
  CHECK(r.bringup_stats.at("nvme.invalid_doorbell_writes") == 3);
  CHECK(r.stats.at("nvme.invalid_doorbell_writes") == 0);
  CHECK(model.firmware().counters().invalid_doorbell_writes == 0);
  CHECK(!model.firmware().fatal());
}
