#include <catch2/catch.hpp>

#include <vector>

#include "nvmesim/models/host/host_cpus.h"
#include "nvmesim/models/host/host_thread.h"

using namespace sc_core;
using nvmesim::models::HostThread;

namespace {
// Kicks the thread at chosen times and records when its work starts.
struct Driver : sc_module {
  HostThread& thread;
  std::vector<std::pair<double, double>> kicks;  // (at ns, delay ns)
  SC_HAS_PROCESS(Driver);
  Driver(sc_module_name n, HostThread& t) : sc_module(n), thread(t) { SC_THREAD(run); }
  void run() {
    double now = 0;
    for (auto [at, delay] : kicks) {
      wait(sc_time(at - now, SC_NS));
      now = at;
      thread.kick(sc_time(delay, SC_NS));
    }
  }
};
}  // namespace

TEST_CASE("host thread: a sleeping thread starts after the dispatch latency", "[host_thread]") {
  HostThread::Params p;
  p.dispatch_latency = sc_time(2, SC_US);
  HostThread t("t", p);
  std::vector<uint64_t> starts;  // ns
  t.set_work([&](sc_time& local) {
    starts.push_back(sc_time_stamp().value() / 1000);
    local += sc_time(500, SC_NS);  // work
  });
  Driver d("d", t);
  d.kicks = {{100, 0}, {300, 50}, {10000, 0}};
  sc_start(sc_time(20, SC_US));
  // 100 + 2000 -> 2100; the kick at 300 (+50 + 2000 = 2350) arrives while it
  // still sleeps, the earlier request wins; it works 2100..2600 and sees no
  // other request. 10000 + 2000 -> 12000.
  REQUIRE(starts == std::vector<uint64_t>{2100, 12000});
  CHECK(t.dispatches() == 2);
  CHECK(t.busy_time() == sc_time(1000, SC_NS));
}

TEST_CASE("host thread: a kick while working reruns without latency", "[host_thread]") {
  HostThread::Params p;
  p.dispatch_latency = sc_time(1, SC_US);
  HostThread t("t", p);
  std::vector<uint64_t> starts;  // ns
  t.set_work([&](sc_time& local) {
    starts.push_back(sc_time_stamp().value() / 1000);
    HostThread::sync(local);
    wait(sc_time(400, SC_NS));  // busy: a kick during this is not lost
  });
  Driver d("d", t);
  d.kicks = {{0, 0}, {1200, 0}};
  sc_start(sc_time(10, SC_US));
  // Starts at 1000, busy until 1400; the kick at 1200 sees it busy: no
  // latency, it runs again at 1400.
  REQUIRE(starts == std::vector<uint64_t>{1000, 1400});
}

TEST_CASE("host thread: the extra wake-up delay is exponential with the configured mean", "[host_thread]") {
  HostThread::Params p;
  p.dispatch_jitter = sc_time(100, SC_US);
  p.jitter_seed = 7;
  HostThread a("a", p), b("b", p);
  HostThread::Params none;
  HostThread c("c", none);
  const int n = 20000;
  double sum = 0;
  int above = 0;
  for (int i = 0; i < n; ++i) {
    const sc_time d = a.jitter_draw();
    CHECK(d == b.jitter_draw());  // same seed, same delays
    sum += double(d.value()) / 1e6;  // us
    above += d > sc_time(300, SC_US);
  }
  // Exponential, mean 100 us: mean 100 (+-3%), P(> 3 means) = e^-3 = 0.0498.
  CHECK(sum / n == Approx(100.0).epsilon(0.03));
  CHECK(double(above) / n == Approx(0.0498).margin(0.005));
  CHECK(c.jitter_draw() == SC_ZERO_TIME);
}

TEST_CASE("host thread: more wake-up signals during one sleep do not wake it sooner", "[host_thread]") {
  // The delay is drawn once per sleep: a second signal 10 ns after the first
  // leaves the start where the first one's draw put it.
  HostThread::Params p;
  p.dispatch_latency = sc_time(2, SC_US);
  p.dispatch_jitter = sc_time(50, SC_US);
  p.jitter_seed = 3;
  HostThread probe("probe", p);
  const sc_time first_draw = probe.jitter_draw();  // the same sequence as t's
  HostThread t("t", p);
  std::vector<uint64_t> starts;  // ps
  t.set_work([&](sc_time&) { starts.push_back(sc_time_stamp().value()); });
  Driver d("d", t);
  d.kicks = {{100, 0}, {110, 0}};
  sc_start(sc_time(2, SC_MS));
  REQUIRE(starts.size() == 1);
  CHECK(starts[0] == (sc_time(100, SC_NS) + sc_time(2, SC_US) + first_draw).value());
}

