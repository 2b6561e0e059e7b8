// Targeted interleavings of the real guest driver (fw::Driver) and the real
// controller (fw::Controller) over one guest memory, run synchronously: the
// test decides when the device runs, so each lost wake-up is a fixed
// sequence of steps rather than a timing accident.
#include <catch2/catch.hpp>

#include <cstring>
#include <functional>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "nvmesim/firmware/nvme/controller.h"
#include "nvmesim/firmware/guest/driver.h"
#include "nvmesim/firmware/nvme/eventidx.h"
#include "tests/firmware/test_controller_env.h"

using namespace nvmesim;
using namespace nvmesim::fw;

namespace {

constexpr uint64_t kMemBase = 0x10000;  // the driver's region (ASQ must not be 0)
constexpr uint16_t kQ = 1;

// Guest memory, the controller, and both environments. MMIO goes straight
// to Controller::bar0_write/bar0_read; doorbells only mark work, which runs
// when the test (or the driver's bring-up polling) lets the device run.
class Sim : public DriverEnv, public ControllerEnv {
 public:
  explicit Sim(const ControllerConfig& cc, size_t bytes = 4u << 20)
      : mem(bytes, 0), cfg(withmem(cc, bytes)), ctrl(cfg, *this) {}

  // ---- knobs
  // Model x86 store->load reordering: shadow stores sit in a store buffer
  // until full_barrier(), or until the EventIdx load has been performed.
  bool store_buffer = false;
  // At load_eventidx(): the load takes its value, then the device runs one
  // pass over the SQs it was told about, then buffered stores drain.
  bool device_runs_in_load_window = false;
  // Runs (once) when the controller hands a command to the backend: inside
  // its SQ pass, after the fetch and before the pass's EventIdx store.
  std::function<void()> on_backend_submit;

  // ---- records
  std::vector<std::string> device_log;  // ordered device DMA/barrier calls (when logging)
  bool log_device = false;
  std::vector<uint16_t> backend_cids;   // every command handed to the backend
  std::vector<uint32_t> backend_tags;   // not yet completed
  std::set<uint16_t> sq_work, cq_work;  // doorbells the device has not yet acted on

  // ---- helpers
  uint32_t r32(uint64_t a) const {
    uint32_t v;
    std::memcpy(&v, &mem.at(a), 4);
    return v;
  }
  uint64_t shadow_sq(const Driver& d) const { return d.shadow_buffer_addr() + dbbuf_sq_offset(kQ, 0); }
  uint64_t shadow_cq(const Driver& d) const { return d.shadow_buffer_addr() + dbbuf_cq_offset(kQ, 0); }
  uint64_t ei_sq(const Driver& d) const { return d.eventidx_buffer_addr() + dbbuf_sq_offset(kQ, 0); }
  uint64_t ei_cq(const Driver& d) const { return d.eventidx_buffer_addr() + dbbuf_cq_offset(kQ, 0); }

  // One pass over the SQs that were rung; no backend completion.
  void device_sq_pass() {
    const std::set<uint16_t> rung = sq_work;
    sq_work.clear();
    for (uint16_t q : rung) {
      ctrl.process_sq(q, 64);
      if (ctrl.sq_has_work(q)) sq_work.insert(q);
    }
  }
  // Run the device until it has nothing left it knows of: SQ passes, the
  // backend (instant) and completion posting.
  void run_device() {
    for (int guard = 0; guard < 1000; ++guard) {
      const bool work = !sq_work.empty() || !backend_tags.empty() || !cq_work.empty();
      if (!work) return;
      device_sq_pass();
      const std::vector<uint32_t> done = backend_tags;
      backend_tags.clear();
      std::set<uint16_t> cqs = cq_work;
      cq_work.clear();
      for (uint32_t t : done) ctrl.complete_io(t, 0);
      if (!done.empty()) cqs.insert(kQ);
      for (uint16_t q : cqs) ctrl.post_completions(q);
    }
    throw std::runtime_error("device did not settle");
  }

