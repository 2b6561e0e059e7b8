// Doorbell Buffer Config and the device's EventIdx policies.
#include "tests/firmware/test_controller_env.h"

using namespace ctltest;

namespace {
constexpr uint64_t SHADOW = 0x600000;
constexpr uint64_t EVENTIDX = 0x601000;
constexpr uint32_t SENTINEL = 0xA5A5A5A5u;

void fill_sentinel(TestEnv& env, uint64_t base) {
  for (uint32_t i = 0; i < 4096; i += 4) env.w32(base + i, SENTINEL);
}
void check_invalid_field(const nvme::CompletionEntry& e) { check_status(e, 0, 0x02, true); }
}  // namespace

TEST_CASE("dbbuf: config publishes tails and heads in the shadow buffer", "[controller][dbbuf]") {
  Harness h;
  h.enable();
  h.create_pair(1, 16, 16);
  h.create_pair(2, 16, 16);
  // SQ1 tail 2 (not yet processed), CQ1 head 0.
  h.place_io(1, Harness::read_cmd(0, 1, DATA));
  h.place_io(1, Harness::read_cmd(1, 1, DATA));
  h.ctrl.bar0_write(h.sq_db(1), 2, 4);
  fill_sentinel(h.env, SHADOW);
  fill_sentinel(h.env, EVENTIDX);
  const uint32_t admin_tail_at_config = h.asq_tail + 1;
  auto e = h.admin(dbbuf_cmd(SHADOW, EVENTIDX));
  REQUIRE(field(e.status) == 0);
  CHECK(h.ctrl.dbbuf_active());
  CHECK(h.ctrl.shadow_buffer_addr() == SHADOW);
  CHECK(h.ctrl.eventidx_buffer_addr() == EVENTIDX);
  // DSTRD 0: SQy tail at 8y, CQy head at 8y + 4.
  CHECK(h.env.r32(SHADOW + 8) == 2);   // SQ1 tail
  CHECK(h.env.r32(SHADOW + 12) == 0);  // CQ1 head
  CHECK(h.env.r32(SHADOW + 16) == 0);  // SQ2 tail
  CHECK(h.env.r32(SHADOW + 20) == 0);  // CQ2 head
  CHECK(h.env.r32(SHADOW + 24) == SENTINEL);  // no queue 3
  CHECK(h.env.r32(SHADOW + 0) == admin_tail_at_config);  // admin SQ (Spec covers qid 0)
  // The I/O EventIdx entries are left alone by the config itself.
  CHECK(h.env.r32(EVENTIDX + 8) == SENTINEL);
  CHECK(h.env.r32(EVENTIDX + 12) == SENTINEL);
  // The config command is an admin command: echo for the admin queue.
  CHECK(h.env.r32(EVENTIDX + 0) == admin_tail_at_config);
  CHECK(h.env.r32(EVENTIDX + 4) == h.acq_head - 1);  // head seen before posting its CQE
}

TEST_CASE("dbbuf: Invalid Field cases", "[controller][dbbuf]") {
  ControllerConfig c;
  c.guest_memory_bytes = 8u << 20;
  Harness h(c);
  h.enable();
  check_invalid_field(h.admin(dbbuf_cmd(0, EVENTIDX)));
  check_invalid_field(h.admin(dbbuf_cmd(SHADOW, 0)));
  check_invalid_field(h.admin(dbbuf_cmd(SHADOW, SHADOW)));
  check_invalid_field(h.admin(dbbuf_cmd(SHADOW + 0x800, EVENTIDX)));
  check_invalid_field(h.admin(dbbuf_cmd(SHADOW, EVENTIDX + 4)));
  check_invalid_field(h.admin(dbbuf_cmd(SHADOW, 8u << 20)));              // just outside
  check_invalid_field(h.admin(dbbuf_cmd(0x40000000ull, EVENTIDX)));       // far outside
  CHECK(!h.ctrl.dbbuf_active());
  CHECK(field(h.admin(dbbuf_cmd(SHADOW, (8u << 20) - 4096)).status) == 0);  // last page fits

  // Too small a page: 64 queues at stride 32 bytes need 130 * 32 = 4160 bytes.
  ControllerConfig big;
  big.dstrd = 3;
  Harness h2(big);
  h2.enable();
  check_invalid_field(h2.admin(dbbuf_cmd(SHADOW, EVENTIDX)));
  // With 8 KiB memory pages it fits.
  Harness h3(big);
  h3.enable(/*mps=*/1);
  CHECK(field(h3.admin(dbbuf_cmd(0x600000, 0x602000)).status) == 0);
  check_invalid_field(h3.admin(dbbuf_cmd(0x600000, 0x603000)));  // not 8 KiB aligned
}

