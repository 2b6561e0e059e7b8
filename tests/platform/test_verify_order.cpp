// The checker walks the controller's own order of shadow and EventIdx
// accesses (fw::DbbufDevicePass) and the driver's (fw::DbbufPublish), but
// keeps a copy of what the steps do around them (model.cpp device_steps,
// guest_steps, mmio_effect): the controller's process_sq / post_completions
// and write_doorbell run a whole burst in one call, with DMA, slots and the
// backend. Here the real fw::Controller and fw::Driver run the same scenario
// over one guest memory through a recording environment, and their accesses
// must equal the ones the model's steps stand for, for every EventIdx
// policy, MMIO value handling, CQ size and driver barrier.
#include <catch2/catch.hpp>

#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "nvmesim/firmware/nvme/controller.h"
#include "nvmesim/firmware/guest/driver.h"
#include "nvmesim/platform/verify/model.h"

using namespace nvmesim;
using namespace nvmesim::platform::verify;
using DevStep = nvmesim::fw::DbbufDeviceStep;

namespace {

constexpr uint64_t kMemBase = 0x10000;
constexpr uint16_t kQ = 1;
using Log = std::vector<std::string>;

std::string q(bool sq) { return sq ? "sq" : "cq"; }

// ---- The firmware side: one guest memory, the controller's DMA and the
// driver's doorbell-buffer accesses recorded in order; doorbells only note
// the effect, and the scenario decides when the device runs.
class Rig : public fw::DriverEnv, public fw::ControllerEnv {
 public:
  explicit Rig(const fw::ControllerConfig& cc) : mem(4u << 20, 0), cfg(with_memory(cc)), ctrl(cfg, *this) {}

  bool logging = false;
  Log device, driver;
  bool sq_kick = false, cq_kick = false;
  std::vector<uint32_t> backend_tags;
  uint64_t shadow = 0, eventidx = 0, sq_base = 0, cq_base = 0;

  // DriverEnv: stores visible at once (the model drains them before the
  // device acts in this scenario).
  uint8_t* guest_memory(uint64_t gpa, uint32_t len) override {
    if (gpa > mem.size() || mem.size() - gpa < len) throw std::runtime_error("gpa out of range");
    return &mem[gpa];
  }
  uint32_t mmio_read32(uint32_t off) override { return uint32_t(ctrl.bar0_read(off, 4)); }
  uint64_t mmio_read64(uint32_t off) override { return ctrl.bar0_read(off, 8); }
  void mmio_write32(uint32_t off, uint32_t v) override {
    if (logging && off == nvme::sq_tail_doorbell(kQ, 0)) driver.push_back("mmio sq = " + std::to_string(v));
    if (logging && off == nvme::cq_head_doorbell(kQ, 0)) driver.push_back("mmio cq = " + std::to_string(v));
    effect(ctrl.bar0_write(off, v, 4));
  }
  void mmio_write64(uint32_t off, uint64_t v) override { effect(ctrl.bar0_write(off, v, 8)); }
  void write_barrier() override { note(driver, "wmb"); }
  void full_barrier() override { note(driver, "mb"); }
  uint32_t load_shadow(uint64_t gpa) override {
    const uint32_t v = r32(gpa);
    note(driver, "load " + name(gpa) + " = " + std::to_string(v));
    return v;
  }
  void store_shadow(uint64_t gpa, uint32_t v) override {
    std::memcpy(&mem[gpa], &v, 4);
    note(driver, "store " + name(gpa) + " = " + std::to_string(v));
  }
  uint32_t load_eventidx(uint64_t gpa) override {
    const uint32_t v = r32(gpa);
    note(driver, "load " + name(gpa) + " = " + std::to_string(v));
    return v;
  }
  void wait_ns(uint64_t) override {  // bring-up: the device runs the admin queue
    ctrl.process_sq(0, 64);
  }

  // ControllerEnv.
  bool dma_read(nvmesim::fw::DmaPurpose, uint64_t addr, void* dst, uint32_t len) override {
    if (addr > mem.size() || mem.size() - addr < len) return false;
    std::memcpy(dst, &mem[addr], len);
    note(device, "load " + name(addr) + (len == 4 ? " = " + std::to_string(r32(addr)) : ""));
    return true;
  }
  bool dma_write(nvmesim::fw::DmaPurpose, uint64_t addr, const void* src, uint32_t len) override {
    if (addr > mem.size() || mem.size() - addr < len) return false;
    std::memcpy(&mem[addr], src, len);
    note(device, "store " + name(addr) + (len == 4 ? " = " + std::to_string(r32(addr)) : ""));
    return true;
  }
  void device_barrier() override { note(device, "barrier"); }
  void msix(uint16_t) override { note(device, "msix"); }
  void backend_submit(const fw::IoRequest& req) override { backend_tags.push_back(req.tag); }