  // ---- DriverEnv
  uint8_t* guest_memory(uint64_t gpa, uint32_t len) override {
    if (gpa > mem.size() || mem.size() - gpa < len) throw std::runtime_error("gpa out of range");
    return &mem[gpa];
  }
  uint32_t mmio_read32(uint32_t off) override { return uint32_t(ctrl.bar0_read(off, 4)); }
  uint64_t mmio_read64(uint32_t off) override { return ctrl.bar0_read(off, 8); }
  void mmio_write32(uint32_t off, uint32_t v) override { effect(ctrl.bar0_write(off, v, 4)); }
  void mmio_write64(uint32_t off, uint64_t v) override { effect(ctrl.bar0_write(off, v, 8)); }
  void write_barrier() override {}  // x86: stores stay in order
  void full_barrier() override { drain(); }
  uint32_t load_shadow(uint64_t gpa) override {
    for (size_t i = pending_.size(); i-- > 0;)  // store-to-load forwarding
      if (pending_[i].first == gpa) return pending_[i].second;
    return r32(gpa);
  }
  void store_shadow(uint64_t gpa, uint32_t value) override {
    if (store_buffer)
      pending_.emplace_back(gpa, value);
    else
      std::memcpy(&mem[gpa], &value, 4);
  }
  uint32_t load_eventidx(uint64_t gpa) override {
    const uint32_t v = r32(gpa);
    if (device_runs_in_load_window) device_sq_pass();
    drain();
    return v;
  }
  void wait_ns(uint64_t) override { run_device(); }

  // ---- ControllerEnv
  bool dma_read(nvmesim::fw::DmaPurpose, uint64_t addr, void* dst, uint32_t len) override {
    if (addr > mem.size() || mem.size() - addr < len) return false;
    std::memcpy(dst, &mem[addr], len);
    if (log_device) device_log.push_back("load " + name(addr) + " = " + value(dst, len));
    return true;
  }
  bool dma_write(nvmesim::fw::DmaPurpose, uint64_t addr, const void* src, uint32_t len) override {
    if (addr > mem.size() || mem.size() - addr < len) return false;
    std::memcpy(&mem[addr], src, len);
    if (log_device) device_log.push_back("store " + name(addr) + " = " + value(src, len));
    return true;
  }
  void device_barrier() override {
    if (log_device) device_log.push_back("barrier");
  }
  void msix(uint16_t vector) override {
    if (log_device) device_log.push_back("msix " + std::to_string(vector));
  }
  void backend_submit(const IoRequest& req) override {
    backend_cids.push_back(req.cid);
    backend_tags.push_back(req.tag);
    if (log_device) device_log.push_back("backend cid " + std::to_string(req.cid));
    if (on_backend_submit) std::exchange(on_backend_submit, nullptr)();
  }

  // Names for the device log (set by the test once the driver has carved).
  uint64_t shadow_base = 0, eventidx_base = 0, sq_base = 0, cq_base = 0;

  std::vector<uint8_t> mem;
  ControllerConfig cfg;
  Controller ctrl;