TEST_CASE("host thread: a wake-up while every host core is taken waits for a core (host.wakeup_wait)",
          "[host_thread]") {
  using nvmesim::models::HostCpus;
  // The rule, on its own: a wait drawn uniformly from 0 to the longest wait,
  // only while the runnable threads fill every core.
  HostCpus cpus(1, sc_time(1, SC_MS));
  const unsigned vcpu = cpus.add_thread("vcpu0");
  CHECK(cpus.wakeup_wait(0.25) == SC_ZERO_TIME);  // the core is free
  cpus.set_runnable(vcpu, true);
  CHECK(cpus.wakeup_wait(0.25) == sc_time(250, SC_US));
  CHECK(cpus.wakeup_wait(0.0) == SC_ZERO_TIME);
  HostCpus unlimited(0, sc_time(1, SC_MS));  // one core per thread: never waits
  unlimited.set_runnable(unlimited.add_thread("v"), true);
  CHECK(unlimited.wakeup_wait(0.5) == SC_ZERO_TIME);

  // Through a host thread: the core is taken, so its start is the kick, the
  // dispatch latency and a wait below 1 ms; the wait is counted.
  HostThread::Params p;
  p.dispatch_latency = sc_time(2, SC_US);
  p.jitter_seed = 3;
  HostThread t("t", p, &cpus);
  std::vector<uint64_t> starts;  // ns
  t.set_work([&](sc_time& local) {
    starts.push_back(sc_time_stamp().value() / 1000);
    local += sc_time(500, SC_NS);
  });
  Driver d("d", t);
  d.kicks = {{100, 0}};
  sc_start(sc_time(5, SC_MS));
  REQUIRE(starts.size() == 1);
  CHECK(starts[0] > 2100);
  CHECK(starts[0] < 2100 + 1000000);
  const auto v = t.stats().values();
  CHECK(v.at("core_waits") == 1);
  CHECK(double(v.at("core_wait_time")) == Approx(double(starts[0] - 2100) * 1000).margin(1000));  // ps
}

namespace {
// Frees the one core at a chosen time (the vCPU halts).
struct CoreReleaser : sc_module {
  nvmesim::models::HostCpus& cpus;
  unsigned id;
  double at_ns;
  SC_HAS_PROCESS(CoreReleaser);
  CoreReleaser(sc_module_name n, nvmesim::models::HostCpus& c, unsigned i, double at)
      : sc_module(n), cpus(c), id(i), at_ns(at) { SC_THREAD(run); }
  void run() {
    wait(sc_time(at_ns, SC_NS));
    cpus.set_runnable(id, false);
  }
};

struct CoreWaitRun {
  std::vector<uint64_t> starts;  // ns
  double core_waits, core_wait_ps;
};

// One core, taken by a vCPU that halts at `halt_ns`; a thread (dispatch
// latency 2 us, seed 3, longest wait for a core 1 ms) kicked at 100 ns.
CoreWaitRun run_core_freed_at(double halt_ns) {
  using nvmesim::models::HostCpus;
  HostCpus cpus(1, sc_time(1, SC_MS));
  const unsigned vcpu = cpus.add_thread("vcpu0");
  cpus.set_runnable(vcpu, true);
  HostThread::Params p;
  p.dispatch_latency = sc_time(2, SC_US);
  p.jitter_seed = 3;
  HostThread t("t", p, &cpus);
  CoreWaitRun r;
  t.set_work([&](sc_time&) { r.starts.push_back(sc_time_stamp().value() / 1000); });
  Driver d("d", t);
  d.kicks = {{100, 0}};
  CoreReleaser halt("halt", cpus, vcpu, halt_ns);
  sc_start(sc_time(5, SC_MS));
  const auto v = t.stats().values();
  r.core_waits = double(v.at("core_waits"));
  r.core_wait_ps = double(v.at("core_wait_time"));
  return r;
}
}  // namespace

TEST_CASE("host thread: a core that frees during the wait for one ends the wait (host.wakeup_wait)",
          "[host_thread]") {
  // The scheduler's rule: a core left idle goes to the waiting runnable
  // thread at once; the wake-up's own delay is still paid. Without the wait
  // the thread would start at 100 + 2000 ns. The vCPU halts at 10 us, before
  // seed 3's draw (uniform up to 1 ms) ends: the thread starts then, and
  // only 7.9 us of waiting is booked.
  const CoreWaitRun r = run_core_freed_at(10000);
  CHECK(r.starts == std::vector<uint64_t>{10000});
  CHECK(r.core_waits == 1);
  CHECK(r.core_wait_ps == Approx(7900.0 * 1000));  // 10000 - 2100 ns
}

TEST_CASE("host thread: a core that frees within the wake-up delay leaves only the delay",
          "[host_thread]") {
  const CoreWaitRun r = run_core_freed_at(1000);  // halts at 1 us, during the 2 us delay
  CHECK(r.starts == std::vector<uint64_t>{2100});
  CHECK(r.core_waits == 1);
  CHECK(r.core_wait_ps == 0.0);
}

