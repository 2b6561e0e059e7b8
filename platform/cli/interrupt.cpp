#include "nvmesim/platform/cli/interrupt.h"

#include <atomic>
#include <csignal>
#include <cstring>

namespace nvmesim::platform::interrupt {

namespace {

volatile std::sig_atomic_t g_signal = 0;
volatile std::sig_atomic_t g_count = 0;  // signals received so far
// Lock-free atomics are async-signal-safe; 0 is a free slot.
std::atomic<pid_t> g_children[kMaxChildren];
std::atomic<bool> g_stopped{false};

extern "C" void on_signal(int sig) {
  if (!g_signal) g_signal = sig;
  if (g_count < 1000) g_count = g_count + 1;
  for (auto& c : g_children) {
    const pid_t pid = c.load();
    if (pid > 0) ::kill(pid, sig);
  }
}

}  // namespace

void install() {
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
  ::sigaction(SIGHUP, &sa, nullptr);  // a closed terminal: stop as for SIGTERM (129), no temp file left
}

int received() { return g_signal; }
int received_count() { return g_count; }

const char* signal_name(int sig) {
  return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : sig == SIGHUP ? "SIGHUP" : "a signal";
}

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

void note_stopped() { g_stopped = true; }
void clear_stopped() { g_stopped = false; }
bool stopped() { return g_stopped; }

}  // namespace nvmesim::platform::interrupt
