// One DoorbellNotifier per hv.notify mode, driven against a recording
// target and real host threads: where the processing runs, when it starts,
// what an ioeventfd fault does, which queues a timer makes due.
#include <catch2/catch.hpp>

#include <functional>
#include <memory>
#include <systemc>
#include <utility>
#include <vector>

#include "nvmesim/models/host/doorbell_notifier.h"
#include "nvmesim/models/host/doorbell_notifier_ioeventfd.h"
#include "nvmesim/models/host/doorbell_notifier_timer.h"
#include "nvmesim/models/host/host_thread.h"

using namespace sc_core;
using namespace nvmesim::models;

namespace {

sc_time ns(double v) { return sc_time(v, SC_NS); }

// Two host threads; queue 0 and 1 on thread 0, queue 2 on thread 1.
struct Target : NotifyTarget {
  std::vector<std::unique_ptr<HostThread>> threads;
  std::vector<std::vector<uint64_t>> starts;  // per thread: work start times (ns)
  std::vector<bool> running{false, false};
  std::vector<std::pair<unsigned, sc_time>> inline_runs;
  std::vector<uint16_t> sq_marks;
  std::vector<std::pair<uint16_t, bool>> cq_marks;
  explicit Target(const HostThread::Params& p) : starts(2) {
    for (unsigned i = 0; i < 2; ++i) {
      threads.push_back(std::make_unique<HostThread>(("t" + std::to_string(i)).c_str(), p));
      threads[i]->set_work([this, i](sc_time&) { starts[i].push_back(sc_time_stamp().value() / 1000); });
    }
  }
  unsigned thread_count() const override { return 2; }
  unsigned thread_of(uint16_t qid) const override { return qid == 2 ? 1 : 0; }
  HostThread& thread(unsigned index) override { return *threads[index]; }
  bool emulating(unsigned index) const override { return running[index]; }
  void emulate_inline(unsigned index, sc_time& delay) override {
    inline_runs.push_back({index, delay});
    delay += ns(400);  // the work it did
  }
  void mark_sq(uint16_t qid) override { sq_marks.push_back(qid); }
  void mark_cq(uint16_t qid, bool shadow) override { cq_marks.push_back({qid, shadow}); }
};

HostThread::Params thread_params() {
  HostThread::Params p;
  p.dispatch_latency = ns(2000);
  p.dispatch_cost = ns(100);
  return p;
}

// Runs `script` in an SC_THREAD (the vCPU's exit would).
struct Script : sc_module {
  std::function<void()> script;
  SC_HAS_PROCESS(Script);
  Script(sc_module_name n, std::function<void()> s) : sc_module(n), script(std::move(s)) {
    SC_THREAD(run);
  }
  void run() { script(); }
};

NotifierParams params(NotifyMode mode) {
  NotifierParams p;
  p.mode = mode;
  p.queues = 3;
  p.timer_delay = ns(1000);
  return p;
}

}  // namespace

TEST_CASE("notifier: deferred hands the doorbell to the queue's thread after its dispatch latency",
          "[notifier]") {
  Target t(thread_params());
  auto n = make_doorbell_notifier(params(NotifyMode::Deferred), t);
  CHECK(n->mode() == NotifyMode::Deferred);
  CHECK_FALSE(n->accepts_ioeventfd());
  Script s("s", [&] {
    wait(ns(100));
    sc_time delay = ns(50);
    n->doorbell_written(1, true, delay);
    n->doorbell_written(2, false, delay);
    CHECK(delay == ns(50));  // the exit returns at once
  });
  sc_start(ns(10000));
  CHECK(t.inline_runs.empty());
  CHECK(t.starts[0] == std::vector<uint64_t>{2150});  // 100 + 50 + 2000
  CHECK(t.starts[1] == std::vector<uint64_t>{2150});
}

