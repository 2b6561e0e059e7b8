// nvmesim-bench: the yardstick for simulation speed, so that a figure holds
// across machines. It measures this machine's SystemC floor (what a timed
// wait of a thread, an SC_METHOD activation and a thread ping-pong cost in
// wall time) and the default run's wall time per simulated I/O (a run of
// the nvmesim binary beside it: 4 KiB randread, QD32, doorbell buffer on),
// and prints their ratio: the run's cost in timed waits per I/O.
//
//   nvmesim-bench [--ios N] [--events N] [--nvmesim PATH]
//
// A benchmark, not a test: it prints figures and asserts nothing.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <systemc>
#include <unistd.h>

using namespace sc_core;
using Clock = std::chrono::steady_clock;

extern "C" int sc_main(int, char**) { return 0; }

namespace {

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Three phases one after another in simulated time, each timed in wall time
// from inside the kernel: a thread's timed waits, a method's activations
// (next_trigger), and two threads handing an event back and forth.
struct Floor : sc_module {
  uint64_t n;
  double wait_s = 0, method_s = 0, pingpong_s = 0;
  sc_event ping, pong, method_start, pingpong_start;
  uint64_t method_left = 0, pongs = 0;
  Clock::time_point method_t0;
  SC_HAS_PROCESS(Floor);
  Floor(sc_module_name name, uint64_t events) : sc_module(name), n(events) {
    SC_THREAD(waits);
    SC_METHOD(activation);
    sensitive << method_start;
    dont_initialize();
    SC_THREAD(pinger);
    SC_THREAD(ponger);
  }
  void waits() {
    const auto t0 = Clock::now();
    for (uint64_t i = 0; i < n; ++i) wait(1, SC_NS);
    wait_s = seconds_since(t0);
    method_left = n;
    method_t0 = Clock::now();
    method_start.notify(1, SC_NS);
  }
  void activation() {
    if (method_left-- > 0) {
      next_trigger(1, SC_NS);
      return;
    }
    method_s = seconds_since(method_t0);
    pingpong_start.notify(1, SC_NS);
  }
  void pinger() {
    wait(pingpong_start);
    const auto t0 = Clock::now();
    for (uint64_t i = 0; i < n; ++i) {
      ping.notify(1, SC_NS);
      wait(pong);
    }
    pingpong_s = seconds_since(t0);
  }
  void ponger() {
    for (;;) {
      wait(ping);
      pong.notify(1, SC_NS);
    }
  }
};

double json_number(const std::string& doc, const std::string& key) {
  const std::string quoted = "\"" + key + "\": ";
  const size_t at = doc.find(quoted);
  return at == std::string::npos ? 0 : std::atof(doc.c_str() + at + quoted.size());
}

// The default run's I/Os per wall second and the model's process
// activations per I/O, from nvmesim's --host-stats JSON.
double run_ios_per_wall_s(const std::string& nvmesim, uint64_t ios, double& activations_per_io) {
  const std::string cmd = nvmesim + " --nvme.dbbuf=spec --number_ios=" + std::to_string(ios) +
                          " --host-stats --output-format=json 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return 0;
  std::string out;
  char buf[4096];
  size_t got;
  while ((got = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, got);
  if (pclose(p) != 0) return 0;
  activations_per_io = json_number(out, "activations_per_io");
  return json_number(out, "ios_per_wall_s");
}

std::string beside_me(const char* name) {
  char self[4096];
  const ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  if (len <= 0) return name;
  self[len] = 0;
  std::string dir(self);
  return dir.substr(0, dir.rfind('/') + 1) + name;
}

}  // namespace

int main(int argc, char** argv) {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
  uint64_t ios = 1000000, events = 2000000;
  std::string nvmesim = beside_me("nvmesim");
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](const char* name) -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "nvmesim-bench: error: %s: missing value\n", name);
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--ios") ios = std::strtoull(value("--ios"), nullptr, 10);
    else if (a == "--events") events = std::strtoull(value("--events"), nullptr, 10);
    else if (a == "--nvmesim") nvmesim = value("--nvmesim");
    else if (a == "-h" || a == "--help") {
      std::printf("usage: nvmesim-bench [--ios N (default 1000000)] [--events N (default 2000000)] [--nvmesim PATH]\n");
      return 0;
    } else {
      std::fprintf(stderr, "nvmesim-bench: error: unknown option '%s' (see --help)\n", a.c_str());
      return 2;
    }
  }
  if (ios < 1000 || events < 1000) {
    std::fprintf(stderr, "nvmesim-bench: error: --ios and --events: at least 1000\n");
    return 2;
  }
  Floor floor("floor", events);
  sc_start();
  const double wait_ns = floor.wait_s * 1e9 / double(events);
  const double method_ns = floor.method_s * 1e9 / double(events);
  const double pingpong_ns = floor.pingpong_s * 1e9 / double(events);
  std::printf("SystemC floor on this machine (%llu events each):\n", static_cast<unsigned long long>(events));
  std::printf("  thread timed wait      %8.1f ns\n", wait_ns);
  std::printf("  method activation      %8.1f ns\n", method_ns);
  std::printf("  thread ping-pong       %8.1f ns per round trip\n", pingpong_ns);
  double activations_per_io = 0;
  const double per_s = run_ios_per_wall_s(nvmesim, ios, activations_per_io);
  if (per_s <= 0) {
    std::fprintf(stderr, "nvmesim-bench: error: could not run %s\n", nvmesim.c_str());
    return 1;
  }
  const double io_ns = 1e9 / per_s;
  std::printf("default spec run (4 KiB randread, QD32, %llu I/Os): %.0f I/Os per wall s, %.0f ns per I/O\n",
              static_cast<unsigned long long>(ios), per_s, io_ns);
  std::printf("ratio: %.1f timed waits per I/O, %.1f method activations per I/O\n", io_ns / wait_ns,
              io_ns / method_ns);
  std::printf("model process activations: %.3f per I/O\n", activations_per_io);
  return 0;
}
