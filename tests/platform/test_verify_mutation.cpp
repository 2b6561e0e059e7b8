// verify walks the controller's own device steps (fw::DbbufDevicePass over
// ControllerConfig::dbbuf_order): a mutation of that order is a mutation of
// what verify explores. Deleting the shadow re-read after the SQ EventIdx
// store (the lost wake-up tests/firmware/test_dbbuf_interleavings.cpp shows
// on the real controller) must come back as a counterexample; the firmware's
// order, spelled out, must give the default's exact result.
#include <catch2/catch.hpp>

#include <sstream>
#include <string>

#include "nvmesim/firmware/nvme/controller.h"
#include "nvmesim/platform/verify/report.h"
#include "nvmesim/platform/verify/search.h"

using namespace nvmesim;
using namespace nvmesim::platform::verify;
using DevStep = fw::DbbufDeviceStep;

namespace {

// The bounded space of test_verify.cpp (qsize 3, 4 I/Os) and its figures.
constexpr uint64_t STATES_DEFAULT_SMALL = 4141;
// The shortest trace to the lost wake-up without the SQ re-read; a change
// in the model's steps changes it (read the new trace before updating).
constexpr size_t STEPS_NO_SQ_REREAD = 30;
constexpr size_t STEPS_NO_CQ_REREAD = 61;
constexpr size_t STEPS_SQ_LOAD_READS_NOTHING = 31;

ModelConfig small() {
  ModelConfig c;
  c.qsize = 3;
  c.commands = 4;
  return c;
}

bool mentions(const SearchResult& r, const std::string& text) {
  for (const Step& s : r.steps)
    if (s.text.find(text) != std::string::npos) return true;
  return false;
}

// What `nvmesim verify` prints for one search (without its time).
std::string printed(const ModelConfig& c, const SearchResult& r) {
  Checked run;
  run.config = c;
  run.result = r;
  std::ostringstream out;
  ReportOptions o;
  o.show_time = false;
  write_text(out, {run}, o, 0);
  return out.str();
}

}  // namespace

TEST_CASE("verify mutation: the controller's default order is the one verify explores", "[verify]") {
  // The controller's default, handed to verify as a mutation of nothing.
  const fw::DbbufDeviceOrder controller_order = fw::ControllerConfig{}.dbbuf_order;
  ModelConfig c = small();
  c.order_override = &controller_order;
  const SearchResult r = search(c, 20000000);
  CHECK(r.property == Property::None);
  CHECK(r.states == STATES_DEFAULT_SMALL);
}

TEST_CASE("verify mutation: the SQ shadow re-read deleted from the controller's order loses a wake-up",
          "[verify]") {
  fw::DbbufDeviceOrder mutated = fw::ControllerConfig{}.dbbuf_order;
  mutated.sq = fw::DbbufAccessOrder{{DevStep::StoreEventIdx, DevStep::Barrier}, 2};  // no LoadShadow
  ModelConfig c = small();
  c.order_override = &mutated;
  const SearchResult r = search(c, 20000000);
  REQUIRE(r.property == Property::LostWakeup);
  CHECK(r.steps.size() == STEPS_NO_SQ_REREAD);
  CHECK(r.path.size() == r.steps.size() + 1);
  // The driver loaded the SQ EventIdx before the device stored it, so its
  // doorbell was suppressed, and the device never looked at the shadow again.
  CHECK(mentions(r, "-> suppressed"));
  CHECK(mentions(r, "device: store SQ EventIdx = 1"));
  CHECK_FALSE(mentions(r, "device_barrier(), load shadow SQ tail"));
  CHECK(r.why.find("the device is idle") != std::string::npos);

  // What `nvmesim verify` prints for it.
  const std::string text = printed(c, r);
  CHECK(text.rfind("violation: lost wake-up after " + std::to_string(STEPS_NO_SQ_REREAD) + " steps", 0) == 0);
  CHECK(text.find("driver: store command #1 in SQ slot 0") != std::string::npos);
  INFO(text);
  CHECK(text.find("stalled with") != std::string::npos);
}

TEST_CASE("verify mutation: the CQ shadow re-read deleted leaves the device with a stale head and a full CQ",
          "[verify]") {
  fw::DbbufDeviceOrder mutated = fw::ControllerConfig{}.dbbuf_order;
  mutated.cq = fw::DbbufAccessOrder{{DevStep::StoreEventIdx, DevStep::Barrier}, 2};
  ModelConfig c = small();
  c.order_override = &mutated;
  const SearchResult r = search(c, 20000000);
  REQUIRE(r.property == Property::LostWakeup);
  CHECK(r.steps.size() == STEPS_NO_CQ_REREAD);
  CHECK(r.why.find("CQ full") != std::string::npos);
  CHECK_FALSE(mentions(r, "load shadow CQ head"));
}

