// The guest's costs per system call (guest.submit_call_cost,
// guest.reap_call_cost, guest.reap_event_cost): the io_submit and
// io_getevents calls fio makes, counted per vCPU, and the time they charge.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/platform/run_binary.h"

namespace {

struct Calls {
  uint64_t submit = 0, reap = 0, events = 0;
};

// fio's rule for a libaio job of n I/Os (no rate, no thinktime,
// iodepth_low = iodepth, iodepth_batch_complete_max unset = min), stated
// from fio's code, not the model's:
// - ioengines.c td_io_queue queues each I/O and commits (one io_submit,
//   engines/libaio.c fio_libaio_commit) once iodepth_batch_submit are queued;
//   what is left queued is committed by the next td_io_getevents (min > 0),
//   again one io_submit.
// - backend.c do_io queues while the queue is not full, then
//   wait_for_completions reaps once (io_u.c io_u_queued_complete ->
//   td_io_getevents(min, max)); with max = min = iodepth_batch_complete_min,
//   clipped to the I/Os in flight, one io_getevents returns exactly that many.
// - The tail is reaped the same way, min(complete_min, in flight) a call
//   (fio's own last reap, do_io's io_u_queued_complete(td, td->cur_depth),
//   takes them all in one call: the model keeps its tail as before, so the
//   two differ by ceil(rest / complete_min) - 1 calls at the very end).
Calls fio_calls(uint64_t n, uint64_t depth, uint64_t batch, uint64_t complete_min) {
  Calls c;
  uint64_t issued = 0, inflight = 0;
  for (;;) {
    uint64_t queued = 0;
    while (inflight < depth && issued < n) {
      ++inflight;
      ++issued;
      if (++queued == batch) {
        ++c.submit;
        queued = 0;
      }
    }
    if (queued) ++c.submit;  // committed by the reap's td_io_getevents
    if (!inflight) return c;
    const uint64_t got = std::min(complete_min, inflight);
    inflight -= got;
    ++c.reap;
    c.events += got;
  }
}

nlohmann::json run(const std::string& args) {
  const auto r = nvmesim::test::run_nvmesim(args + " --output-format=json");
  INFO(args);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return nlohmann::json::parse(r.out);
}

uint64_t stat(const nlohmann::json& j, const char* name) { return j["stats"]["vcpu0"][name].get<uint64_t>(); }
double guest_ns(const nlohmann::json& j) { return j["stats"]["vcpu0"]["guest_time"].get<double>(); }

void check_counts(const std::string& args, uint64_t n, uint64_t depth, uint64_t batch, uint64_t complete_min) {
  INFO(args);
  const auto j = run(args);
  const Calls want = fio_calls(n, depth, batch, complete_min);
  CHECK(stat(j, "ios") == n);
  CHECK(stat(j, "submit_calls") == want.submit);
  CHECK(stat(j, "reap_calls") == want.reap);
  CHECK(stat(j, "reap_events") == want.events);
  CHECK(stat(j, "reap_events") == stat(j, "ios"));
}

}  // namespace

TEST_CASE("guest calls: the rule stated from fio's code, worked by hand", "[guest_calls]") {
  // iodepth 1: one io_submit and one io_getevents per I/O.
  CHECK(fio_calls(50, 1, 1, 1).submit == 50);
  CHECK(fio_calls(50, 1, 1, 1).reap == 50);
  // iodepth 8, batches of 8, reaps of 4: 8 at first, then 4 per reap.
  const Calls c = fio_calls(200, 8, 8, 4);
  CHECK(c.submit == 1 + (200 - 8) / 4);
  CHECK(c.reap == 200 / 4);
  CHECK(c.events == 200);
  // iodepth 8, batches of 3, reaps of 2: 3 + 3 + 2 first (3 calls), then a
  // call of 2 after each reap; the tail of 6 in three reaps.
  const Calls d = fio_calls(100, 8, 3, 2);
  CHECK(d.submit == 3 + (100 - 8) / 2);
  CHECK(d.reap == 100 / 2);
}

TEST_CASE("guest calls: io_submit and io_getevents calls are counted as fio makes them", "[guest_calls][binary]") {
  const std::string base = "--single-run --number_ios=200 ";
  check_counts(base + "--iodepth=1", 200, 1, 1, 1);
  check_counts(base + "--iodepth=8 --iodepth_batch_submit=8 --iodepth_batch_complete_min=4", 200, 8, 8, 4);
  check_counts(base + "--iodepth=8 --iodepth_batch_submit=3 --iodepth_batch_complete_min=2", 200, 8, 3, 2);
  // fio's defaults: each I/O its own io_submit, each reap one event.
  check_counts(base + "--iodepth=32", 200, 32, 1, 1);
  // A batch larger than the depth is clipped by it (fio's fixup_options).
  check_counts(base + "--iodepth=4 --iodepth_batch_submit=16 --iodepth_batch_complete_min=4", 200, 4, 16, 4);
}

