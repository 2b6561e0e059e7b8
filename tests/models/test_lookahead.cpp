// models/lookahead.h: whether another process may run within an offset,
// answered from what the kernel has pending, and kept within one activation
// only while the model notifies nothing.
#include <catch2/catch.hpp>

#include <vector>

#include "models/activations.h"
#include "models/lookahead.h"

using namespace sc_core;
namespace act = nvmesim::models::activations;
using nvmesim::models::activity_due_within;

namespace {
// One thread asks the lookahead around notifications of its own, and a
// second one has a wake-up pending at 10 us.
struct Probe : sc_module {
  sc_event later, sooner;
  std::vector<bool> answers;
  SC_HAS_PROCESS(Probe);
  explicit Probe(sc_module_name n) : sc_module(n) {
    SC_THREAD(sleeper);
    SC_THREAD(asker);
  }
  void sleeper() {
    act::begin(act::HostThread);
    act::wait(sc_time(10, SC_US));
  }
  void asker() {
    act::begin(act::VcpuThread);
    act::wait(sc_time(1, SC_US));  // the sleeper's wake-up at 10 us is pending now
    answers.push_back(activity_due_within(sc_time(5, SC_US)));   // nothing before 6 us
    answers.push_back(activity_due_within(sc_time(9, SC_US)));   // the wake-up at 10 us
    act::notify(sooner, sc_time(2, SC_US));                      // now something at 3 us
    answers.push_back(activity_due_within(sc_time(5, SC_US)));
    answers.push_back(activity_due_within(sc_time(1, SC_US)));   // not yet at 2 us
    act::wait(sc_time(4, SC_US));                                // at 5 us: 3 us has passed
    answers.push_back(activity_due_within(sc_time(4, SC_US)));   // 10 us is 5 us away
    act::notify(later, SC_ZERO_TIME);                            // a delta notification
    answers.push_back(activity_due_within(SC_ZERO_TIME));
  }
};
}  // namespace

TEST_CASE("lookahead: pending activity, including the model's own notifications in the same activation",
          "[lookahead]") {
  Probe p("p");
  sc_start();
  // Each answer as the kernel's own queues give it: a notification made
  // after an earlier answer changes the next one at once.
  REQUIRE(p.answers == std::vector<bool>{false, true, true, false, false, true});
}
