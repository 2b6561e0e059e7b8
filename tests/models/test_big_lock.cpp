// QEMU's global lock (models/host/big_lock.h): with a waiter's wake-up
// (hv.bql_handoff) a pthread mutex is not fair, so a main loop that locks
// again before the woken vCPU thread runs keeps the lock; without it,
// waiters are served in order.
#include <catch2/catch.hpp>

#include <systemc>

#include "nvmesim/models/host/big_lock.h"

using namespace sc_core;
using nvmesim::models::BigLock;

namespace {
sc_time us(double v) { return sc_time(v, SC_US); }

// The main loop: two passes with a 1 us gap (a 500 ns timer and a short
// ppoll), then sleep. A vCPU's MMIO handler arrives during the first pass
// and holds the lock for `hold`.
struct Threads : sc_module {
  BigLock& lock;
  sc_time hold, handler_took, second_pass;
  SC_HAS_PROCESS(Threads);
  Threads(sc_module_name n, BigLock& l, const sc_time& h) : sc_module(n), lock(l), hold(h) {
    SC_THREAD(mainloop);
    SC_THREAD(vcpu);
  }
  void mainloop() {
    lock.acquire_mainloop();
    wait(us(10));
    lock.release_mainloop();
    wait(us(1));
    lock.acquire_mainloop();
    second_pass = sc_time_stamp();
    wait(us(9));
    lock.release_mainloop();
  }
  void vcpu() {
    wait(us(2));
    const sc_time ahead = lock.hold_for_handler(hold);
    handler_took = sc_time_stamp() + ahead;
  }
};
}  // namespace

TEST_CASE("big lock: a woken handler loses the lock to a main loop that locks again first", "[bql]") {
  BigLock lock(us(5));
  Threads t("t", lock, us(1));
  sc_start();
  // Woken at 10 us, it runs at 15: the main loop has held it again since 11.
  // Woken again at 20, it runs at 25 and takes it.
  CHECK(t.second_pass == us(11));
  CHECK(t.handler_took == us(25));
  CHECK(lock.vcpu_wait_time() == us(23));
}

TEST_CASE("big lock: without a handoff the waiting handler is served at the release", "[bql]") {
  BigLock lock;
  Threads t("t", lock, us(3));
  sc_start();
  CHECK(t.handler_took == us(10));
  CHECK(t.second_pass == us(13));  // after the handler's 3 us hold
  CHECK(lock.vcpu_wait_time() == us(8));
}