TEST_CASE("dbbuf: a second config replaces the first, reset forgets", "[controller][dbbuf]") {
  Harness h;
  h.enable();
  h.create_pair(1, 16, 16);
  REQUIRE(field(h.admin(dbbuf_cmd(SHADOW, EVENTIDX)).status) == 0);
  const uint64_t S2 = 0x700000, E2 = 0x701000;
  REQUIRE(field(h.admin(dbbuf_cmd(S2, E2)).status) == 0);
  CHECK(h.ctrl.shadow_buffer_addr() == S2);
  CHECK(h.ctrl.eventidx_buffer_addr() == E2);
  h.env.w32(SHADOW + 8, 5);  // the old buffer is no longer read
  h.env.w32(S2 + 8, 1);
  h.place_io(1, Harness::read_cmd(0, 1, DATA));
  CHECK(h.ctrl.refresh_sq_tail_from_shadow(1));
  CHECK(h.ctrl.sq_state(1).tail == 1);
  REQUIRE(h.ctrl.process_sq(1, 8) == 1);
  CHECK(h.env.r32(E2 + 8) == 1);
  CHECK(h.env.r32(EVENTIDX + 8) == 0);

  h.ctrl.bar0_write(nvme::reg::CC, nvme::cc::make(false, 0), 4);
  CHECK(!h.ctrl.dbbuf_active());
  h.enable();
  h.create_pair(1, 16, 16);
  CHECK(!h.ctrl.dbbuf_active());
  h.env.w32(S2 + 8, 7);  // ignored: MMIO values rule again
  h.submit_io(1, Harness::read_cmd(0, 1, DATA));
  CHECK(h.ctrl.sq_state(1).tail == 1);
  const uint64_t reads = h.ctrl.counters().shadow_reads;
  CHECK(h.ctrl.process_sq(1, 8) == 1);
  CHECK(h.ctrl.counters().shadow_reads == reads);
}

TEST_CASE("dbbuf: echo policy writes EventIdx = consumed tail and head seen",
          "[controller][dbbuf]") {
  Harness h;
  h.enable();
  h.create_pair(1, 8, 8);
  REQUIRE(field(h.admin(dbbuf_cmd(SHADOW, EVENTIDX)).status) == 0);
  fill_sentinel(h.env, EVENTIDX);
  h.shadow = SHADOW;
  const uint64_t shadow_reads0 = h.ctrl.counters().shadow_reads,
                 eventidx_writes0 = h.ctrl.counters().eventidx_writes;
  const uint64_t barriers0 = h.env.barriers;
  for (int i = 0; i < 3; ++i) h.place_io(1, Harness::read_cmd(0, 1, DATA));
  h.env.w32(SHADOW + 8, 3);  // guest publishes tail 3 in the shadow only
  CHECK(h.ctrl.refresh_sq_tail_from_shadow(1));
  REQUIRE(h.ctrl.process_sq(1, 8) == 3);
  CHECK(h.env.r32(EVENTIDX + 8) == 3);
  // 1 refresh + 1 at the start + 1 after each of 3 commands.
  CHECK(h.ctrl.counters().shadow_reads - shadow_reads0 == 5);
  CHECK(h.ctrl.counters().eventidx_writes - eventidx_writes0 == 3);
  CHECK(h.env.barriers - barriers0 == 3);

  // The guest adds one more while the device works: re-read after each command.
  h.place_io(1, Harness::read_cmd(0, 1, DATA));
  h.env.w32(SHADOW + 8, 4);
  REQUIRE(h.ctrl.process_sq(1, 8) == 1);
  CHECK(h.env.r32(EVENTIDX + 8) == 4);

  // CQ: the guest consumed 2 of 3 posted CQEs, head 2 in the shadow only.
  for (int i = 0; i < 3; ++i) h.ctrl.complete_io(h.env.submitted[size_t(i)].tag, 0);
  CHECK(h.ctrl.post_completions(1) == 3);
  CHECK(h.env.r32(EVENTIDX + 12) == 0);  // head 0 before each of the 3 CQEs
  h.env.w32(SHADOW + 12, 2);
  h.ctrl.complete_io(h.env.submitted[3].tag, 0);
  CHECK(h.ctrl.post_completions(1) == 1);
  CHECK(h.ctrl.cq_state(1).head == 2);
  CHECK(h.env.r32(EVENTIDX + 12) == 0);  // EventIdx written before the re-read (QEMU order)
  // Next one: the device now echoes head 2.
  h.submit_io(1, Harness::read_cmd(0, 1, DATA));
  h.ctrl.process_sq(1, 8);
  h.ctrl.complete_io(h.env.submitted.back().tag, 0);
  h.ctrl.post_completions(1);
  CHECK(h.env.r32(EVENTIDX + 12) == 2);
}

