// SimulationStopper (platform/cli/interrupt.h): the SystemC half of signal
// handling, beside the System it stops; the signal half needs no SystemC.
#include "nvmesim/platform/cli/interrupt.h"
#include "nvmesim/models/sim/run_control.h"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <systemc>
#include <thread>

namespace nvmesim::platform::interrupt {

namespace {

// The primitive channel whose update phase calls sc_stop().
struct StopChannel : sc_core::sc_prim_channel {
  StopChannel() : sc_core::sc_prim_channel(sc_core::sc_gen_unique_name("interrupt_stop")) {}
  void update() override {
    if (received() && !stopped()) {
      note_stopped();
      sc_core::sc_stop();
    }
  }
};

}  // namespace

struct SimulationStopper::Impl {
  StopChannel channel;
  std::mutex mutex;
  std::condition_variable wake;  // the run ended: the watcher returns at once
  bool done = false;
  std::thread watcher;
};

SimulationStopper::SimulationStopper() : impl_(new Impl) {
  clear_stopped();
  models::run_control::stop_issuing = false;
  Impl* impl = impl_;
  // Polls the flag: a signal handler may not take the lock that
  // async_request_update() takes. 10 ms of wall time is quick enough.
  impl->watcher = std::thread([impl] {
    std::unique_lock<std::mutex> lock(impl->mutex);
    std::chrono::steady_clock::time_point drain_since{};
    while (!impl->done) {
      if (received()) {
        const auto now = std::chrono::steady_clock::now();
        if (!models::run_control::stop_requested()) {
          // First: drain (no new I/O; the run ends when those in flight complete).
          models::run_control::stop_issuing = true;
          drain_since = now;
        } else if (received_count() > 1 || now - drain_since >= std::chrono::milliseconds(kDrainWallMs)) {
          // A second signal, or a drain that does not end: stop now.
          impl->channel.async_request_update();
          return;
        }
      }
      impl->wake.wait_for(lock, std::chrono::milliseconds(10));
    }
  });
}

SimulationStopper::~SimulationStopper() {
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    impl_->done = true;
  }
  impl_->wake.notify_one();
  impl_->watcher.join();
  delete impl_;
}

bool SimulationStopper::stopped() { return interrupt::stopped() || models::run_control::stop_requested(); }

}  // namespace nvmesim::platform::interrupt