 private:
  static ControllerConfig withmem(ControllerConfig c, size_t bytes) {
    c.guest_memory_bytes = bytes;
    return c;
  }
  void effect(const Bar0WriteEffect& e) {
    switch (e.kind) {
      case Bar0WriteEffect::SqDoorbell: sq_work.insert(e.qid); break;
      case Bar0WriteEffect::CqDoorbell: cq_work.insert(e.qid); break;
      case Bar0WriteEffect::EnableRequested: ctrl.complete_enable(); break;
      case Bar0WriteEffect::Reset:  // abandoned: the controller ignores them now
        sq_work.clear();
        cq_work.clear();
        backend_tags.clear();
        break;
      default: break;
    }
  }
  void drain() {
    for (const auto& [gpa, v] : pending_) std::memcpy(&mem[gpa], &v, 4);
    pending_.clear();
  }
  std::string name(uint64_t a) const {
    auto in = [&](uint64_t base, uint64_t len) { return base && a >= base && a < base + len; };
    if (in(shadow_base, 4096)) {
      const uint64_t i = (a - shadow_base) / 4;
      return std::string("shadow ") + (i % 2 ? "cq" : "sq") + std::to_string(i / 2);
    }
    if (in(eventidx_base, 4096)) {
      const uint64_t i = (a - eventidx_base) / 4;
      return std::string("eventidx ") + (i % 2 ? "cq" : "sq") + std::to_string(i / 2);
    }
    if (in(sq_base, 16 * 64)) return "sqe " + std::to_string((a - sq_base) / 64);
    if (in(cq_base, 16 * 16)) return "cqe " + std::to_string((a - cq_base) / 16);
    return "other";
  }
  static std::string value(const void* p, uint32_t len) {
    if (len != 4) return std::to_string(len) + " bytes";
    uint32_t v;
    std::memcpy(&v, p, 4);
    return std::to_string(v);
  }
  std::vector<std::pair<uint64_t, uint32_t>> pending_;
};

DriverConfig driver_config() {
  DriverConfig c;
  c.io_queues = 1;
  c.io_queue_entries = 16;
  c.max_outstanding_per_queue = 15;
  c.max_transfer_bytes = 4096;
  c.memory_base = kMemBase;
  c.memory_bytes = Driver::memory_needed(c, 4095, 0);
  return c;
}

IoSpec read_block(uint64_t lba) {
  IoSpec io;
  io.opcode = nvme::io::READ;
  io.slba = lba;
  io.nlb = 1;
  return io;
}

// Consume every posted completion and publish the CQ head.
unsigned reap_all(Driver& d) {
  Completion out[16];
  return d.reap(kQ, out, 16, nullptr);
}

// ---------------------------------------------------------------- reset
// Leaves the buffers holding SQ1 shadow tail 5 and SQ1 EventIdx 3: the
// device consumed 3 commands (echo wrote EventIdx 3) and was told of 2 more
// (MMIO tail 5) when the reset came. Returns the device's I/O command count.
uint64_t run_then_reset(Sim& s, Driver& d) {
  REQUIRE(d.bring_up().ok);
  REQUIRE(d.dbbuf_active());
  for (int i = 0; i < 3; ++i) REQUIRE(d.submit(kQ, read_block(i)) >= 0);
  const DoorbellUpdate a = d.ring_sq(kQ);
  REQUIRE(a.mmio);  // EventIdx 0 in [0, 3)
  s.run_device();
  REQUIRE(s.r32(s.ei_sq(d)) == 3);  // echo: the tail consumed
  REQUIRE(reap_all(d) == 3);
  for (int i = 3; i < 5; ++i) REQUIRE(d.submit(kQ, read_block(i)) >= 0);
  const DoorbellUpdate b = d.ring_sq(kQ);
  REQUIRE(b.mmio);  // EventIdx 3 in [3, 5)
  REQUIRE(s.r32(s.shadow_sq(d)) == 5);
  REQUIRE(s.r32(s.ei_sq(d)) == 3);
  // Reset before the device fetched commands 3 and 4.
  const BringUpResult r = d.reset_and_bring_up();
  REQUIRE(r.ok);
  REQUIRE(r.dbbuf_active);
  s.run_device();
  return s.ctrl.counters().io_commands;
}

}  // namespace