TEST_CASE("host thread: a share of the wake-ups stall, uniformly up to the longest stall", "[host_thread]") {
  // The rule, from its statement: with probability share a stall, its length
  // uniform in [0, max): mean max/2, a quarter of the stalls above 3/4 max.
  HostThread::Params p;
  p.dispatch_stall_share = 0.2;
  p.dispatch_stall_max = sc_time(4, SC_MS);
  p.jitter_seed = 11;
  HostThread a("sa", p), b("sb", p);
  const int n = 50000;
  int stalls = 0, long_stalls = 0;
  double sum_us = 0;
  for (int i = 0; i < n; ++i) {
    const sc_time d = a.stall_draw();
    CHECK(d == b.stall_draw());  // same seed, same stalls
    REQUIRE(d < sc_time(4, SC_MS));
    if (d == SC_ZERO_TIME) continue;
    ++stalls;
    sum_us += double(d.value()) / 1e6;
    long_stalls += d > sc_time(3, SC_MS);
  }
  CHECK(double(stalls) / n == Approx(0.2).margin(0.006));
  CHECK(sum_us / stalls == Approx(2000.0).epsilon(0.02));
  CHECK(double(long_stalls) / stalls == Approx(0.25).margin(0.015));
  // Without a share (or a length) nothing is drawn: the jitter sequence of a
  // thread with stalls off is the one it always had.
  HostThread::Params off = p;
  off.dispatch_stall_share = 0;
  off.dispatch_jitter = sc_time(10, SC_US);
  HostThread c("sc", off), d("sd", off);
  CHECK(c.stall_draw() == SC_ZERO_TIME);
  for (int i = 0; i < 10; ++i) CHECK(c.jitter_draw() == d.jitter_draw());
}

TEST_CASE("host thread: a stalled wake-up starts the work late and is counted", "[host_thread]") {
  HostThread::Params p;
  p.dispatch_latency = sc_time(2, SC_US);
  p.dispatch_stall_share = 1.0;  // every wake-up from sleep stalls
  p.dispatch_stall_max = sc_time(1, SC_MS);
  p.jitter_seed = 5;
  HostThread probe("probe", p);
  const sc_time first = probe.stall_draw(), second = probe.stall_draw();
  HostThread t("stalled", p);
  std::vector<uint64_t> starts;  // ps
  t.set_work([&](sc_time& local) {
    starts.push_back(sc_time_stamp().value());
    local += sc_time(500, SC_NS);
  });
  Driver drv("drv", t);
  drv.kicks = {{100, 0}, {3000000, 0}};  // at 100 ns and at 3 ms (asleep again)
  sc_start(sc_time(6, SC_MS));
  REQUIRE(starts.size() == 2);
  CHECK(starts[0] == (sc_time(100, SC_NS) + sc_time(2, SC_US) + first).value());
  CHECK(starts[1] == (sc_time(3, SC_MS) + sc_time(2, SC_US) + second).value());
  const auto v = t.stats().values();
  CHECK(v.at("wakeup_stalls") == 2);
  CHECK(v.at("wakeup_stall_time") == (first + second).value());
}

// util/aio-posix.c poll_set_started: io_poll_begin when a window opens,
// io_poll_end when the thread stops polling to sleep, then one more io_poll;
// work it finds runs at once, without the wake-up delay.
TEST_CASE("host thread: poll handlers begin with the window and end before sleeping, with a re-check",
          "[host_thread]") {
  HostThread::Params p;
  p.dispatch_latency = sc_time(1, SC_US);
  p.poll_max = sc_time(8, SC_US);
  HostThread t("t", p);
  std::vector<uint64_t> starts, begins, ends;  // ns
  int found_left = 1;  // the first end's re-check finds work
  t.add_poll_handler([&] { begins.push_back(sc_time_stamp().value() / 1000); },
                     [&] {
                       ends.push_back(sc_time_stamp().value() / 1000);
                       return found_left-- > 0;
                     });
  t.set_work([&](sc_time& local) {
    starts.push_back(sc_time_stamp().value() / 1000);
    CHECK_FALSE(t.polling());
    local += sc_time(500, SC_NS);
  });
  Driver d("d", t);
  d.kicks = {{0, 0}, {3000, 0}};
  sc_start(sc_time(30, SC_US));
  // 0 -> 1000 (asleep, then the dispatch latency); the work ends at 1500
  // and the first window (QEMU's 4 us) opens: poll begins. The kick at 3000
  // is served at once; poll mode stays on through that work (no second
  // begin), and the next window 3500..7500 closes with nothing due: poll
  // ends, its re-check finds work, which runs at 7500 without a wake-up
  // delay. Then poll begins again at 8000, ends at 12000 finding nothing,
  // and the thread sleeps.
  CHECK(starts == std::vector<uint64_t>{1000, 3000, 7500});
  CHECK(begins == std::vector<uint64_t>{1500, 8000});
  CHECK(ends == std::vector<uint64_t>{7500, 12000});
  CHECK_FALSE(t.poll_started());
  CHECK(t.wakeups_from_sleep() == 1);
  CHECK(t.wakeups_while_polling() == 1);
}