TEST_CASE("guest calls: the time charged is calls x cost + events x cost", "[guest_calls][binary]") {
  // Every other guest cost zero (and no store-buffer wait at a barrier):
  // the vCPU's guest work is the calls' alone.
  const std::string zero = "--preset=none --single-run --number_ios=200 --guest.submit_cost=0ns --guest.complete_cost=0ns "
                           "--guest.irq_entry=0ns --guest.store_visibility=0ns ";
  const std::string base = zero + "--guest.submit_call_cost=700ns --guest.reap_call_cost=300ns "
                                  "--guest.reap_event_cost=110ns --guest.reap_sleep_cost=50ns ";
  for (const char* depth : {"--iodepth=1", "--iodepth=8 --iodepth_batch_submit=8 --iodepth_batch_complete_min=4",
                            "--iodepth=32 --iodepth_batch_complete_max=32"}) {
    INFO(depth);
    const auto j = run(base + depth);
    CHECK(guest_ns(j) == double(stat(j, "submit_calls") * 700 + stat(j, "reap_calls") * 300 +
                                stat(j, "reap_events") * 110 + stat(j, "reap_sleeps") * 50));
    CHECK(stat(j, "reap_events") == 200);
    CHECK(stat(j, "reap_sleeps") <= stat(j, "reap_calls"));
  }
  // Zero costs (the default) charge nothing: no guest work at all.
  const auto none = run(zero);
  CHECK(guest_ns(none) == 0);
  CHECK(stat(none, "submit_calls") == 200);
}

TEST_CASE("guest calls: a reap that sleeps pays the switch out and in once, before fio's stamp",
          "[guest_calls][binary]") {
  // fs/aio.c read_events: a call short of its minimum sleeps. At iodepth 1
  // every call finds nothing ready (its one I/O is in flight), so every call
  // sleeps and each I/O's latency grows by exactly the cost, paid before
  // the events are copied out and stamped.
  const std::string qd1 = "--preset=none --single-run --number_ios=300 --iodepth=1 --nvme.dbbuf=spec ";
  const auto plain = run(qd1);
  const auto slept = run(qd1 + "--guest.reap_sleep_cost=1400ns");
  CHECK(stat(slept, "reap_sleeps") == 300);
  CHECK(stat(slept, "reap_calls") == 300);
  CHECK(slept["lat_ns"]["mean"].get<double>() - plain["lat_ns"]["mean"].get<double>() == Approx(1400).margin(0.001));
  // Deep queues rarely sleep: at iodepth 64 the ring mostly has an event.
  const auto deep = run("--preset=none --single-run --number_ios=3000 --iodepth=64 --nvme.dbbuf=spec");
  CHECK(stat(deep, "reap_sleeps") < stat(deep, "reap_calls") / 10);
}

TEST_CASE("guest calls: with reaps of up to 32 each call takes what has completed", "[guest_calls][binary]") {
  // iodepth_batch_complete_max above the minimum: a call returns between 1
  // and 32 events, as many as are ready when it is woken (timing decides).
  const auto j = run("--single-run --number_ios=400 --iodepth=32 --iodepth_batch_complete_max=32");
  CHECK(stat(j, "reap_events") == 400);
  CHECK(stat(j, "reap_calls") < 400);
  CHECK(stat(j, "reap_calls") >= 400 / 32);
  CHECK(stat(j, "submit_calls") == 400);  // iodepth_batch_submit=1
}

TEST_CASE("guest calls: the kvm preset's split keeps iodepth 1 at 6 us of guest work per I/O",
          "[guest_calls][binary]") {
  const std::string base = "--preset kvm --single-run --iodepth=1 --number_ios=500 --guest.store_visibility=0ns ";
  const auto split = run(base);
  // The preset's costs before the split: 3 us per command submitted, none per call.
  const auto whole = run(base + "--guest.submit_cost=3us --guest.submit_call_cost=0ns --guest.reap_call_cost=0ns "
                                "--guest.reap_event_cost=0ns");
  for (const auto* j : {&split, &whole}) {
    CHECK(stat(*j, "ios") == 500);
    CHECK(stat(*j, "interrupts") == 500);
    CHECK(stat(*j, "submit_calls") == 500);
    CHECK(stat(*j, "reap_calls") == 500);
    CHECK(guest_ns(*j) == 500 * 6000.0);
  }
  // Each turn at iodepth 1 is as long: fio's lat is the same I/O for I/O.
  CHECK(split["lat_ns"]["mean"].dump() == whole["lat_ns"]["mean"].dump());
  CHECK(split["lat_ns"]["max"].dump() == whole["lat_ns"]["max"].dump());
}

TEST_CASE("guest calls: the new costs are parameters with their checks", "[guest_calls][binary]") {
  const auto list = nvmesim::test::run_nvmesim("--list-params");
  REQUIRE(list.exit_code == 0);
  for (const char* name : {"guest.submit_call_cost", "guest.reap_call_cost", "guest.reap_event_cost", "guest.reap_sleep_cost"})
    CHECK(list.out.find(name) != std::string::npos);
  const auto bad = nvmesim::test::run_nvmesim("--guest.reap_event_cost=2ms");
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("guest.reap_event_cost") != std::string::npos);
}