TEST_CASE("interleaving: stale buffers across a reset lose a wake-up unless zeroed",
          "[dbbuf][interleaving]") {
  ControllerConfig cc;
  SECTION("not zeroed: stale shadow 5 and EventIdx 3 make the driver skip the doorbell") {
    Sim s(cc);
    DriverConfig c = driver_config();
    c.zero_dbbuf_on_reset = false;
    Driver d(c, s);
    const uint64_t commands = run_then_reset(s, d);
    CHECK(s.r32(s.shadow_sq(d)) == 5);
    CHECK(s.r32(s.ei_sq(d)) == 3);
    REQUIRE(d.submit(kQ, read_block(7)) == 0);
    const DoorbellUpdate u = d.ring_sq(kQ);
    // need_event(3, new 1, old 5): 3 is not in [5, 1) cyclically (5..65535, 0).
    CHECK(u.via_shadow);
    CHECK(u.old_value == 5);
    CHECK(u.eventidx == 3);
    CHECK(u.suppressed);
    CHECK_FALSE(u.mmio);
    s.run_device();
    // The device never hears of the command: tail still 0, nothing fetched.
    CHECK(s.sq_work.empty());
    CHECK(s.ctrl.sq_state(kQ).tail == 0);
    CHECK(s.ctrl.sq_state(kQ).head == 0);
    CHECK_FALSE(s.ctrl.sq_has_work(kQ));
    CHECK(s.ctrl.counters().io_commands == commands);
    CHECK(d.sq_tail(kQ) == 1);
    CHECK(d.outstanding(kQ) == 1);
    CHECK(reap_all(d) == 0);
  }
  SECTION("not zeroed, Linux's order: the device re-publishes tail 0, the EventIdx stays stale") {
    Sim s(cc);
    DriverConfig c = driver_config();
    c.zero_dbbuf_on_reset = false;
    c.dbbuf_config_after_queues = true;
    Driver d(c, s);
    const uint64_t commands = run_then_reset(s, d);
    CHECK(s.r32(s.shadow_sq(d)) == 0);  // the config mirrored the new SQ's tail
    CHECK(s.r32(s.ei_sq(d)) == 3);
    REQUIRE(d.submit(kQ, read_block(7)) == 0);
    const DoorbellUpdate u = d.ring_sq(kQ);
    // need_event(3, new 1, old 0): 3 is not in [0, 1).
    CHECK(u.old_value == 0);
    CHECK(u.eventidx == 3);
    CHECK(u.suppressed);
    s.run_device();
    CHECK(s.ctrl.sq_state(kQ).tail == 0);
    CHECK(s.ctrl.counters().io_commands == commands);
    CHECK(d.outstanding(kQ) == 1);
  }
  SECTION("zeroed (default): the first update after the reset rings and completes") {
    Sim s(cc);
    Driver d(driver_config(), s);
    const uint64_t commands = run_then_reset(s, d);
    CHECK(s.r32(s.shadow_sq(d)) == 0);
    CHECK(s.r32(s.ei_sq(d)) == 0);
    REQUIRE(d.submit(kQ, read_block(7)) == 0);
    const DoorbellUpdate u = d.ring_sq(kQ);
    CHECK(u.old_value == 0);
    CHECK(u.eventidx == 0);
    CHECK(u.mmio);
    s.run_device();
    CHECK(s.ctrl.sq_state(kQ).head == 1);
    CHECK(s.ctrl.counters().io_commands == commands + 1);
    CHECK(reap_all(d) == 1);
    CHECK(d.outstanding(kQ) == 0);
  }
}