// ------------------------------------------------------------ the step code
// verify executes the controller's own LoadShadow / StoreEventIdx code
// (fw::kDbbufStepCode, what Controller::shadow_read_sq_tail and
// apply_sq_eventidx call): a mutation of what a step does, handed to verify
// through its seam as it would be compiled into both, is a counterexample.
namespace {

// Controller::shadow_read_sq_tail returning at once: the shadow is never read.
void sq_load_reads_nothing(fw::DbbufQueue&, fw::DbbufDeviceMemory&) {}
// The SQ EventIdx one past the tail the device knows.
void sq_eventidx_one_ahead(fw::EventIdxPolicy policy, fw::DbbufQueue& sq, fw::DbbufDeviceMemory& memory) {
  const fw::EventIdxWrite w = fw::eventidx_update(policy, sq.tail, sq.size, sq.eventidx_parked);
  if (w.write) memory.store_eventidx((w.value + 1) % sq.size);
}
// The shadow CQ head taken one entry further than the driver published.
void cq_load_one_ahead(fw::DbbufQueue& cq, fw::DbbufDeviceMemory& memory) {
  uint32_t v = 0;
  if (!memory.load_shadow(v)) return;
  if (!fw::cq_head_acceptable(cq.size, cq.head, cq.tail, v)) {
    memory.invalid_shadow_value();
    return;
  }
  cq.head = (v + 1) % cq.size;
}

fw::DbbufStepCode with_sq_load(void (*load)(fw::DbbufQueue&, fw::DbbufDeviceMemory&)) {
  fw::DbbufStepCode code = fw::kDbbufStepCode;
  code.load_shadow_sq_tail = load;
  return code;
}

}  // namespace

TEST_CASE("verify mutation: the controller's step code, handed back to verify, gives the default's result",
          "[verify]") {
  const fw::DbbufStepCode code = fw::kDbbufStepCode;
  ModelConfig c = small();
  c.step_code_override = &code;
  const SearchResult r = search(c, 20000000);
  CHECK(r.property == Property::None);
  CHECK(r.states == STATES_DEFAULT_SMALL);
}

TEST_CASE("verify mutation: a shadow SQ tail load that reads nothing loses a wake-up", "[verify]") {
  const fw::DbbufStepCode mutated = with_sq_load(sq_load_reads_nothing);
  ModelConfig c = small();
  c.step_code_override = &mutated;
  const SearchResult r = search(c, 20000000);
  REQUIRE(r.property == Property::LostWakeup);
  CHECK(r.steps.size() == STEPS_SQ_LOAD_READS_NOTHING);
  CHECK(mentions(r, "no load of the shadow SQ tail"));
  CHECK_FALSE(mentions(r, "load shadow SQ tail ="));
  CHECK(mentions(r, "-> suppressed"));

  const std::string text = printed(c, r);
  INFO(text);
  CHECK(text.rfind("violation: lost wake-up after " + std::to_string(STEPS_SQ_LOAD_READS_NOTHING) + " steps", 0) ==
        0);
  CHECK(text.find("stalled with") != std::string::npos);
}

TEST_CASE("verify mutation: an SQ EventIdx one ahead of the device's tail claims an entry not submitted",
          "[verify]") {
  fw::DbbufStepCode mutated = fw::kDbbufStepCode;
  mutated.store_sq_eventidx = sq_eventidx_one_ahead;
  ModelConfig c = small();
  c.step_code_override = &mutated;
  const SearchResult r = search(c, 20000000);
  REQUIRE(r.property == Property::EventIdxAhead);
  CHECK(r.why.find("SQ EventIdx") != std::string::npos);
}

TEST_CASE("verify mutation: a shadow CQ head taken one entry too far makes the device see a full CQ",
          "[verify]") {
  fw::DbbufStepCode mutated = fw::kDbbufStepCode;
  mutated.load_shadow_cq_head = cq_load_one_ahead;
  ModelConfig c = small();
  c.step_code_override = &mutated;
  const SearchResult r = search(c, 20000000);
  INFO(r.why);
  // Head 0 taken as 1 with tail 0: "full" to the device, which then waits
  // for a CQ doorbell the driver, with nothing to consume, never rings.
  CHECK(r.property == Property::LostWakeup);
  CHECK(r.why.find("CQ head 1, tail 0, 2 completions held, CQ full") != std::string::npos);
  CHECK(mentions(r, "load shadow CQ head = 0 (device head 1)"));
}
