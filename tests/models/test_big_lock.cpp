// QEMU's global lock with a waiter's wake-up (hv.bql_handoff): a pthread
// mutex is not fair, so a main loop that locks again before the woken vCPU
// thread runs keeps the lock.
#include <catch2/catch.hpp>

#include <systemc>

#include "models/big_lock.h"

using namespace sc_core;
using nvmesim::models::BigLock;

namespace {
sc_time us(double v) { return sc_time(v, SC_US); }

struct Threads : sc_module {
  BigLock& lock;
  sc_time handler_took, handler_ahead;
  SC_HAS_PROCESS(Threads);
  Threads(sc_module_name n, BigLock& l) : sc_module(n), lock(l) {
    SC_THREAD(mainloop);
    SC_THREAD(vcpu);
  }
  // Two passes with a 1 us gap (a 500 ns timer and a short ppoll), then sleep.
  void mainloop() {
    lock.acquire_mainloop();
    wait(us(10));
    lock.release_mainloop();
    wait(us(1));
    lock.acquire_mainloop();
    wait(us(9));
    lock.release_mainloop();
  }
  // An MMIO handler arrives during the first pass.
  void vcpu() {
    wait(us(2));
    handler_ahead = lock.hold_for_handler(us(1));
    handler_took = sc_time_stamp() + handler_ahead;
  }
};
}  // namespace

TEST_CASE("big lock: a woken handler loses the lock to a main loop that locks again first", "[bql]") {
  BigLock lock(us(5));
  Threads t("t", lock);
  sc_start();
  // Woken at 10 us, it runs at 15: the main loop has held it again since 11.
  // Woken again at 20, it runs at 25 and takes it.
  CHECK(t.handler_took == us(25));
  CHECK(lock.vcpu_wait_time() == us(23));
}