TEST_CASE("notifier: sync runs the emulation inside the exit unless it already runs", "[notifier]") {
  Target t(thread_params());
  auto n = make_doorbell_notifier(params(NotifyMode::Sync), t);
  Script s("s", [&] {
    sc_time delay = ns(30);
    n->doorbell_written(2, true, delay);
    CHECK(delay == ns(430));  // the exit lasted the work
    t.running[0] = true;      // thread 0's emulation runs (waiting inside a DMA)
    sc_time again = ns(30);
    n->doorbell_written(1, true, again);
    CHECK(again == ns(30));
  });
  sc_start(ns(10000));
  REQUIRE(t.inline_runs.size() == 1);
  CHECK(t.inline_runs[0].first == 1);
  CHECK(t.inline_runs[0].second == ns(30));
  CHECK(t.starts[0] == std::vector<uint64_t>{2030});  // kicked instead
  CHECK(t.starts[1].empty());
}

TEST_CASE("notifier: ioeventfd with lost wake-ups drops every signal of a still-set eventfd",
          "[notifier]") {
  Target t(thread_params());
  NotifierParams p = params(NotifyMode::Ioeventfd);
  p.eventfd_fault = EventfdFault::LostWakeups;
  auto n = make_doorbell_notifier(p, t);
  CHECK(n->accepts_ioeventfd());
  std::vector<bool> delivered;
  Script s("s", [&] {
    delivered.push_back(n->eventfd_signalled(2, 1, SC_ZERO_TIME));  // SQ 1: wakes the thread
    delivered.push_back(n->eventfd_signalled(2, 1, SC_ZERO_TIME));  // still set: lost
    delivered.push_back(n->eventfd_signalled(3, 1, SC_ZERO_TIME));  // CQ 1: its own fd
    wait(ns(5000));
    delivered.push_back(n->eventfd_signalled(2, 1, SC_ZERO_TIME));  // lost, much later too
    n->on_controller_reset();                                        // queues and fds torn down
    delivered.push_back(n->eventfd_signalled(2, 1, SC_ZERO_TIME));
  });
  sc_start(ns(20000));
  CHECK(delivered == std::vector<bool>{true, false, true, false, true});
  CHECK(t.starts[0] == std::vector<uint64_t>{2000, 7000});
  CHECK(n->on_emulation_start(0) == 0);  // nothing re-runs in this reading
}

TEST_CASE("notifier: ioeventfd with a spinning fd re-runs its handler on each emulation",
          "[notifier]") {
  Target t(thread_params());
  NotifierParams p = params(NotifyMode::Ioeventfd);
  p.eventfd_fault = EventfdFault::Spin;
  IoeventfdNotifier n(t, p.queues, p.eventfd_fault);
  Script s("s", [&] {
    CHECK(n.eventfd_signalled(4, 2, SC_ZERO_TIME));  // SQ 2, on thread 1
    CHECK(n.eventfd_set(4));
    CHECK(t.threads[1]->spinning());
    CHECK_FALSE(t.threads[0]->spinning());
    CHECK(n.eventfd_signalled(5, 2, SC_ZERO_TIME));  // CQ 2
    CHECK(n.eventfd_signalled(5, 2, SC_ZERO_TIME));  // already stuck: not twice
  });
  sc_start(ns(100));
  CHECK(n.on_emulation_start(0) == 0);
  CHECK(n.on_emulation_start(1) == 2);
  CHECK(t.sq_marks == std::vector<uint16_t>{2});
  CHECK(t.cq_marks == std::vector<std::pair<uint16_t, bool>>{{2, true}});  // reads the shadow head
  n.on_controller_reset();
  CHECK_FALSE(t.threads[1]->spinning());
  CHECK_FALSE(n.eventfd_set(4));
  CHECK(n.on_emulation_start(1) == 0);
}

