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
  int exit_code;
  double ios, interrupts, coalesced, lat_max;
  bool stalled;
};

Figures run(const std::string& options) {
  const auto r = run_nvmesim("--number_ios=2003 --iodepth=32 --output-format=json " + options);
  INFO("nvmesim " << options << "\n" << r.err);
  REQUIRE(r.exit_code == 0);
  const std::string ctl = r.out.substr(r.out.find("\"controller\""));
  return {r.exit_code,
          json_number(r.out, "ios"),
          json_number(ctl, "interrupts"),
          json_number(ctl, "coalesced_completions"),
          json_number(r.out.substr(r.out.find("\"lat_ns\"")), "max"),
          r.out.find("\"stall\": null") == std::string::npos};
}
}  // namespace

TEST_CASE("interrupt coalescing: exact interrupt counts, nothing held forever", "[e2e][coalescing]") {
  const Figures plain = run("");
  REQUIRE(plain.ios == 2003);
  REQUIRE(plain.coalesced == 0);

  struct Row {
    const char* options;
    double interrupts;  // < 0: as the run without coalescing
    double coalesced;   // completions whose interrupt was held back
    double hold_us;     // TIME: the most a completion may wait for its interrupt
  };
  const Row rows[] = {
      // TIME 0: no delay, so no completion is held, whatever THR is.
      {"--guest.irq_coalescing_thr=8", -1, 0, 0},
      {"--guest.irq_coalescing_thr=33", -1, 0, 0},
      {"--guest.irq_coalescing_thr=256", -1, 0, 0},
      // Each completion is posted on its own (null backend), so every 8th
      // fires the threshold: floor(2003 / 8) = 250 interrupts hold the other
      // 7 each (1750), and the last 3 go out at the 200 us deadline: 251
      // interrupts, 1753 held.
      {"--guest.irq_coalescing_thr=8 --guest.irq_coalescing_time=200us", 251, 1753, 200},
      // THR+1 = 33 never fits 32 in flight: every interrupt comes from the
      // 100 us deadline, by which all 32 have completed, so each carries 32
      // but the last (2003 = 62 x 32 + 19): 63 interrupts, all 2003 held.
      {"--guest.irq_coalescing_thr=33 --guest.irq_coalescing_time=100us", 63, 2003, 100},
  };
  for (const Row& row : rows) {
    INFO(row.options);
    const Figures f = run(row.options);
    CHECK_FALSE(f.stalled);
    CHECK(f.ios == 2003);
    CHECK(f.interrupts == (row.interrupts < 0 ? plain.interrupts : row.interrupts));
    CHECK(f.coalesced == row.coalesced);
    // A held completion is signalled within TIME: no I/O waits longer than
    // the slowest one without coalescing plus the hold.
    CHECK(f.lat_max <= plain.lat_max + row.hold_us * 1000);
  }
}