  uint32_t r32(uint64_t a) const {
    uint32_t v;
    std::memcpy(&v, &mem[a], 4);
    return v;
  }

  std::vector<uint8_t> mem;
  fw::ControllerConfig cfg;
  fw::Controller ctrl;

 private:
  fw::ControllerConfig with_memory(fw::ControllerConfig c) const {
    c.guest_memory_bytes = mem.size();
    return c;
  }
  void note(Log& log, const std::string& what) {
    if (logging) log.push_back(what);
  }
  void effect(const fw::Bar0WriteEffect& e) {
    if (e.kind == fw::Bar0WriteEffect::SqDoorbell && e.qid == kQ) sq_kick = true;
    if (e.kind == fw::Bar0WriteEffect::CqDoorbell && e.qid == kQ) cq_kick = true;
    if (e.kind == fw::Bar0WriteEffect::EnableRequested) ctrl.complete_enable();
  }
  std::string name(uint64_t a) const {
    if (shadow && a == shadow + fw::dbbuf_sq_offset(kQ, 0)) return "shadow sq";
    if (shadow && a == shadow + fw::dbbuf_cq_offset(kQ, 0)) return "shadow cq";
    if (eventidx && a == eventidx + fw::dbbuf_sq_offset(kQ, 0)) return "eventidx sq";
    if (eventidx && a == eventidx + fw::dbbuf_cq_offset(kQ, 0)) return "eventidx cq";
    if (sq_base && a >= sq_base && a < sq_base + 8 * nvme::SQE_SIZE)
      return "sqe " + std::to_string((a - sq_base) / nvme::SQE_SIZE);
    if (cq_base && a >= cq_base && a < cq_base + 8 * nvme::CQE_SIZE)
      return "cqe " + std::to_string((a - cq_base) / nvme::CQE_SIZE);
    return "other " + std::to_string(a);
  }
};

// ---- The model side: takes the step of a given kind, and writes down the
// accesses the model's copy says it stands for.
class ModelRun {
 public:
  explicit ModelRun(const ModelConfig& c) : c_(c), s_(make_initial(c)) {}
  Log device, driver;
  const State& state() const { return s_; }

  bool take(StepKind kind, int sq = -1) {
    successors(s_, c_, next_, false);
    for (const Successor& n : next_) {
      if (n.step.kind != kind || (sq >= 0 && n.step.sq != bool(sq))) continue;
      REQUIRE(n.violation == Property::None);
      record(n);
      s_ = n.state;
      return true;
    }
    return false;
  }
  bool enabled(StepKind kind) {
    successors(s_, c_, next_, false);
    for (const Successor& n : next_)
      if (n.step.kind == kind) return true;
    return false;
  }
  void drain_all() {
    while (take(StepKind::Drain)) {
    }
  }
  // Takes steps of these kinds, first enabled first, until none is enabled.
  void run(std::initializer_list<StepKind> kinds) {
    for (bool more = true; more;) {
      more = false;
      for (StepKind k : kinds)
        if (take(k)) {
          more = true;
          break;
        }
    }
  }

