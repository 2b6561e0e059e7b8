// Counterexamples of nvmesim verify against the timed simulator: with the
// same ring sizes and the same broken setting, a timed run whose timing
// produces the counterexample's interleaving must end in the same stall,
// as the watchdog reports it, and the same run with the setting fixed must
// not stall. Both are read from the binary's output: verify's one-line stall
// description and the watchdog's STALL line are written by different code.
#include <catch2/catch.hpp>

#include <regex>
#include <string>

#include "run_binary.h"

using nvmesim::test::run_nvmesim;

namespace {

// One queue pair stuck: the driver's view, the device's, and the memory
// between them.
struct Stall {
  int outstanding = -1, driver_sq_tail = -1, driver_cq_head = -1;
  int device_sq_head = -1, device_sq_tail = -1, device_cq_head = -1, device_cq_tail = -1;
  int held = -1;
  bool cq_full = false;
  int shadow_sq = -1, shadow_cq = -1, eventidx_sq = -1, eventidx_cq = -1;
};

int num(const std::smatch& m, size_t i) { return std::stoi(m[i].str()); }

Stall from_verify(const std::string& out) {
  static const std::regex re(
      R"(\((\d+) outstanding, SQ tail (\d+), CQ head (\d+)\), the device is idle \(SQ head (\d+), tail (\d+); )"
      R"(CQ head (\d+), tail (\d+), (\d+) completions held(, CQ full)?\); shadow SQ (\d+), CQ (\d+); )"
      R"(EventIdx SQ (\d+), CQ (\d+))");
  std::smatch m;
  REQUIRE(std::regex_search(out, m, re));
  Stall s;
  s.outstanding = num(m, 1);
  s.driver_sq_tail = num(m, 2);
  s.driver_cq_head = num(m, 3);
  s.device_sq_head = num(m, 4);
  s.device_sq_tail = num(m, 5);
  s.device_cq_head = num(m, 6);
  s.device_cq_tail = num(m, 7);
  s.held = num(m, 8);
  s.cq_full = m[9].matched;
  s.shadow_sq = num(m, 10);
  s.shadow_cq = num(m, 11);
  s.eventidx_sq = num(m, 12);
  s.eventidx_cq = num(m, 13);
  return s;
}

Stall from_watchdog(const std::string& out) {
  static const std::regex re(
      R"((\d+) I/Os outstanding; queue 1 \(vcpu0, \d+ commands in flight\): SQ 1 driver tail (\d+), )"
      R"(device head (\d+) tail (\d+)[^;]*; CQ 1 \(\d+ entries\) driver head (\d+), device head (\d+) tail (\d+), )"
      R"((\d+) completions waiting to be posted( \(CQ 1 is full)?[^;]*; )"
      R"(shadow doorbells: SQ tail (\d+), CQ head (\d+); EventIdx: SQ (\d+), CQ (\d+))");
  std::smatch m;
  REQUIRE(std::regex_search(out, m, re));
  Stall s;
  s.outstanding = num(m, 1);
  s.driver_sq_tail = num(m, 2);
  s.device_sq_head = num(m, 3);
  s.device_sq_tail = num(m, 4);
  s.driver_cq_head = num(m, 5);
  s.device_cq_head = num(m, 6);
  s.device_cq_tail = num(m, 7);
  s.held = num(m, 8);
  s.cq_full = m[9].matched;
  s.shadow_sq = num(m, 10);
  s.shadow_cq = num(m, 11);
  s.eventidx_sq = num(m, 12);
  s.eventidx_cq = num(m, 13);
  return s;
}

void check_sq_side(const Stall& v, const Stall& w) {
  CHECK(w.outstanding == v.outstanding);
  CHECK(w.driver_sq_tail == v.driver_sq_tail);
  CHECK(w.device_sq_head == v.device_sq_head);
  CHECK(w.device_sq_tail == v.device_sq_tail);
  CHECK(w.shadow_sq == v.shadow_sq);
  CHECK(w.eventidx_sq == v.eventidx_sq);
}

void check_same(const Stall& v, const Stall& w) {
  check_sq_side(v, w);
  CHECK(w.driver_cq_head == v.driver_cq_head);
  CHECK(w.device_cq_head == v.device_cq_head);
  CHECK(w.device_cq_tail == v.device_cq_tail);
  CHECK(w.held == v.held);
  CHECK(w.cq_full == v.cq_full);
  CHECK(w.shadow_cq == v.shadow_cq);
  CHECK(w.eventidx_cq == v.eventidx_cq);
}

// The timed run: fio-like, one vCPU, `options` giving the ring and the bug;
// a stall is reported after 200 us without progress.
nvmesim::test::ProcessResult timed(const std::string& options) {
  return run_nvmesim(options + " --number_ios=200 --sim.stall_timeout=200us --single-run");
}

}  // namespace