TEST_CASE("notifier: ioeventfd without a fault delivers every signal", "[notifier]") {
  Target t(thread_params());
  auto n = make_doorbell_notifier(params(NotifyMode::Ioeventfd), t);
  Script s("s", [&] {
    for (int i = 0; i < 3; ++i) CHECK(n->eventfd_signalled(2, 1, SC_ZERO_TIME));
    sc_time delay = ns(10);
    n->doorbell_written(0, true, delay);  // the admin queue: plain MMIO to the thread
  });
  sc_start(ns(10000));
  CHECK(t.starts[0] == std::vector<uint64_t>{2000});  // one wake-up for all four
  CHECK_FALSE(t.threads[0]->spinning());
}

TEST_CASE("notifier: timer processes an I/O queue when its timer fires, the admin queue at once",
          "[notifier]") {
  Target t(thread_params());
  TimerNotifier n(t, 3, ns(1000));
  std::vector<bool> due;
  Script s("s", [&] {
    sc_time delay = ns(100);
    n.doorbell_written(1, true, delay);       // SQ 1: timer at 100 + 1000
    CHECK(n.sq_deadline(1) == ns(1100));
    CHECK(delay == ns(100));
    wait(ns(500));
    due.push_back(n.sq_due(1));               // 500: not yet
    sc_time later = ns(0);
    n.doorbell_written(1, true, later);       // timer_mod replaces it: 1500
    CHECK(n.sq_deadline(1) == ns(1500));
    wait(ns(1000));
    due.push_back(n.sq_due(1));               // 1500: fired
    due.push_back(n.sq_due(1));               // served: no longer due
    due.push_back(n.sq_due(0));               // the admin SQ is always due
    wait(ns(3000));
    sc_time admin = ns(0);
    n.doorbell_written(0, true, admin);       // kicked: dispatch latency
  });
  sc_start(ns(10000));
  CHECK(due == std::vector<bool>{false, true, false, true});
  // Arming the timer notifies the sleeping thread (QEMU's timer_mod ->
  // qemu_notify_event): it runs after its dispatch latency from the first
  // arming (100 + 2000), when the re-armed deadline (1500) has passed.
  CHECK(t.starts[0] == std::vector<uint64_t>{2100, 6500});
}

TEST_CASE("notifier: timer posts a CQ only after its timer fired before the pass", "[notifier]") {
  Target t(thread_params());
  TimerNotifier n(t, 3, ns(1000));
  std::vector<bool> due;
  Script s("s", [&] {
    n.completion_queued(1, ns(200));          // CQ 1: 200 + 1000
    CHECK(n.cq_deadline(1) == ns(1200));
    n.on_pass_start(0, 3);
    due.push_back(n.cq_due(1));               // 0: not fired
    due.push_back(n.cq_due(0));               // admin CQ: always
    wait(ns(1200));
    n.on_pass_start(1, 3);                    // thread 1 does not own CQ 1
    due.push_back(n.cq_due(1));
    n.on_pass_start(0, 3);
    due.push_back(n.cq_due(1));               // fired
    due.push_back(n.cq_due(1));               // consumed
    CHECK(n.cq_deadline(1) == SC_ZERO_TIME);
    n.sq_work_left(2, ns(50));                // SQ 2 keeps work: 1200 + 50 + 1000
    CHECK(n.sq_deadline(2) == ns(2250));
    n.sq_work_left(2, ns(500));               // already armed: kept
    CHECK(n.sq_deadline(2) == ns(2250));
    n.on_emulation_end(1);                    // arms thread 1 for it
    n.on_emulation_end(0);                    // nothing left on thread 0: its timer is cancelled
  });
  sc_start(ns(10000));
  CHECK(due == std::vector<bool>{false, true, false, true, false});
  CHECK(t.starts[0].empty());
  // Thread 1 slept: armed at 1200 for 2250, it wakes after its dispatch
  // latency, at 1200 + 2000.
  CHECK(t.starts[1] == std::vector<uint64_t>{3200});
}