 private:
  void record(const Successor& n) {
    const State& s = s_;
    const State& t = n.state;
    const bool sq = n.step.sq;
    switch (n.step.kind) {
      case StepKind::StoreShadow: publish_start(true, t); break;
      case StepKind::LoadCqe:
        if (t.cq_published != s.cq_published && covers_shadow()) publish_start(false, t);
        break;
      case StepKind::LoadEventIdx:
        if (c_.full_barrier) driver.push_back("mb");
        driver.push_back("load eventidx " + q(sq) + " = " + std::to_string(sq ? s.eventidx_sq : s.eventidx_cq));
        break;
      case StepKind::MmioDoorbell: driver.push_back("mmio " + q(sq) + " = " + std::to_string(n.step.arg)); break;
      case StepKind::DevStartBurst:
      case StepKind::DevStartPosting:
      case StepKind::DevFetch:
      case StepKind::DevWriteEventIdx:
      case StepKind::DevReadShadow:
      case StepKind::DevWriteCqe: device_walk(n); break;
      case StepKind::DevMsix: device.push_back("msix"); break;
      default: break;
    }
  }
  // A device step: the access it makes, then the moves the model folds into
  // it (a store the policy skips, a barrier) up to where the device stops,
  // walked on the same cursor the model and the controller walk.
  void device_walk(const Successor& n) {
    const State& s = s_;
    const State& t = n.state;
    const fw::DbbufDeviceOrder order = device_access_order(c_);
    fw::DbbufDevicePass p = n.step.kind == StepKind::DevStartPosting
                                ? fw::DbbufDevicePass::cq_post(order)
                                : fw::DbbufDevicePass::sq_pass(device_covers(), order);
    if (n.step.kind != StepKind::DevStartBurst && n.step.kind != StepKind::DevStartPosting)
      REQUIRE(device_pass(s, c_, p));
    if (n.step.kind == StepKind::DevStartBurst && p.step() != DevStep::LoadShadow) return;  // no access
    fw::DbbufDevicePass at_end = p;
    const bool stops_inside = device_pass(t, c_, at_end);
    for (bool first = true;; first = false) {
      if (!first && stops_inside && at_end.sq() == p.sq() && at_end.position() == p.position()) return;
      switch (p.step()) {
        case DevStep::LoadShadow:
          REQUIRE(first);
          device.push_back("load shadow " + q(p.sq()) + " = " + std::to_string(p.sq() ? s.shadow_sq : s.shadow_cq));
          break;
        case DevStep::FetchSqe:
          if (!first) return;  // the pass ended here
          device.push_back("load sqe " + std::to_string(n.step.arg));
          break;
        case DevStep::StoreEventIdx:
          if (first) {
            const uint16_t v = t.dev_store_pending ? t.dev_store_value : p.sq() ? t.eventidx_sq : t.eventidx_cq;
            device.push_back("store eventidx " + q(p.sq()) + " = " + std::to_string(v));
          }  // else the policy writes nothing
          break;
        case DevStep::Barrier: device.push_back("barrier"); break;
        case DevStep::CqePending:
          if (t.held == 0) return;  // posting ended
          break;
        case DevStep::WriteCqe:
          if (!first) return;  // the CQ is full
          device.push_back("store cqe " + std::to_string(n.step.arg));
          break;
        default: return;
      }
      p.advance(device_covers());
    }
  }
  void publish_start(bool sq, const State& t) {
    driver.push_back("wmb");
    driver.push_back("load shadow " + q(sq) + " = " + std::to_string(t.publish.old_value()));
    driver.push_back("store shadow " + q(sq) + " = " + std::to_string(t.publish.new_value()));
  }
  bool device_covers() const { return fw::device_dbbuf_covers(c_.dbbuf != fw::DbbufMode::Off, c_.dbbuf, 1); }
  bool covers_shadow() const { return fw::driver_uses_shadow(c_.dbbuf != fw::DbbufMode::Off, false, 1); }

