// virtio.busy_poll in the whole platform: vhost-style busy polling (Linux
// drivers/vhost/net.c vhost_net_busy_poll) on the virtio-blk device's host
// thread. Kicks per I/O with the window longer and shorter than the guest's
// gap between I/Os, the polled time as the sum of the windows and inside the
// thread's busy time, off by default, deterministic. One System per TEST_CASE.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <string>

#include "nvmesim/platform/config/params.h"
#include "nvmesim/platform/system/system.h"
#include "tests/platform/run_binary.h"
#include "tests/platform/virtio_config.h"

using namespace nvmesim;
using namespace nvmesim::platform;

namespace {

// Time statistics are read in SystemC's resolution (ps).
constexpr uint64_t kPsPerUs = 1000000;

uint64_t stat(const RunResults& r, const std::string& name) { return r.stats.at(name); }

RunResults run_qd1(const char* busy_poll, const char* event_idx, uint64_t ios) {
  const std::string n = std::to_string(ios);
  // The fixed wake-ups: the guest's gap between I/Os is then known exactly.
  Config c = test::virtio_config({{"iodepth", "1"}, {"number_ios", n.c_str()}, {"virtio.event_idx", event_idx},
                                  {"virtio.busy_poll", busy_poll}, {"hv.wakeup", "fixed"}});
  System sys(c);
  const RunResults r = sys.run();
  REQUIRE(r.bringup_ok);
  CHECK_FALSE(r.stalled);
  CHECK(r.count("ios") == ios);
  CHECK(r.count("doorbells.sq.updates") == ios);  // one kick decision per I/O, kicked or not
  CHECK(r.count("doorbells.sq.updates") == r.count("doorbells.sq.mmio") + r.count("doorbells.sq.suppressed"));
  CHECK(stat(r, "virtio_blk.notifies") == r.count("doorbells.sq.mmio"));
  CHECK(stat(r, "virtio_blk.requests") == ios);
  return r;
}

}  // namespace

// (1) Off by default: the run is the one before the option existed.
TEST_CASE("busy poll: off by default, iodepth 1 still kicks once per I/O and no busy_poll group exists") {
  Config c = test::virtio_config({{"iodepth", "1"}, {"number_ios", "500"}});
  CHECK(c.text("virtio.busy_poll") == "0ns");
  System sys(c);
  const RunResults r = sys.run();
  CHECK(r.count("ios") == 500);
  CHECK(r.count("doorbells.sq.mmio") == 500);
  CHECK(r.count("doorbells.sq.suppressed") == 0);
  CHECK(r.stats.group("virtio_blk") != nullptr);
  CHECK(r.stats.group("virtio_blk.busy_poll") == nullptr);
  // QEMU's pop writes avail_event each time: 3 per I/O (switch off, pop, switch on).
  CHECK(stat(r, "virtio_blk.avail_event_writes") == 1500);
}

TEST_CASE("busy poll: virtio.busy_poll=0 prints exactly what the default does", "[binary]") {
  const std::string args = "--device=virtio-blk --iodepth=4 --numjobs=2 --number_ios=1000";
  const auto a = test::run_nvmesim(args);
  const auto b = test::run_nvmesim(args + " --virtio.busy_poll=0ns");
  REQUIRE(a.exit_code == 0);
  REQUIRE(b.exit_code == 0);
  CHECK(a.out == b.out);
  CHECK(a.out.find("sq: updates=2000, mmio=") != std::string::npos);
}

// (2) The guest's gap: from the window's start (the device has posted the
// used entry and sent the MSI-X) to the next avail->idx store the vCPU takes
// hv.inject (1 us) + guest.irq_entry (0.5 us) + guest.complete_cost (1 us) +
// hv.exit_eoi (1 us) + the MSI-X delivery (3520 ns measured), then the next
// request's guest.submit_cost (1.5 us: the block layer's work comes before
// virtio_queue_rq adds it): 5020 ns (each found window below lasts 5020.2
// ns, the 0.2 ns being the avail->idx read). A 6 us window therefore finds
// every next request: the first I/O kicks (notifications start on), the
// other N-1 are suppressed and found by the poll, and the last window is
// still open when the run ends (N-1 windows).
void check_longer_window(const RunResults& r) {
  CHECK(r.count("doorbells.sq.mmio") == 1);
  CHECK(r.count("doorbells.sq.suppressed") == 499);
  CHECK(stat(r, "virtio_blk.busy_poll.requests_found") == 499);
  CHECK(stat(r, "virtio_blk.busy_poll.windows") == 499);
  CHECK(stat(r, "virtio_blk.busy_poll.windows_found") == 499);
  CHECK(stat(r, "virtio_blk.busy_poll.windows_expired") == 0);
  CHECK(stat(r, "virtio_blk.busy_poll.windows_interrupted") == 0);
  CHECK(stat(r, "virtio_blk.busy_poll.poll_time") == 499 * 5020200ull);
  // vhost writes avail_event only when it re-enables: never here.
  CHECK(stat(r, "virtio_blk.avail_event_writes") == 0);
  // The host thread was dispatched once: every other request came by polling.
  // It books the windows as its polling as they end, although its work never did.
  CHECK(stat(r, "mainloop.dispatches") == 1);
  CHECK(stat(r, "mainloop.poll_time") == stat(r, "virtio_blk.busy_poll.poll_time"));
}

