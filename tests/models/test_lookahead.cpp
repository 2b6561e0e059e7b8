// models/sim/lookahead.h: whether another process may run within an offset,
// answered from what the kernel has pending, and kept within one activation
// only while the model notifies nothing.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "nvmesim/models/sim/activations.h"
#include "nvmesim/models/sim/lookahead.h"

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

// The kept answer is exact only if the model notifies and cancels its events
// through activations::notify / cancel and waits through activations::wait:
// a bare call in a model would leave a stale answer standing.
TEST_CASE("lookahead: the model notifies, cancels and waits only through models/sim/activations.h", "[lookahead]") {
  const std::regex bare(R"((\.notify\(|\.cancel\(\)|(^|[^:_A-Za-z0-9])wait\(|sc_core::wait\())");
  std::vector<std::string> offending;
  for (const char* dir : {"models", "platform/system"}) {
    for (const auto& entry : std::filesystem::recursive_directory_iterator(std::string(NVMESIM_SOURCE_DIR) + "/" + dir)) {
      const std::string path = entry.path().string();
      if (path.size() < 2 || (path.substr(path.size() - 4) != ".cpp" && path.substr(path.size() - 2) != ".h")) continue;
      if (entry.path().filename() == "activations.h") continue;
      std::ifstream in(path);
      std::string line;
      for (unsigned n = 1; std::getline(in, line); ++n) {
        const std::string code = line.substr(0, line.find("//"));
        if (std::regex_search(code, bare) && code.find("activations::") == std::string::npos)
          offending.push_back(path + ":" + std::to_string(n) + ": " + line);
      }
    }
  }
  INFO("calls that bypass models/sim/activations.h:\n" << [&] {
    std::ostringstream s;
    for (const auto& o : offending) s << o << "\n";
    return s.str();
  }());
  CHECK(offending.empty());
}