TEST_CASE("dbbuf: CQ head from the shadow frees room in a full CQ", "[controller][dbbuf]") {
  Harness h;
  h.enable();
  h.create_pair(1, 4, 8);
  REQUIRE(field(h.admin(dbbuf_cmd(SHADOW, EVENTIDX)).status) == 0);
  h.shadow = SHADOW;
  for (int i = 0; i < 4; ++i) h.submit_io(1, Harness::read_cmd(0, 1, DATA));
  REQUIRE(h.ctrl.process_sq(1, 8) == 4);
  for (auto& r : h.env.submitted) h.ctrl.complete_io(r.tag, 0);
  CHECK(h.ctrl.post_completions(1) == 3);
  CHECK(h.ctrl.counters().cq_full_waits == 1);
  h.env.w32(SHADOW + 12, 1);  // no MMIO write: the shadow alone
  CHECK(h.ctrl.post_completions(1) == 1);
}

TEST_CASE("dbbuf: lag, park and never policies", "[controller][dbbuf]") {
  auto run = [](EventIdxPolicy sq_pol, EventIdxPolicy cq_pol, uint32_t& sq_ei, uint32_t& cq_ei,
                uint64_t& writes) {
    ControllerConfig c;
    c.sq_eventidx = sq_pol;
    c.cq_eventidx = cq_pol;
    Harness h(c);
    h.enable();
    h.create_pair(1, 8, 8);
    REQUIRE(field(h.admin(dbbuf_cmd(SHADOW, EVENTIDX)).status) == 0);
    fill_sentinel(h.env, EVENTIDX);
    h.shadow = SHADOW;
    const uint64_t w0 = h.ctrl.counters().eventidx_writes;
    for (int i = 0; i < 3; ++i) h.submit_io(1, Harness::read_cmd(0, 1, DATA));
    REQUIRE(h.ctrl.process_sq(1, 8) == 3);
    for (auto& r : h.env.submitted) h.ctrl.complete_io(r.tag, 0);
    REQUIRE(h.ctrl.post_completions(1) == 3);
    sq_ei = h.env.r32(EVENTIDX + 8);
    cq_ei = h.env.r32(EVENTIDX + 12);
    writes = h.ctrl.counters().eventidx_writes - w0;
  };
  uint32_t sq_ei = 0, cq_ei = 0;
  uint64_t writes = 0;
  run(EventIdxPolicy::Lag, EventIdxPolicy::Lag, sq_ei, cq_ei, writes);
  CHECK(sq_ei == 2);       // tail 3 - 1
  CHECK(cq_ei == 7);       // head 0 - 1 mod 8
  CHECK(writes == 6);
  run(EventIdxPolicy::Park, EventIdxPolicy::Park, sq_ei, cq_ei, writes);
  CHECK(sq_ei == 0xFFFFu);
  CHECK(cq_ei == 0xFFFFu);
  CHECK(writes == 2);      // once per queue
  run(EventIdxPolicy::Never, EventIdxPolicy::Never, sq_ei, cq_ei, writes);
  CHECK(sq_ei == SENTINEL);
  CHECK(cq_ei == SENTINEL);
  CHECK(writes == 0);
  run(EventIdxPolicy::Echo, EventIdxPolicy::Never, sq_ei, cq_ei, writes);  // vendor-like
  CHECK(sq_ei == 3);
  CHECK(cq_ei == SENTINEL);
  CHECK(writes == 3);

  // The parked index is crossed only when the guest's tail wraps.
  CHECK(!need_event_linux(0xFFFF, 7, 2));
  CHECK(need_event_linux(0xFFFF, 1, 6));
}