TEST_CASE("busy poll: a window longer than the guest's gap leaves one kick, the first (EVENT_IDX)") {
  check_longer_window(run_qd1("6us", "on", 500));
}

TEST_CASE("busy poll: a window longer than the guest's gap leaves one kick, the first (NO_NOTIFY)") {
  check_longer_window(run_qd1("6us", "off", 500));
}

TEST_CASE("busy poll: a 50 us window finds the same as a 6 us one (it only has to outlast the gap)") {
  check_longer_window(run_qd1("50us", "on", 500));
}

// A 3 us window ends before the guest publishes: it expires, notifications
// go back on (the re-check finds nothing), and the next I/O kicks as before.
void check_shorter_window(const RunResults& r, bool event_idx) {
  CHECK(r.count("doorbells.sq.mmio") == 500);
  CHECK(r.count("doorbells.sq.suppressed") == 0);
  CHECK(stat(r, "virtio_blk.busy_poll.requests_found") == 0);
  CHECK(stat(r, "virtio_blk.busy_poll.windows") == 500);
  CHECK(stat(r, "virtio_blk.busy_poll.windows_expired") == 500);
  CHECK(stat(r, "virtio_blk.busy_poll.poll_time") == 500 * 3 * kPsPerUs);  // each exactly the window
  CHECK(stat(r, "mainloop.dispatches") == 500);
  // With EVENT_IDX each expiry writes avail_event once (vhost_enable_notify).
  CHECK(stat(r, "virtio_blk.avail_event_writes") == (event_idx ? 500u : 0u));
}

TEST_CASE("busy poll: a window shorter than the guest's gap leaves one kick per I/O (EVENT_IDX)") {
  check_shorter_window(run_qd1("3us", "on", 500), true);
}

TEST_CASE("busy poll: a window shorter than the guest's gap leaves one kick per I/O (NO_NOTIFY)") {
  check_shorter_window(run_qd1("3us", "off", 500), false);
}

// (3) Every window here expires, so each lasts exactly the window: the
// polled time is their sum. The main loop does not poll for itself
// (hv.poll_max is the iothreads'), so its polling is the device's windows,
// inside its busy share; its work is the same for a 1 us and a 3 us window
// (both end before the guest's gap, the guest sees the same device).
TEST_CASE("busy poll: the polled time is the sum of the windows and part of the thread's busy time",
          "[binary]") {
  // Two runs, so two processes: the binary's JSON carries the statistics (in ns).
  auto run = [](const char* window) {
    const auto p = test::run_nvmesim(std::string("--device=virtio-blk --virtio.backend=null --iodepth=1 "
                                                 "--number_ios=500 --output-format=json --virtio.busy_poll=") +
                                     window);
    REQUIRE(p.exit_code == 0);
    return nlohmann::json::parse(p.out);
  };
  const nlohmann::json one = run("1us"), three = run("3us");
  const auto& p1 = one["stats"]["virtio_blk"]["busy_poll"];
  const auto& p3 = three["stats"]["virtio_blk"]["busy_poll"];
  CHECK(p1["windows_expired"] == 500);
  CHECK(p3["windows_expired"] == 500);
  CHECK(p1["poll_time"].get<double>() == 500 * 1000.0);
  CHECK(p3["poll_time"].get<double>() == 500 * 3000.0);
  CHECK(one["stats"]["mainloop"]["poll_time"].get<double>() == 500 * 1000.0);
  CHECK(three["stats"]["mainloop"]["poll_time"].get<double>() == 500 * 3000.0);
  CHECK(one["stats"]["mainloop"]["busy_time"] == three["stats"]["mainloop"]["busy_time"]);
  // Utilisation: busy = work + polling, polling = the windows over the span.
  const double span = three["utilization"]["span_ns"].get<double>();
  const auto& u = three["utilization"]["device"][0];
  CHECK(u["thread"] == "mainloop");
  CHECK(u["polling"].get<double>() == Approx(500 * 3000.0 / span).margin(1e-6));
  CHECK(u["busy"].get<double>() == Approx(u["work"].get<double>() + u["polling"].get<double>()).margin(2e-6));
  // The guest saw the same device: same kicks, same simulated time.
  CHECK(one["doorbells"]["sq"]["mmio"] == 500);
  CHECK(three["doorbells"]["sq"]["mmio"] == 500);
  CHECK(one["sim_time_ns"] == three["sim_time_ns"]);
}

