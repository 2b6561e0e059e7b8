// Settings that would silently do nothing: refused when the results would
// mislead (a fault that cannot happen, a verify that cannot pass), warned
// about once otherwise, through the binary.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "tests/platform/run_binary.h"
#include "tests/platform/test_sweep_support.h"

using nvmesim::test::check_refused;
using nvmesim::test::run_nvmesim;
using nvmesim::test::ScratchDir;

TEST_CASE("param requirements: a setting whose dependency is missing is refused", "[cli][requires]") {
  struct Case {
    std::string args, error;
  };
  const std::vector<Case> table = {
      {"--hv.fault=eventfd_spin",
       "--hv.fault: eventfd_spin needs hv.notify ioeventfd (it is deferred: no eventfd exists to fault)"},
      {"--hv.fault=eventfd_not_cleared --hv.notify=timer",
       "--hv.fault: eventfd_not_cleared needs hv.notify ioeventfd (it is timer: no eventfd exists to fault)"},
      {"--verify=pattern --rw=randrw",
       "--verify: pattern needs nvme.backend ram (it is null: only the ram backend keeps the data written)"},
      {"--verify=pattern --nvme.backend=latency",
       "--verify: pattern needs nvme.backend ram (it is latency: only the ram backend keeps the data written)"},
  };
  for (const Case& c : table) check_refused(c.args, "nvmesim: error: " + c.error);
  // The same settings with what they need run (and the inert values need nothing).
  for (const std::string ok : {"--hv.fault=eventfd_spin --hv.notify=ioeventfd", "--hv.fault=none",
                               "--verify=pattern --nvme.backend=ram --rw=randrw", "--verify=off"}) {
    const auto r = run_nvmesim(ok + " --number_ios=20 --output-format=json");
    INFO(ok << "\n" << r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.err.empty());
  }
}

TEST_CASE("param requirements: settings that do nothing in this configuration are warned about once", "[cli][requires]") {
  ScratchDir d;
  struct Case {
    std::string args, warning;  // the one line on standard error
  };
  const std::vector<Case> table = {
      {"--pcie.lanes=8",
       "--pcie.lanes: needs pcie.mode link (it is emulated: the emulated device has no link); the setting does nothing"},
      {"--pcie.mode=link --pcie.host_copy_gbps=20",
       "--pcie.host_copy_gbps: needs pcie.mode emulated (it is link: the link model times transfers); the setting "
       "does nothing"},
      {"--hv.timer_delay=1us",
       "--hv.timer_delay: needs hv.notify timer (it is deferred: no timer is armed); the setting does nothing"},
      {"--vcd " + (d / "a.vcd") + " --trace-start=5s --hv.wakeup=fixed",  // a run's exact length
       "--trace-start 5s is not before the end of the run (416.128us simulated): the traces hold no events"},
      {"--vcd " + (d / "b.vcd") + " --timeline " + (d / "b.json") + " --trace-signals='q1.shadow*'",
       "--trace-signals selects nothing --timeline writes (VCD signals such as q1.shadow_sq_tail, vcpu0.state; "
       "timeline tracks such as q1.io, vcpu0.exit, host0.burst): its file will hold no events"},
      {"--vcd " + (d / "c.vcd") + " --timeline " + (d / "c.json") + " --trace-signals='q1.io'",
       "--trace-signals selects nothing --vcd writes (VCD signals such as q1.shadow_sq_tail, vcpu0.state; "
       "timeline tracks such as q1.io, vcpu0.exit, host0.burst): its file will hold no events"},
  };
  for (const Case& c : table) {
    const auto r = run_nvmesim("--preset=none " + c.args + " --number_ios=100 --single-run --output-format=json");
    INFO(c.args);
    CHECK(r.exit_code == 0);
    CHECK(r.err == "nvmesim: warning: " + c.warning + "\n");
  }
}
