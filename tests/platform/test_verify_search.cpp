// nvmesim verify's search machinery: the packed state form is exact (every
// reachable state unpacks to the same bytes), and combinations that resolve
// to the same model give the same result, while different models stay apart.
#include <catch2/catch.hpp>

#include <cstring>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "nvmesim/platform/verify/canonical.h"
#include "nvmesim/platform/verify/packed_state.h"
#include "nvmesim/platform/verify/search.h"

using namespace nvmesim;
using namespace nvmesim::platform::verify;

namespace {

// Breadth-first over up to `limit` states with the model's own byte-wise
// identity (no packing), checking each state's round trip through the
// packed form. Returns the states visited.
size_t check_round_trips(const ModelConfig& c, size_t limit) {
  const StatePacker packer(c);
  std::map<std::string, bool> seen;
  std::deque<State> todo{make_initial(c)};
  seen[std::string(reinterpret_cast<const char*>(&todo.front()), sizeof(State))] = true;
  std::vector<Successor> next;
  size_t visited = 0;
  while (!todo.empty() && visited < limit) {
    const State s = todo.front();
    todo.pop_front();
    ++visited;
    const State back = packer.unpack(packer.pack(s));
    REQUIRE(std::memcmp(&back, &s, sizeof(State)) == 0);
    successors(s, c, next, false);
    for (const Successor& n : next) {
      if (n.violation != Property::None) continue;
      const std::string key(reinterpret_cast<const char*>(&n.state), sizeof(State));
      if (seen.emplace(key, true).second) todo.push_back(n.state);
    }
  }
  return visited;
}

}  // namespace

TEST_CASE("verify: every reachable state survives packing unchanged", "[verify]") {
  ModelConfig c;
  c.qsize = 3;
  c.commands = 4;
  // The whole clean space: as many states as the search counts (test_verify.cpp).
  CHECK(check_round_trips(c, 100000) == 4141);
  c.memory = MemoryModel::Arm;  // write-barrier epochs in the store buffer
  CHECK(check_round_trips(c, 100000) == 4365);
  c.memory = MemoryModel::X86;
  c.full_barrier = false;  // publishes without the mb() step
  c.device_order = DeviceOrder::StoreLoad;  // the device's pending EventIdx store
  c.sq_eventidx = fw::EventIdxPolicy::Park;  // parked EventIdx codes
  c.reset = ResetMode::Stale;
  check_round_trips(c, 100000);
  // The widest fields: an 8-entry ring, 64 I/Os, a reset's resubmissions.
  ModelConfig wide;
  wide.qsize = 8;
  wide.commands = kMaxCommands;
  wide.memory = MemoryModel::Arm;
  wide.reset = ResetMode::Zeroed;
  CHECK(check_round_trips(wide, 30000) == 30000);
}

TEST_CASE("verify: combinations with the same canonical model give the same result", "[verify]") {
  using fw::DbbufMode;
  using fw::EventIdxPolicy;
  const DbbufMode modes[] = {DbbufMode::Off, DbbufMode::Spec, DbbufMode::Vendor};
  const EventIdxPolicy policies[] = {EventIdxPolicy::Echo, EventIdxPolicy::Lag, EventIdxPolicy::Park,
                                     EventIdxPolicy::Never};
  const DeviceOrder orders[] = {DeviceOrder::StoreBarrierLoad, DeviceOrder::StoreLoad, DeviceOrder::LoadStore};
  std::map<std::string, SearchResult> first;
  size_t combinations = 0;
  for (uint16_t qid : {0, 1})
    for (DbbufMode mode : modes)
      for (bool admin_shadow : {false, true})
        for (EventIdxPolicy sq : policies)
          for (EventIdxPolicy cq : policies)
            for (auto mmio : {fw::MmioDoorbellValue::Use, fw::MmioDoorbellValue::Ignore})
              for (bool barrier : {false, true})
                for (auto form : {fw::NeedEventForm::Linux, fw::NeedEventForm::Inclusive})
                  for (DeviceOrder order : orders) {
                    ModelConfig c;
                    c.qsize = 2;
                    c.commands = 2;
                    c.qid = qid;
                    c.dbbuf = mode;
                    c.admin_shadow = admin_shadow;
                    c.sq_eventidx = sq;
                    c.cq_eventidx = cq;
                    c.mmio_doorbell_value = mmio;
                    c.full_barrier = barrier;
                    c.need_event = form;
                    c.device_order = order;
                    ++combinations;
                    const SearchResult r = search(c, 1000000);
                    auto [it, added] = first.emplace(model_key(c), r);
                    if (added) continue;
                    const SearchResult& a = it->second;
                    INFO(model_key(c));
                    REQUIRE(r.states == a.states);
                    REQUIRE(r.transitions == a.transitions);
                    REQUIRE(r.property == a.property);
                    REQUIRE(r.why == a.why);
                    REQUIRE(r.steps.size() == a.steps.size());
                    for (size_t i = 0; i < r.steps.size(); ++i) REQUIRE(r.steps[i].text == a.steps[i].text);
                  }
  CHECK(combinations == 4608);
  // Counted by hand: the I/O queue has 1 model without the buffer and
  // 4 * 4 * 2 * 2 * 2 * 3 = 384 with it (spec = vendor); the admin queue 1
  // without, 4 * 4 * 3 = 48 (spec, Linux's unshadowed admin queue) plus
  // 48 * 2 * 2 = 192 (spec, admin shadow), and 2 * 2 = 4 (vendor: the device
  // ignores the admin shadow the driver writes).
  CHECK(first.size() == 385 + 1 + 48 + 192 + 4);
}