// Two queues on one iothread and a backend that takes 20 us: completions
// reach the thread while it spins (vhost_has_work) and break windows.
TEST_CASE("busy poll: completions on the polling thread break its windows, and the windows add up") {
  Config c = test::virtio_config({{"iodepth", "4"}, {"numjobs", "2"}, {"number_ios", "400"},
                                  {"hv.device_thread", "iothread"}, {"hv.iothreads", "1"},
                                  {"virtio.backend", "latency"}, {"virtio.backend_latency", "20us"},
                                  {"virtio.busy_poll", "30us"}});
  System sys(c);
  const RunResults r = sys.run();
  REQUIRE(r.bringup_ok);
  CHECK_FALSE(r.stalled);
  CHECK(r.count("ios") == 800);
  CHECK(r.count("doorbells.sq.updates") == r.count("doorbells.sq.mmio") + r.count("doorbells.sq.suppressed"));
  const uint64_t windows = stat(r, "virtio_blk.busy_poll.windows");
  CHECK(windows > 0);
  CHECK(windows == stat(r, "virtio_blk.busy_poll.windows_found") +
                       stat(r, "virtio_blk.busy_poll.windows_interrupted") +
                       stat(r, "virtio_blk.busy_poll.windows_expired"));
  CHECK(stat(r, "virtio_blk.busy_poll.windows_interrupted") > 0);
  // Each window lasts at most the 30 us and the avail->idx read that ends it.
  CHECK(stat(r, "virtio_blk.busy_poll.poll_time") <= windows * (30 * kPsPerUs + 1000));
  CHECK(stat(r, "virtio_blk.busy_poll.requests_found") + r.count("doorbells.sq.mmio") <= 800);
  // The iothread's polling: the device's windows and QEMU's own (hv.poll_max).
  CHECK(stat(r, "iothread0.poll_time") >= stat(r, "virtio_blk.busy_poll.poll_time"));
}

// (5) Same configuration, same output.
TEST_CASE("busy poll: the same configuration gives byte-identical JSON", "[binary]") {
  const std::string args =
      "--device=virtio-blk --iodepth=4 --numjobs=2 --number_ios=1000 --rw=randrw --virtio.busy_poll=5us "
      "--virtio.backend=latency --output-format=json";
  const auto a = test::run_nvmesim(args);
  const auto b = test::run_nvmesim(args);
  REQUIRE(a.exit_code == 0);
  CHECK(a.out == b.out);
  CHECK(a.out.find("\"busy_poll\": {\"poll_time\": ") != std::string::npos);
}

// Two jobs on one virtqueue: each adds its batch and decides its kick in one
// hold of the queue lock (virtio_queue_rq), so the vCPU's catch-up for the
// poller happens before the lock, never between an add's slot and its
// avail->idx store (where the other job's add would take the same slot).
TEST_CASE("busy poll: two jobs sharing a virtqueue keep the ring whole") {
  Config c = test::virtio_config({{"iodepth", "2"}, {"numjobs", "2"}, {"virtio.queues", "1"},
                                  {"number_ios", "500"}, {"virtio.busy_poll", "20us"}, {"hv.wakeup", "fixed"}});
  System sys(c);
  const RunResults r = sys.run();
  REQUIRE(r.bringup_ok);
  CHECK(r.count("ios") == 1000);
  CHECK(stat(r, "virtio_blk.errors") == 0);
  CHECK(stat(r, "virtio_blk.requests") == 1000);
  CHECK(r.count("doorbells.sq.updates") == 1000);
  // One kick, the first: its handler pops both jobs' first iodepth-2 batches
  // (4 requests); the poll finds the other 996.
  CHECK(r.count("doorbells.sq.mmio") == 1);
  CHECK(stat(r, "virtio_blk.busy_poll.requests_found") == 996);
}