// ---------------------------------------------------------------- barrier
// Command 0 is rung by MMIO and not yet fetched. The driver publishes tail
// 2; between its EventIdx load and the moment its shadow store becomes
// visible, the device fetches command 0, writes EventIdx 1, re-reads the
// shadow and goes idle.
TEST_CASE("interleaving: the driver's full barrier decides whether a wake-up is lost",
          "[dbbuf][interleaving]") {
  ControllerConfig cc;
  const bool barrier = GENERATE(false, true);
  CAPTURE(barrier);
  Sim s(cc);
  DriverConfig c = driver_config();
  c.dbbuf_full_barrier = barrier;
  Driver d(c, s);
  REQUIRE(d.bring_up().ok);
  REQUIRE(d.dbbuf_active());
  s.store_buffer = true;
  s.device_runs_in_load_window = true;

  REQUIRE(d.submit(kQ, read_block(0)) == 0);
  const DoorbellUpdate first = d.ring_sq(kQ);
  REQUIRE(first.mmio);  // EventIdx 0 in [0, 1); the device was idle in the window
  REQUIRE(s.ctrl.sq_state(kQ).tail == 1);
  REQUIRE(s.ctrl.sq_state(kQ).head == 0);

  REQUIRE(d.submit(kQ, read_block(1)) >= 0);
  const DoorbellUpdate second = d.ring_sq(kQ);
  // Either way the load saw EventIdx 0, from before the device's pass.
  CHECK(second.old_value == 1);
  CHECK(second.new_value == 2);
  CHECK(second.eventidx == 0);
  CHECK(second.suppressed);
  CHECK(s.r32(s.shadow_sq(d)) == 2);
  if (!barrier) {
    // The device's re-read found the old tail 1 (the store was still
    // buffered): it echoed EventIdx 1 and went idle.
    CHECK(s.r32(s.ei_sq(d)) == 1);
    CHECK(s.ctrl.sq_state(kQ).head == 1);
    CHECK(s.ctrl.sq_state(kQ).tail == 1);
    CHECK(d.sq_tail(kQ) == 2);
    CHECK_FALSE(s.ctrl.sq_has_work(kQ));
    CHECK(s.sq_work.empty());
    // Whatever the device still does (complete command 0, post its CQE),
    // command 1 is never fetched.
    s.run_device();
    CHECK(reap_all(d) == 1);
    s.run_device();
    CHECK(s.ctrl.sq_state(kQ).head == 1);
    CHECK(s.ctrl.counters().io_commands == 1);
    CHECK(s.backend_cids == std::vector<uint16_t>{0});
    CHECK(d.outstanding(kQ) == 1);
  } else {
    // The store was visible before the load: the device's re-read saw 2.
    CHECK(s.r32(s.ei_sq(d)) == 2);
    CHECK(s.ctrl.sq_state(kQ).head == 2);
    CHECK(s.ctrl.counters().io_commands == 2);
    CHECK(s.backend_cids == std::vector<uint16_t>{0, 1});
    s.run_device();
    CHECK(reap_all(d) == 2);
    CHECK(d.outstanding(kQ) == 0);
  }
}

TEST_CASE("interleaving: the device stores the EventIdx, then barriers, then loads the shadow",
          "[dbbuf][interleaving]") {
  ControllerConfig cc;
  Sim s(cc);
  Driver d(driver_config(), s);
  REQUIRE(d.bring_up().ok);
  REQUIRE(d.dbbuf_active());
  s.shadow_base = d.shadow_buffer_addr();
  s.eventidx_base = d.eventidx_buffer_addr();
  s.sq_base = s.ctrl.sq_state(kQ).base;
  s.cq_base = s.ctrl.cq_state(kQ).base;
  REQUIRE(d.submit(kQ, read_block(0)) == 0);
  REQUIRE(d.submit(kQ, read_block(1)) == 1);
  REQUIRE(d.ring_sq(kQ).mmio);
  s.log_device = true;
  s.device_sq_pass();
  CHECK(s.device_log == std::vector<std::string>{
                            "load shadow sq1 = 2",  // the tail, first
                            "load sqe 0 = 64 bytes", "backend cid 0",
                            "store eventidx sq1 = 2", "barrier", "load shadow sq1 = 2",
                            "load sqe 1 = 64 bytes", "backend cid 1",
                            "store eventidx sq1 = 2", "barrier", "load shadow sq1 = 2"});
  s.device_log.clear();
  s.run_device();  // the backend completes both; the CQ is posted
  CHECK(s.device_log == std::vector<std::string>{
                            "store eventidx cq1 = 0", "barrier", "load shadow cq1 = 0",
                            "store cqe 0 = 16 bytes",
                            "store eventidx cq1 = 0", "barrier", "load shadow cq1 = 0",
                            "store cqe 1 = 16 bytes", "msix 1"});
}

// Controller::shadow_read_sq_tail's step code returning at once (the
// shadow never read): the mutation tests/platform/test_verify_mutation.cpp
// hands verify through the same seam.
namespace {
void sq_load_reads_nothing(DbbufQueue&, DbbufDeviceMemory&) {}
}  // namespace