TEST_CASE("dbbuf: Ignore mode takes the tail from the shadow", "[controller][dbbuf]") {
  ControllerConfig c;
  c.dbbuf = DbbufMode::Vendor;
  c.pci_vendor_id = nvme::PCI_VENDOR_VENDOR_EXT;
  c.mmio_doorbell_value = MmioDoorbellValue::Ignore;
  c.cq_eventidx = EventIdxPolicy::Never;
  Harness h(c);
  h.enable();
  h.create_pair(1, 8, 8);
  fill_sentinel(h.env, SHADOW);
  auto e = h.admin(dbbuf_cmd(SHADOW, EVENTIDX, nvme::admin::VENDOR_DOORBELL_BUFFER_CONFIG));
  REQUIRE(field(e.status) == 0);
  CHECK(h.env.r32(SHADOW + 0) == SENTINEL);  // vendor: the admin queue is not covered
  CHECK(h.env.r32(SHADOW + 8) == 0);
  for (int i = 0; i < 2; ++i) h.place_io(1, Harness::read_cmd(0, 1, DATA));
  h.env.w32(SHADOW + 8, 2);
  auto eff = h.ctrl.bar0_write(h.sq_db(1), 1, 4);  // value ignored, still a wake-up
  CHECK(eff.kind == Bar0WriteEffect::SqDoorbell);
  CHECK(h.ctrl.sq_state(1).tail == 0);
  CHECK(h.ctrl.process_sq(1, 8) == 2);
  CHECK(h.ctrl.sq_state(1).head == 2);
  // CQ head MMIO value ignored too.
  for (auto& r : h.env.submitted) h.ctrl.complete_io(r.tag, 0);
  REQUIRE(h.ctrl.post_completions(1) == 2);
  h.ctrl.bar0_write(h.cq_db(1), 2, 4);
  CHECK(h.ctrl.cq_state(1).head == 0);
  // Admin queue keeps using MMIO values.
  nvme::SubmissionEntry abort{};
  abort.opcode = nvme::admin::ABORT;
  CHECK(h.admin(abort).dw0 == 1);
}

TEST_CASE("dbbuf: an untrusted shadow value raises an event and is ignored",
          "[controller][dbbuf]") {
  Harness h;
  h.enable();
  h.create_pair(1, 8, 8);
  REQUIRE(field(h.admin(dbbuf_cmd(SHADOW, EVENTIDX)).status) == 0);
  h.submit_aer();
  h.place_io(1, Harness::read_cmd(0, 1, DATA));
  h.ctrl.bar0_write(h.sq_db(1), 1, 4);
  h.env.w32(SHADOW + 8, 8);  // >= size
  const uint64_t inv = h.ctrl.counters().invalid_doorbell_writes;
  CHECK(h.ctrl.refresh_sq_tail_from_shadow(1));  // MMIO tail 1 kept: has work
  CHECK(h.ctrl.sq_state(1).tail == 1);
  CHECK(h.ctrl.counters().invalid_doorbell_writes == inv + 1);
  REQUIRE(h.admin_cqe_ready());
  CHECK(h.pop_admin_cqe().dw0 == 0x00010100u);
}

TEST_CASE("dbbuf: stride places the entries", "[controller][dbbuf]") {
  ControllerConfig c;
  c.dstrd = 1;  // 8-byte stride: SQ1 at 16, CQ1 at 24
  Harness h(c);
  h.enable();
  h.create_pair(1, 8, 8);
  REQUIRE(field(h.admin(dbbuf_cmd(SHADOW, EVENTIDX)).status) == 0);
  h.shadow = SHADOW;
  h.submit_io(1, Harness::read_cmd(0, 1, DATA));
  CHECK(h.env.r32(SHADOW + 16) == 1);
  REQUIRE(h.ctrl.process_sq(1, 8) == 1);
  CHECK(h.env.r32(EVENTIDX + 16) == 1);
  h.ctrl.complete_io(h.env.submitted[0].tag, 0);
  h.env.w32(EVENTIDX + 24, SENTINEL);
  REQUIRE(h.ctrl.post_completions(1) == 1);
  CHECK(h.env.r32(EVENTIDX + 24) == 0);
}