  ModelConfig c_;
  State s_;
  std::vector<Successor> next_;
};

struct Case {
  fw::DbbufMode dbbuf;
  fw::EventIdxPolicy sq, cq;
  fw::MmioDoorbellValue mmio;
  bool barrier;
  uint32_t cq_entries;
};

// Rounds of `batches[i]` commands: submit, publish the SQ tail, one device
// burst, completions posted, the interrupt handler consumes and publishes
// the CQ head, posting again on a CQ doorbell; checked after every doorbell
// and at the end. `late_interrupt`: the handler of a round's interrupt runs
// after the next round's burst, so the CQ doorbell finds completions
// waiting in a CQ that is not full. `one_per_burst`: the device ends each
// burst after one command and reschedules itself (process_sq's budget 1;
// the model's choice to stop a burst with work left).
void run_case(const Case& k, std::initializer_list<unsigned> batches, bool late_interrupt, bool one_per_burst,
              const fw::DbbufDeviceOrder& order = fw::DbbufDeviceOrder{}) {
  constexpr uint32_t kEntries = 4;
  ModelConfig mc;
  mc.qsize = kEntries;
  mc.cq_entries = k.cq_entries;
  mc.commands = 0;
  for (unsigned b : batches) mc.commands += b;
  mc.dbbuf = k.dbbuf;
  mc.sq_eventidx = k.sq;
  mc.cq_eventidx = k.cq;
  mc.mmio_doorbell_value = k.mmio;
  mc.full_barrier = k.barrier;
  mc.order_override = &order;
  ModelRun model(mc);

  fw::ControllerConfig cc;
  cc.dbbuf = k.dbbuf;
  cc.sq_eventidx = k.sq;
  cc.cq_eventidx = k.cq;
  cc.mmio_doorbell_value = k.mmio;
  cc.dbbuf_order = order;
  Rig rig(cc);
  fw::DriverConfig dc;
  dc.io_queues = 1;
  dc.io_queue_entries = kEntries;
  dc.io_cq_entries = k.cq_entries;
  dc.max_outstanding_per_queue = kEntries - 1;
  dc.max_transfer_bytes = 4096;
  dc.dbbuf_full_barrier = k.barrier;
  dc.memory_base = kMemBase;
  dc.memory_bytes = fw::Driver::memory_needed(dc, 4095, 0);
  fw::Driver driver(dc, rig);
  REQUIRE(driver.bring_up().ok);
  REQUIRE(driver.dbbuf_active() == (k.dbbuf != fw::DbbufMode::Off));
  rig.shadow = driver.dbbuf_active() ? driver.shadow_buffer_addr() : 0;
  rig.eventidx = driver.dbbuf_active() ? driver.eventidx_buffer_addr() : 0;
  rig.sq_base = rig.ctrl.sq_state(kQ).base;
  rig.cq_base = rig.ctrl.cq_state(kQ).base;
  rig.logging = true;

  // After a doorbell: the device's view and whether it was woken agree.
  auto same_device_view = [&] {
    CHECK(rig.ctrl.sq_state(kQ).tail == model.state().dev_sq_tail);
    CHECK(rig.ctrl.cq_state(kQ).head == model.state().dev_cq_head);
    CHECK(rig.sq_kick == bool(model.state().sq_kick));
    CHECK(rig.cq_kick == bool(model.state().cq_kick));
  };

  unsigned reaped = 0;
  auto interrupt_handler = [&] {
    model.run({StepKind::LoadCqe});
    model.drain_all();
    model.take(StepKind::LoadEventIdx, 0);
    model.take(StepKind::MmioDoorbell, 0);
    fw::Completion out[8];
    reaped += driver.reap(kQ, out, 8, nullptr);
    same_device_view();
  };
  bool deferred = false;
  size_t round = 0;
  for (unsigned batch : batches) {
    const bool last = ++round == batches.size();
    // Submit and publish the SQ tail.
    // (After a stall both sides refuse new commands: the tags are taken.)
    for (unsigned i = 0; i < batch; ++i) {
      fw::IoSpec io;
      io.slba = i;
      const bool accepted = model.take(StepKind::Submit);
      REQUIRE(accepted == (driver.submit(kQ, io) >= 0));
      if (!accepted) break;
    }
    model.drain_all();
    model.take(StepKind::StoreShadow, 1);
    model.drain_all();
    model.take(StepKind::LoadEventIdx, 1);
    model.take(StepKind::MmioDoorbell, 1);
    driver.ring_sq(kQ);
    same_device_view();
    // Bursts until the device has nothing it knows of; the null backend
    // completes everything.
    if (!one_per_burst) {
      if (model.take(StepKind::DevStartBurst))
        model.run({StepKind::DevDrain, StepKind::DevFetch, StepKind::DevWriteEventIdx, StepKind::DevReadShadow});
      if (rig.sq_kick) {
        rig.sq_kick = false;
        rig.ctrl.process_sq(kQ, 64);
      }
    } else {
      while (model.take(StepKind::DevStartBurst)) {
        if (!model.take(StepKind::DevFetch)) continue;  // nothing the device knows of
        model.run({StepKind::DevDrain, StepKind::DevWriteEventIdx, StepKind::DevReadShadow});
        model.take(StepKind::DevDrain);
        model.take(StepKind::DevStopBurst);
      }
      while (rig.sq_kick) {
        rig.sq_kick = false;
        rig.ctrl.process_sq(kQ, 1);
        if (rig.ctrl.sq_has_work(kQ)) rig.sq_kick = true;  // the device reschedules itself
      }
    }
    bool post = !rig.backend_tags.empty();
    for (uint32_t tag : rig.backend_tags) rig.ctrl.complete_io(tag, 0);
    rig.backend_tags.clear();
    if (deferred) {
      REQUIRE(model.take(StepKind::TakeInterrupt));
      interrupt_handler();
      deferred = false;
    }
    // Posting runs and interrupt handlers until neither side moves.
    for (int guard = 0; guard < 16; ++guard) {
      const bool model_posts = model.take(StepKind::DevStartPosting);
      REQUIRE(model_posts == (post || rig.cq_kick));
      if (!model_posts) break;
      model.run({StepKind::DevDrain, StepKind::DevWriteEventIdx, StepKind::DevReadShadow, StepKind::DevWriteCqe,
                 StepKind::DevMsix});
      rig.cq_kick = false;
      const size_t msix_before = rig.device.size();
      rig.ctrl.post_completions(kQ);
      post = false;
      const bool model_irq = model.enabled(StepKind::TakeInterrupt);
      const bool rig_irq = rig.device.size() > msix_before && rig.device.back() == "msix";
      REQUIRE(model_irq == rig_irq);
      if (!model_irq) continue;
      if (late_interrupt && !last) {
        deferred = true;
        break;
      }
      model.take(StepKind::TakeInterrupt);
      interrupt_handler();
    }
    REQUIRE(model.device == rig.device);
    REQUIRE(model.driver == rig.driver);
  }
  CHECK(model.state().completed == reaped);
  CHECK(unsigned(model.state().next_seq - model.state().expect_seq) == driver.outstanding(kQ));
}

}  // namespace