// The firmware's order with the shadow re-read deleted, and the firmware's
// order with a shadow load that reads nothing: the mutations
// tests/platform/test_verify_mutation.cpp shows `nvmesim verify` catching.
TEST_CASE("interleaving: the shadow re-read after the SQ EventIdx store sees a tail published meanwhile, "
          "without it the wake-up is lost",
          "[dbbuf][interleaving]") {
  enum Variant { kFirmware, kNoReread, kLoadReadsNothing };
  DbbufStepCode reads_nothing = kDbbufStepCode;
  reads_nothing.load_shadow_sq_tail = sq_load_reads_nothing;
  for (const Variant v : {kFirmware, kNoReread, kLoadReadsNothing}) {
    INFO((v == kFirmware ? "the firmware's order" : v == kNoReread ? "the re-read deleted" : "the load reads nothing"));
    const bool reread = v == kFirmware;
    ControllerConfig cc;
    if (v == kNoReread) cc.dbbuf_order.sq = DbbufAccessOrder{{DbbufDeviceStep::StoreEventIdx, DbbufDeviceStep::Barrier}, 2};
    if (v == kLoadReadsNothing) cc.dbbuf_step_code = &reads_nothing;
    Sim s(cc);
    Driver d(driver_config(), s);
    REQUIRE(d.bring_up().ok);
    REQUIRE(d.dbbuf_active());
    REQUIRE(d.submit(kQ, read_block(0)) == 0);
    REQUIRE(d.ring_sq(kQ).mmio);  // EventIdx 0 in [0, 1)
    // While the device executes command 0, before its EventIdx store, the
    // driver submits command 1 and publishes tail 2: EventIdx 0 is not in
    // [1, 2), so no doorbell (the device will see the tail, it assumes).
    DoorbellUpdate second;
    s.on_backend_submit = [&] {
      REQUIRE(d.submit(kQ, read_block(1)) == 1);
      second = d.ring_sq(kQ);
    };
    s.device_sq_pass();
    CHECK(second.suppressed);
    CHECK_FALSE(second.mmio);
    CHECK(s.r32(s.shadow_sq(d)) == 2);
    if (reread) {
      CHECK(s.backend_cids == std::vector<uint16_t>{0, 1});  // the re-read found tail 2
      CHECK(s.ctrl.sq_state(kQ).head == 2);
      CHECK(s.r32(s.ei_sq(d)) == 2);
    } else {
      CHECK(s.backend_cids == std::vector<uint16_t>{0});
      CHECK(s.r32(s.ei_sq(d)) == 1);  // stored after the driver's load: too late
      CHECK(s.ctrl.sq_state(kQ).tail == 1);
      CHECK_FALSE(s.ctrl.sq_has_work(kQ));
      s.run_device();  // nothing wakes the device: command 1 waits for ever
      CHECK(s.backend_cids == std::vector<uint16_t>{0});
      CHECK(d.outstanding(kQ) == 2);
    }
  }
}

