// nvmesim verify: the known doorbell-buffer bugs found with short traces,
// the correct protocol clean with an exact state count, a broken need_event
// caught, and the command's input/output conventions.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "nvmesim/platform/verify/search.h"
#include "run_binary.h"
#include "temp_file.h"

using namespace nvmesim;
using namespace nvmesim::platform::verify;

namespace {

// Exact figures of the bounded space (qsize 3, 4 I/Os; the CQ-never case:
// qsize 4, a 2-entry CQ). A change in the model's steps changes them; check
// the new counterexamples by reading them before updating a figure.
constexpr uint64_t STATES_DEFAULT_SMALL = 4141;
constexpr uint64_t STATES_ZEROED_SMALL = 9918;
constexpr uint64_t STATES_ARM_SMALL = 4365;
constexpr size_t STEPS_NO_BARRIER = 31;
constexpr size_t STEPS_CQ_NEVER = 50;
constexpr size_t STEPS_SQ_PARK = 54;
constexpr size_t STEPS_SQ_NEVER = 27;
constexpr size_t STEPS_STALE = 32;
constexpr size_t STEPS_BROKEN = 7;

ModelConfig small() {
  ModelConfig c;
  c.qsize = 3;
  c.commands = 4;
  return c;
}

SearchResult check(const ModelConfig& c) { return search(c, 20000000); }

bool mentions(const SearchResult& r, const std::string& text) {
  for (const Step& s : r.steps)
    if (s.text.find(text) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("verify: the default protocol is clean across the bounded space", "[verify]") {
  const SearchResult r = check(small());
  CHECK(r.property == Property::None);
  CHECK_FALSE(r.truncated);
  CHECK(r.states == STATES_DEFAULT_SMALL);
  CHECK(r.steps.empty());
}

TEST_CASE("verify: removing the full barrier loses a wake-up", "[verify]") {
  ModelConfig c = small();
  c.full_barrier = false;
  const SearchResult r = check(c);
  REQUIRE(r.property == Property::LostWakeup);
  CHECK(r.steps.size() == STEPS_NO_BARRIER);
  // The EventIdx load passed the buffered shadow store: the store becomes
  // visible only after the device re-read the shadow.
  CHECK(mentions(r, "(store buffer; old"));
  CHECK(mentions(r, "-> suppressed"));
  CHECK(r.path.size() == r.steps.size() + 1);
  // With the barrier the same bounds are clean (see the first test).
}

TEST_CASE("verify: a device that never writes the CQ EventIdx stalls a CQ smaller than the queue depth", "[verify]") {
  ModelConfig c = small();
  c.qsize = 4;
  c.cq_entries = 2;
  c.cq_eventidx = fw::EventIdxPolicy::Never;
  const SearchResult r = check(c);
  REQUIRE(r.property == Property::LostWakeup);
  CHECK(r.steps.size() == STEPS_CQ_NEVER);
  CHECK(r.why.find("CQ full") != std::string::npos);
  // The same CQ with the echo policy (QEMU 7.2's fix) completes every I/O.
  c.cq_eventidx = fw::EventIdxPolicy::Echo;
  CHECK(check(c).property == Property::None);
}

TEST_CASE("verify: an SQ EventIdx parked or never written loses a wake-up", "[verify]") {
  ModelConfig c = small();
  c.sq_eventidx = fw::EventIdxPolicy::Park;
  const SearchResult park = check(c);
  REQUIRE(park.property == Property::LostWakeup);
  CHECK(park.steps.size() == STEPS_SQ_PARK);
  CHECK(mentions(park, "store SQ EventIdx = 65535"));
  c.sq_eventidx = fw::EventIdxPolicy::Never;
  const SearchResult never = check(c);
  REQUIRE(never.property == Property::LostWakeup);
  CHECK(never.steps.size() == STEPS_SQ_NEVER);
}

TEST_CASE("verify: a doorbell buffer kept across a reset goes wrong, a cleared one does not", "[verify]") {
  ModelConfig c = small();
  c.reset = ResetMode::Stale;
  const SearchResult stale = check(c);
  REQUIRE(stale.property != Property::None);
  CHECK(stale.steps.size() == STEPS_STALE);
  CHECK(mentions(stale, "controller reset"));
  c.reset = ResetMode::Zeroed;
  const SearchResult zeroed = check(c);
  CHECK(zeroed.property == Property::None);
  CHECK(zeroed.states == STATES_ZEROED_SMALL);
}

namespace {
// Rings only when EventIdx lies strictly inside (old, new]: misses the
// update that moves exactly past EventIdx == old.
bool broken_need_event(uint16_t eventidx, uint16_t new_idx, uint16_t old_idx) {
  return uint16_t(new_idx - eventidx) < uint16_t(new_idx - old_idx);
}
}  // namespace

TEST_CASE("verify: a deliberately broken need_event is caught", "[verify]") {
  ModelConfig c = small();
  c.need_event_override = broken_need_event;
  const SearchResult r = check(c);
  REQUIRE(r.property == Property::LostWakeup);
  CHECK(r.steps.size() == STEPS_BROKEN);
}

TEST_CASE("verify: the vendor device ignores the admin shadow a driver writes", "[verify]") {
  ModelConfig c = small();
  c.qid = 0;
  c.dbbuf = fw::DbbufMode::Vendor;
  c.admin_shadow = true;
  CHECK(check(c).property == Property::LostWakeup);
  c.admin_shadow = false;  // Linux: the admin queue always rings
  CHECK(check(c).property == Property::None);
}

TEST_CASE("verify: a device that loads the shadow before storing EventIdx loses a wake-up", "[verify]") {
  ModelConfig c = small();
  c.device_order = DeviceOrder::LoadStore;
  CHECK(check(c).property == Property::LostWakeup);
  c.device_order = DeviceOrder::StoreLoad;
  CHECK(check(c).property == Property::LostWakeup);
}

TEST_CASE("verify: Arm store order is clean with the driver's barriers", "[verify]") {
  ModelConfig c = small();
  c.memory = MemoryModel::Arm;
  const SearchResult r = check(c);
  CHECK(r.property == Property::None);
  CHECK(r.states == STATES_ARM_SMALL);
}

TEST_CASE("verify command: result line, exit status, JSON, VCD", "[verify]") {
  const auto ok = test::run_nvmesim("verify --qsize 3 --commands 4 --time=off");
  CHECK(ok.exit_code == 0);
  CHECK(ok.out == "no violation in " + std::to_string(STATES_DEFAULT_SMALL) + " states\n");

  test::TempFile vcd("");
  const auto bad = test::run_nvmesim("verify --qsize 3 --commands 4 --time=off --guest.dbbuf_full_barrier=off --vcd " +
                                     vcd.path);
  CHECK(bad.exit_code == 1);
  CHECK(bad.out.rfind("violation: lost wake-up after " + std::to_string(STEPS_NO_BARRIER) + " steps", 0) == 0);
  CHECK(bad.out.find("\n   1. driver: store command #1 in SQ slot 0") != std::string::npos);
  std::ifstream in(vcd.path);
  std::stringstream text;
  text << in.rdbuf();
  CHECK(text.str().find("$var wire 32 ") != std::string::npos);
  CHECK(text.str().find(" shadow_sq_tail $end") != std::string::npos);
  CHECK(text.str().find(" sq_suppressed $end") != std::string::npos);

  const auto again = test::run_nvmesim("verify --qsize 3 --commands 4 --time=off --guest.dbbuf_full_barrier=off");
  CHECK(again.out == bad.out);  // deterministic

  const auto json = test::run_nvmesim(
      "verify --qsize 3 --commands 4 --time=off --output-format=json --guest.dbbuf_full_barrier=all");
  CHECK(json.exit_code == 1);
  const auto doc = nlohmann::json::parse(json.out);
  REQUIRE(doc["combinations"].size() == 2);
  CHECK(doc["combinations"][0]["settings"]["guest.dbbuf_full_barrier"] == "off");
  CHECK(doc["combinations"][0]["result"] == "violation");
  CHECK(doc["combinations"][0]["steps"].size() == STEPS_NO_BARRIER);
  CHECK(doc["combinations"][1]["result"] == "ok");
  CHECK(doc["combinations"][1]["states"] == STATES_DEFAULT_SMALL);
  CHECK(doc["violations"] == 1);
}

TEST_CASE("verify command: bad options name the option and the allowed values, exit 2", "[verify]") {
  const auto a = test::run_nvmesim("verify --nvme.sq_eventidx=sometimes");
  CHECK(a.exit_code == 2);
  CHECK(a.err == "nvmesim verify: error: --nvme.sq_eventidx: 'sometimes' is not one of echo, lag, park, never\n");
  const auto b = test::run_nvmesim("verify --qsize 9");
  CHECK(b.exit_code == 2);
  CHECK(b.err == "nvmesim verify: error: --qsize: '9' is out of range (2..8)\n");
  const auto c = test::run_nvmesim("verify --memory-model=sparc");
  CHECK(c.exit_code == 2);
  CHECK(c.err == "nvmesim verify: error: --memory-model: 'sparc' is not one of x86, arm (or all)\n");
  const auto d = test::run_nvmesim("verify --guest.io_cq_entries=16");
  CHECK(d.exit_code == 2);
  CHECK(d.err == "nvmesim verify: error: --guest.io_cq_entries: 16 is out of range for verify (0 = as the SQ, or 2..8)\n");
  const auto e = test::run_nvmesim("verify --guest.dbbuf_full_barrier=maybe");
  CHECK(e.exit_code == 2);
  CHECK(e.err.find("--guest.dbbuf_full_barrier: 'maybe'") != std::string::npos);
  CHECK(e.err.find('\n') == e.err.size() - 1);
}

TEST_CASE("verify command: the counterexample as a timeline, and the VCD's GTKWave save file beside it", "[verify]") {
  test::TempFile base("");
  const std::string vcd = base.path + ".vcd", gtkw = base.path + ".gtkw", timeline = base.path + ".json";
  const auto bad = test::run_nvmesim("verify --qsize 3 --commands 4 --time=off --guest.dbbuf_full_barrier=off --vcd " +
                                     vcd + " --timeline " + timeline);
  CHECK(bad.exit_code == 1);
  auto slurp = [](const std::string& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  };
  // The timeline: Chrome trace-event JSON with the simulator's track names
  // and the counterexample's doorbell events (one access per 10 ns).
  const auto doc = nlohmann::json::parse(slurp(timeline));
  REQUIRE(doc.contains("traceEvents"));
  bool suppressed = false;
  for (const auto& e : doc["traceEvents"])
    if (e.value("name", "") == "sq_suppressed") suppressed = true;
  CHECK(suppressed);  // the driver skipped the doorbell the device needed
  // The save file lists the VCD's vectors with their GTKWave ranges, and
  // opens on the whole counterexample.
  const std::string save = slurp(gtkw);
  CHECK(save.find("nvmesim.q1.shadow_sq_tail[31:0]") != std::string::npos);
  CHECK(save.find("nvmesim.vcpu0.state[1:0]") != std::string::npos);
  CHECK(save.find("[timestart] 0\n") != std::string::npos);
  for (const std::string& p : {vcd, gtkw, timeline}) std::remove(p.c_str());
}
