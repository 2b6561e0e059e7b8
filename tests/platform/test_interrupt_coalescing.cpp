// Interrupt Coalescing (Set Features 08h, NVMe 1.4 section 5.21.1.8),
// through the binary: an interrupt goes out when THR+1 completions are
// aggregated or TIME x 100 us after the first held one, and TIME 0 means no
// delay. Every run must finish all its I/Os, whatever the threshold.
#include <catch2/catch.hpp>

#include "run_binary.h"

using nvmesim::test::json_number;
using nvmesim::test::run_nvmesim;

namespace {
struct Figures {
  double ios, interrupts, coalesced, lat_min, lat_max;
  bool stalled;
};

Figures run(const std::string& options) {
  const auto r = run_nvmesim("--preset=none --number_ios=2003 --single-run --output-format=json --hv.wakeup=fixed " + options);
  INFO("nvmesim " << options << "\n" << r.err);
  REQUIRE(r.exit_code == 0);
  const std::string ctl = r.out.substr(r.out.find("\"controller\""));
  const std::string lat = r.out.substr(r.out.find("\"lat_ns\""));
  return {json_number(r.out, "ios"),         json_number(ctl, "interrupts"),
          json_number(ctl, "coalesced_completions"), json_number(lat, "min"),
          json_number(lat, "max"),           r.out.find("\"stall\": null") == std::string::npos};
}
}  // namespace

TEST_CASE("interrupt coalescing: exact interrupt counts, nothing held forever", "[e2e][coalescing]") {
  const Figures plain1 = run("--iodepth=1"), plain32 = run("--iodepth=32");
  REQUIRE(plain1.ios == 2003);
  REQUIRE(plain1.interrupts == 2003);  // one completion in flight: one interrupt each
  REQUIRE(plain32.ios == 2003);
  REQUIRE(plain32.coalesced == 0);

  struct Row {
    const char* options;
    double interrupts;  // < 0: as the run without coalescing; 0: not fixed by the rule
    double coalesced;   // completions whose interrupt was held back; < 0: not fixed
    double hold_us;     // each held completion waits this long (iodepth 1), at most
    bool all_wait;      // iodepth 1: every completion waits the whole aggregation time
  };
  const Row rows[] = {
      // TIME 0 "corresponds to no delay": nothing is held, whatever THR is.
      {"--iodepth=1 --guest.irq_coalescing_thr=8", -1, 0, 0, false},
      {"--iodepth=32 --guest.irq_coalescing_thr=8", -1, 0, 0, false},
      {"--iodepth=32 --guest.irq_coalescing_thr=33", -1, 0, 0, false},
      {"--iodepth=32 --guest.irq_coalescing_thr=256", -1, 0, 0, false},
      // One in flight never reaches THR+1 = 8: each completion is signalled by
      // its 200 us deadline, one interrupt each, all 2003 held.
      {"--iodepth=1 --guest.irq_coalescing_thr=8 --guest.irq_coalescing_time=200us", 2003, 2003,
       200, true},
      // THR+1 = 33 never fits 32 in flight: every completion waits for a
      // deadline (all 2003 held), each interrupt carrying at most 32.
      {"--iodepth=32 --guest.irq_coalescing_thr=33 --guest.irq_coalescing_time=100us", 0, 2003,
       100, false},
      // The threshold can fire here; the last completions go out by the deadline.
      {"--iodepth=32 --guest.irq_coalescing_thr=8 --guest.irq_coalescing_time=200us", 0, -1, 200,
       false},
  };
  for (const Row& row : rows) {
    INFO(row.options);
    const bool qd1 = std::string(row.options).find("--iodepth=1 ") == 0;
    const Figures& plain = qd1 ? plain1 : plain32;
    const Figures f = run(row.options);
    CHECK_FALSE(f.stalled);
    CHECK(f.ios == 2003);
    if (row.interrupts < 0) CHECK(f.interrupts == plain.interrupts);
    if (row.interrupts > 0) CHECK(f.interrupts == row.interrupts);
    CHECK(f.interrupts >= 2003.0 / (qd1 ? 1 : 32));  // an interrupt reaps at most iodepth
    if (row.coalesced >= 0) CHECK(f.coalesced == row.coalesced);
    // A held completion is signalled within TIME: no I/O waits longer than
    // the slowest one without coalescing plus the hold.
    CHECK(f.lat_max <= plain.lat_max + row.hold_us * 1000);
    if (row.all_wait) CHECK(f.lat_min >= plain.lat_min + row.hold_us * 1000);
  }
}