// ---------------------------------------------------------------- config checks
// tests/firmware/test_controller_dbbuf.cpp covers zero, equal, misaligned
// PRP1/PRP2, PRP2 just outside, PRP1 far outside and the too-small page;
// these are the cases it leaves out.
TEST_CASE("interleaving: Doorbell Buffer Config checks not covered elsewhere",
          "[dbbuf][controller]") {
  constexpr uint64_t kMem = 8u << 20, S = 0x600000, E = 0x601000;
  ControllerConfig c;
  c.guest_memory_bytes = kMem;
  auto invalid_field = [](const nvme::CompletionEntry& e) {
    CHECK(ctltest::field(e.status) == nvme::status_generic(nvme::sc::INVALID_FIELD));
    CHECK(ctltest::dnr(e.status));
  };
  SECTION("PRP1 just outside, PRP2 far outside") {
    ctltest::Harness h(c);
    h.enable();
    invalid_field(h.admin(ctltest::dbbuf_cmd(kMem, E)));
    invalid_field(h.admin(ctltest::dbbuf_cmd(S, 0x40000000ull)));
    CHECK_FALSE(h.ctrl.dbbuf_active());
  }
  SECTION("the vendor opcode 0xC0 applies the same checks") {
    c.dbbuf = DbbufMode::Vendor;
    ctltest::Harness h(c);
    h.enable();
    const uint8_t op = nvme::admin::VENDOR_DOORBELL_BUFFER_CONFIG;
    invalid_field(h.admin(ctltest::dbbuf_cmd(0, E, op)));
    invalid_field(h.admin(ctltest::dbbuf_cmd(S, S, op)));
    invalid_field(h.admin(ctltest::dbbuf_cmd(S + 8, E, op)));
    invalid_field(h.admin(ctltest::dbbuf_cmd(S, kMem, op)));
    CHECK_FALSE(h.ctrl.dbbuf_active());
    CHECK(ctltest::field(h.admin(ctltest::dbbuf_cmd(S, E, op)).status) == 0);
    CHECK(h.ctrl.dbbuf_active());
  }
  SECTION("a rejected second config leaves the first in place") {
    ctltest::Harness h(c);
    h.enable();
    REQUIRE(ctltest::field(h.admin(ctltest::dbbuf_cmd(S, E)).status) == 0);
    invalid_field(h.admin(ctltest::dbbuf_cmd(0x700000, 0x700800)));
    CHECK(h.ctrl.dbbuf_active());
    CHECK(h.ctrl.shadow_buffer_addr() == S);
    CHECK(h.ctrl.eventidx_buffer_addr() == E);
  }
  SECTION("too many queues for one page at stride 4: 1024 queues need 8200 bytes") {
    c.max_io_queues = 1024;
    c.msix_vectors = 1025;
    ctltest::Harness h(c);
    h.enable();
    invalid_field(h.admin(ctltest::dbbuf_cmd(S, E)));
    CHECK_FALSE(h.ctrl.dbbuf_active());
  }
}

// ---------------------------------------------------------------- small CQ
TEST_CASE("interleaving: an I/O CQ smaller than the SQ fills, waits and drains over laps",
          "[dbbuf][driver]") {
  ControllerConfig cc;
  Sim s(cc);
  DriverConfig c = driver_config();
  c.io_cq_entries = 4;
  c.memory_bytes = Driver::memory_needed(c, 4095, 0);
  Driver d(c, s);
  REQUIRE(d.bring_up().ok);
  CHECK(d.queue_entries() == 16);
  CHECK(d.cq_entries() == 4);
  CHECK(s.ctrl.cq_state(kQ).size == 4);
  CHECK(s.ctrl.sq_state(kQ).size == 16);
  for (int i = 0; i < 10; ++i) REQUIRE(d.submit(kQ, read_block(i)) >= 0);
  REQUIRE(d.ring_sq(kQ).mmio);
  s.run_device();
  // A 4-entry CQ holds 3 CQEs; 7 completions wait for room.
  CHECK(s.ctrl.cq_state(kQ).pending == 7);
  CHECK(s.ctrl.counters().cq_full_waits == 1);
  unsigned done = 0;
  for (int lap = 0; lap < 10 && done < 10; ++lap) {
    done += reap_all(d);  // echo: the CQ EventIdx follows the head, so each update rings
    s.run_device();
  }
  CHECK(done == 10);
  CHECK(d.outstanding(kQ) == 0);
  CHECK(d.cq_head(kQ) == 10 % 4);
  CHECK(s.ctrl.cq_state(kQ).pending == 0);
}

TEST_CASE("interleaving: io_cq_entries 1 is refused before the controller is touched",
          "[dbbuf][driver]") {
  ControllerConfig cc;
  Sim s(cc);
  DriverConfig c = driver_config();
  c.io_cq_entries = 1;
  Driver d(c, s);
  const BringUpResult r = d.bring_up();
  CHECK_FALSE(r.ok);
  CHECK(std::string(r.error) == "io_cq_entries must be 0 (as the SQ) or at least 2");
  CHECK_FALSE(s.ctrl.enabled());
}