TEST_CASE("verify replay: without the full barrier, the timed run stalls where the counterexample does",
          "[verify][stall]") {
  const auto v = run_nvmesim("verify --qsize 3 --commands 4 --time=off --guest.dbbuf_full_barrier=off");
  REQUIRE(v.exit_code == 1);
  // The counterexample's interleaving in time: shadow stores visible 5 us
  // late, so the EventIdx load passes them, and a device that runs from the
  // main loop 2 us after the doorbell (test_dbbuf_platform.cpp's timing).
  const std::string timing =
      "--guest.io_queue_entries=3 --iodepth=2 --guest.store_visibility=5us --hv.notify=deferred "
      "--hv.device_thread=mainloop --hv.wakeup=fixed --hv.dispatch_latency=2us --hv.dispatch_cost=500ns --hv.exit_mmio=5100cyc "
      "--guest.submit_cost=1500ns --nvme.cmd_cost=1us";
  const auto w = timed(timing + " --guest.dbbuf_full_barrier=off");
  REQUIRE(w.out.find("STALLED") == 0);
  check_same(from_verify(v.out), from_watchdog(w.out));
  // The fix, in both.
  CHECK(run_nvmesim("verify --qsize 3 --commands 4 --time=off").exit_code == 0);
  const auto fixed = timed(timing + " --guest.dbbuf_full_barrier=on");
  CHECK(fixed.exit_code == 0);
  CHECK(fixed.out.find("STALL") == std::string::npos);
}

TEST_CASE("verify replay: a device that never writes the CQ EventIdx, a 2-entry CQ, the same full-CQ stall",
          "[verify][stall]") {
  const auto v =
      run_nvmesim("verify --qsize 4 --commands 4 --time=off --guest.io_cq_entries=2 --nvme.cq_eventidx=never");
  REQUIRE(v.exit_code == 1);
  const std::string ring = "--guest.io_queue_entries=4 --guest.io_cq_entries=2 --iodepth=3";
  const auto w = timed(ring + " --nvme.cq_eventidx=never");
  REQUIRE(w.out.find("STALLED") == 0);
  const Stall s = from_verify(v.out);
  CHECK(s.cq_full);
  check_same(s, from_watchdog(w.out));
  const auto fixed = timed(ring + " --nvme.cq_eventidx=echo");
  CHECK(fixed.out.find("STALL") == std::string::npos);
}

TEST_CASE("verify replay: an SQ EventIdx never written loses the same SQ wake-up", "[verify][stall]") {
  const auto v = run_nvmesim("verify --qsize 3 --commands 4 --time=off --nvme.sq_eventidx=never");
  REQUIRE(v.exit_code == 1);
  const auto w = timed("--guest.io_queue_entries=3 --iodepth=2 --nvme.sq_eventidx=never");
  REQUIRE(w.out.find("STALLED") == 0);
  // The SQ side, where the wake-up is lost, is the same. The timed run
  // completed three more I/Os before it (one lap of the 3-entry CQ), so its
  // CQ EventIdx echoes a later head than the shortest counterexample's.
  const Stall a = from_verify(v.out), b = from_watchdog(w.out);
  check_sq_side(a, b);
  CHECK(b.driver_cq_head == a.driver_cq_head);
  const auto fixed = timed("--guest.io_queue_entries=3 --iodepth=2 --nvme.sq_eventidx=echo");
  CHECK(fixed.out.find("STALL") == std::string::npos);
}
