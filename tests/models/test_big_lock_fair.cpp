// QEMU's global lock without a wake-up cost (hv.bql_handoff = 0): waiters
// are served in order, so the handler that waited takes the lock at the
// main loop's release, and the main loop's next pass waits for its hold.
#include <catch2/catch.hpp>

#include <systemc>

#include "models/big_lock.h"

using namespace sc_core;
using nvmesim::models::BigLock;

namespace {
sc_time us(double v) { return sc_time(v, SC_US); }

struct Threads : sc_module {
  BigLock& lock;
  sc_time handler_took, second_pass;
  SC_HAS_PROCESS(Threads);
  Threads(sc_module_name n, BigLock& l) : sc_module(n), lock(l) {
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
    const sc_time ahead = lock.hold_for_handler(us(3));
    handler_took = sc_time_stamp() + ahead;
  }
};
}  // namespace

TEST_CASE("big lock: without a handoff the waiting handler is served at the release", "[bql]") {
  BigLock lock;
  Threads t("t", lock);
  sc_start();
  CHECK(t.handler_took == us(10));
  CHECK(t.second_pass == us(13));  // after the handler's 3 us hold
  CHECK(lock.vcpu_wait_time() == us(8));
}
