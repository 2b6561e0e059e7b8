#include "platform/interrupt.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <csignal>
#include <cstring>
#include <systemc>
#include <thread>

namespace nvmesim::platform::interrupt {

namespace {

volatile std::sig_atomic_t g_signal = 0;
// Lock-free atomics are async-signal-safe; 0 is a free slot.
std::atomic<pid_t> g_children[kMaxChildren];
std::atomic<bool> g_stopped{false};

extern "C" void on_signal(int sig) {
  if (!g_signal) g_signal = sig;
  for (auto& c : g_children) {
    const pid_t pid = c.load();
    if (pid > 0) ::kill(pid, sig);
  }
}

// The primitive channel whose update phase calls sc_stop().
struct StopChannel : sc_core::sc_prim_channel {
  StopChannel() : sc_core::sc_prim_channel(sc_core::sc_gen_unique_name("interrupt_stop")) {}
  void update() override {
    if (g_signal && !g_stopped) {
      g_stopped = true;
      sc_core::sc_stop();
    }
  }
};

}  // namespace

void install() {
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
}

int received() { return g_signal; }

const char* signal_name(int sig) { return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "a signal"; }

int exit_code() { return 128 + int(g_signal); }

void add_child(pid_t pid) {
  for (auto& c : g_children) {
    pid_t free = 0;
    if (c.compare_exchange_strong(free, pid)) break;
  }
  if (g_signal) ::kill(pid, g_signal);  // the signal came before the child was known
}

void remove_child(pid_t pid) {
  for (auto& c : g_children) {
    pid_t mine = pid;
    if (c.compare_exchange_strong(mine, 0)) break;
  }
}

struct SimulationStopper::Impl {
  StopChannel channel;
  std::mutex mutex;
  std::condition_variable wake;  // the run ended: the watcher returns at once
  bool done = false;
  std::thread watcher;
};

SimulationStopper::SimulationStopper() : impl_(new Impl) {
  g_stopped = false;
  Impl* impl = impl_;
  // Polls the flag: a signal handler may not take the lock that
  // async_request_update() takes. 10 ms of wall time is quick enough.
  impl->watcher = std::thread([impl] {
    std::unique_lock<std::mutex> lock(impl->mutex);
    while (!impl->done) {
      if (g_signal) {
        impl->channel.async_request_update();
        return;
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

bool SimulationStopper::stopped() { return g_stopped; }

}  // namespace nvmesim::platform::interrupt