TEST_CASE("verify: the model's order of shadow and EventIdx accesses is the firmware's", "[verify]") {
  using fw::EventIdxPolicy;
  const EventIdxPolicy policies[] = {EventIdxPolicy::Echo, EventIdxPolicy::Lag, EventIdxPolicy::Park,
                                     EventIdxPolicy::Never};
  unsigned cases = 0;
  for (fw::DbbufMode dbbuf : {fw::DbbufMode::Off, fw::DbbufMode::Spec})
    for (EventIdxPolicy sq : policies)
      for (EventIdxPolicy cq : policies)
        for (auto mmio : {fw::MmioDoorbellValue::Use, fw::MmioDoorbellValue::Ignore})
          for (bool barrier : {false, true})
            for (uint32_t cq_entries : {4u, 2u}) {
              const Case k{dbbuf, sq, cq, mmio, barrier, cq_entries};
              INFO("dbbuf " << to_string(dbbuf) << ", sq " << to_string(sq) << ", cq " << to_string(cq) << ", mmio "
                            << to_string(mmio) << ", barrier " << barrier << ", CQ " << cq_entries);
              // Laps of a 4-entry ring: 3 + 2 + 3 commands wrap both queues.
              run_case(k, {3, 2, 3}, false, false);
              run_case(k, {1, 2, 2, 1}, true, false);
              run_case(k, {3, 2, 3}, false, true);
              ++cases;
            }
  CHECK(cases == 256);
}

TEST_CASE("verify: the model's accesses are the controller's for other device orders too", "[verify]") {
  // verify's --device-order choices and the re-reads deleted, each run by
  // the controller (ControllerConfig::dbbuf_order) and the model alike.
  using fw::DbbufAccessOrder;
  const DbbufAccessOrder store_load{{DevStep::StoreEventIdx, DevStep::LoadShadow}, 2};
  const DbbufAccessOrder load_store{{DevStep::LoadShadow, DevStep::StoreEventIdx, DevStep::Barrier}, 3};
  const DbbufAccessOrder no_reread{{DevStep::StoreEventIdx, DevStep::Barrier}, 2};
  const DbbufAccessOrder firmware = fw::kEventIdxBarrierReread;
  const fw::DbbufDeviceOrder orders[] = {{store_load, store_load}, {load_store, load_store}, {no_reread, firmware},
                                         {firmware, no_reread}};
  using fw::EventIdxPolicy;
  unsigned cases = 0;
  for (const fw::DbbufDeviceOrder& order : orders)
    for (EventIdxPolicy sq : {EventIdxPolicy::Echo, EventIdxPolicy::Park, EventIdxPolicy::Never})
      for (EventIdxPolicy cq : {EventIdxPolicy::Echo, EventIdxPolicy::Lag, EventIdxPolicy::Never})
        for (uint32_t cq_entries : {4u, 2u}) {
          const Case k{fw::DbbufMode::Spec, sq, cq, fw::MmioDoorbellValue::Use, true, cq_entries};
          INFO("order " << cases / 18 << ", sq " << to_string(sq) << ", cq " << to_string(cq) << ", CQ " << cq_entries);
          run_case(k, {3, 2, 3}, false, false, order);
          run_case(k, {1, 2, 2, 1}, true, false, order);
          run_case(k, {3, 2, 3}, false, true, order);
          ++cases;
        }
  CHECK(cases == 72);
}
