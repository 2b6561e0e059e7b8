// nvmesim-bench: the yardstick for simulation speed, so that a figure holds
// across machines. It measures this machine's SystemC floor (what a timed
// wait of a thread, an SC_METHOD activation and a thread ping-pong cost)
// and the default run's cost per simulated I/O (the nvmesim binary beside
// it: 4 KiB randread, QD32, doorbell buffer on), and prints their ratio: the
// run's cost in timed waits per I/O. Both sides are CPU time, measured in
// alternating rounds, and each is its fastest round, so that other work on a
// shared machine moves the ratio as little as it can; the run's wall time is
// shown beside it.
//
//   nvmesim-bench [--ios N] [--events N] [--rounds N] [--nvmesim PATH]
//
// A benchmark, not a test: it prints figures and asserts nothing.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <systemc>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <vector>

using namespace sc_core;

extern "C" int sc_main(int, char**) { return 0; }

namespace {

// CPU time, not wall time: another program that takes the core stretches
// this one's wall time, not the CPU time it spends. (Contention for the
// caches or a shared physical core still slows both: hence the rounds.)
double cpu_seconds() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) + double(t.tv_nsec) * 1e-9;
}

double children_cpu_seconds() {
  rusage u;
  getrusage(RUSAGE_CHILDREN, &u);
  auto s = [](const timeval& t) { return double(t.tv_sec) + double(t.tv_usec) * 1e-6; };
  return s(u.ru_utime) + s(u.ru_stime);
}

// Each round measures the floor's three phases one after another in
// simulated time, each timed in CPU time from inside the kernel (a thread's
// timed waits, a method's activations by next_trigger, two threads handing
// an event back and forth), and then runs the default run. Rounds alternate
// the two, so that a machine whose speed drifts (a shared or
// frequency-scaled core) is seen on both sides; main() reports each
// figure's fastest round and the median.
struct Floor : sc_module {
  struct Round {
    double wait_ns = 0, method_ns = 0, pingpong_ns = 0;  // CPU time per event
    double io_ns = 0, io_wall_ns = 0, activations_per_io = 0;
  };
  uint64_t n;
  std::function<bool(Round&)> run_default;
  std::vector<Round> rounds;
  bool failed = false;
  sc_event ping, pong, method_start, method_done;
  uint64_t method_left = 0;
  double method_t0 = 0;
  SC_HAS_PROCESS(Floor);
  Floor(sc_module_name name, uint64_t events, unsigned round_count, std::function<bool(Round&)> run)
      : sc_module(name), n(events), run_default(std::move(run)), rounds(round_count) {
    SC_THREAD(measure);
    SC_METHOD(activation);
    sensitive << method_start;
    dont_initialize();
    SC_THREAD(ponger);
  }
  void measure() {
    for (Round& r : rounds) {
      double t0 = cpu_seconds();
      for (uint64_t i = 0; i < n; ++i) wait(1, SC_NS);
      r.wait_ns = (cpu_seconds() - t0) * 1e9 / double(n);

      method_left = n;
      method_t0 = cpu_seconds();
      method_start.notify(1, SC_NS);
      wait(method_done);
      r.method_ns = (cpu_seconds() - method_t0) * 1e9 / double(n);

      t0 = cpu_seconds();
      for (uint64_t i = 0; i < n; ++i) {
        ping.notify(1, SC_NS);
        wait(pong);
      }
      r.pingpong_ns = (cpu_seconds() - t0) * 1e9 / double(n);

      if (!run_default(r)) {
        failed = true;
        return;
      }
    }
  }
  void activation() {
    if (method_left-- > 0) {
      next_trigger(1, SC_NS);
      return;
    }
    method_done.notify(SC_ZERO_TIME);
  }
  void ponger() {
    for (;;) {
      wait(ping);
      pong.notify(1, SC_NS);
    }
  }
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

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
  uint64_t ios = 1000000, events = 2000000, round_count = 5;
  std::string nvmesim = beside_me("nvmesim");
  const char* usage =
      "usage: nvmesim-bench [--ios N (default 1000000, at least 2000)] [--events N (default 2000000, at least 1000)]\n"
      "                     [--rounds N (default 5, 1 to 99)] [--nvmesim PATH (default: beside this program)]\n";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](const char* name) -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "nvmesim-bench: error: %s: missing value\n", name);
        std::exit(2);
      }
      return argv[++i];
    };
    auto count = [&](const char* name, uint64_t low, uint64_t high) {
      const char* v = value(name);
      char* end = nullptr;
      const unsigned long long x = std::strtoull(v, &end, 10);
      if (!*v || *end || *v == '-' || x < low || x > high) {
        std::fprintf(stderr, "nvmesim-bench: error: %s: '%s' is not a whole number from %llu to %llu\n", name, v,
                     static_cast<unsigned long long>(low), static_cast<unsigned long long>(high));
        std::exit(2);
      }
      return uint64_t(x);
    };
    if (a == "--ios") ios = count("--ios", 2000, 1000000000000ull);
    else if (a == "--events") events = count("--events", 1000, 1000000000000ull);
    else if (a == "--rounds") round_count = count("--rounds", 1, 99);
    else if (a == "--nvmesim") nvmesim = value("--nvmesim");
    else if (a == "-h" || a == "--help") {
      std::printf("%s", usage);
      return 0;
    } else {
      std::fprintf(stderr, "nvmesim-bench: error: unknown option '%s' (see --help)\n", a.c_str());
      return 2;
    }
  }
  // The run's CPU time per I/O, without its set-up: the difference
  // between a run of `ios` I/Os and one of 1000.
  Floor floor("floor", events, unsigned(round_count), [&](Floor::Round& r) {
    double ignored;
    double t0 = children_cpu_seconds();
    if (run_ios_per_wall_s(nvmesim, 1000, ignored) <= 0) return false;
    const double small = children_cpu_seconds() - t0;
    t0 = children_cpu_seconds();
    const double per_s = run_ios_per_wall_s(nvmesim, ios, r.activations_per_io);
    if (per_s <= 0) return false;
    const double big = children_cpu_seconds() - t0;
    r.io_ns = (big - small) * 1e9 / double(ios - 1000);
    r.io_wall_ns = 1e9 / per_s;
    return true;
  });
  sc_start();
  if (floor.failed) {
    std::fprintf(stderr, "nvmesim-bench: error: could not run %s\n", nvmesim.c_str());
    return 1;
  }
  std::vector<double> wait_ns, method_ns, pingpong_ns, io_ns, io_wall_ns, waits_per_io;
  std::printf("CPU time per event (wall time for the run as a user sees it):\n");
  std::printf("round  timed wait  method    ping-pong  |  default run  (wall)     timed waits per I/O\n");
  for (size_t i = 0; i < floor.rounds.size(); ++i) {
    const Floor::Round& r = floor.rounds[i];
    wait_ns.push_back(r.wait_ns);
    method_ns.push_back(r.method_ns);
    pingpong_ns.push_back(r.pingpong_ns);
    io_ns.push_back(r.io_ns);
    io_wall_ns.push_back(r.io_wall_ns);
    waits_per_io.push_back(r.io_ns / r.wait_ns);
    std::printf("%5zu  %7.1f ns  %6.1f ns  %6.1f ns  |  %6.0f ns  (%6.0f ns)  %6.2f\n", i + 1, r.wait_ns, r.method_ns,
                r.pingpong_ns, r.io_ns, r.io_wall_ns, waits_per_io.back());
  }
  // Other work on a shared machine only ever slows a measurement down, so
  // each figure is its fastest round (the median is shown beside it).
  auto fastest = [](const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); };
  std::printf("SystemC floor on this machine (%llu events each, CPU time, fastest of %zu rounds; median):\n",
              static_cast<unsigned long long>(events), floor.rounds.size());
  std::printf("  thread timed wait      %8.1f ns  (%.1f)\n", fastest(wait_ns), median(wait_ns));
  std::printf("  method activation      %8.1f ns  (%.1f)\n", fastest(method_ns), median(method_ns));
  std::printf("  thread ping-pong       %8.1f ns per round trip  (%.1f)\n", fastest(pingpong_ns), median(pingpong_ns));
  const double io = fastest(io_ns), wall = fastest(io_wall_ns);
  std::printf("default spec run (4 KiB randread, QD32, %llu I/Os, fastest of the rounds): %.0f ns CPU per I/O "
              "(median %.0f); %.0f ns wall per I/O, %.0f I/Os per wall s\n",
              static_cast<unsigned long long>(ios), io, median(io_ns), wall, 1e9 / wall);
  std::printf("ratio: %.2f timed waits per I/O (median of the rounds' ratios %.2f), %.1f method activations per I/O\n",
              io / fastest(wait_ns), median(waits_per_io), io / fastest(method_ns));
  std::printf("model process activations: %.3f per I/O\n", floor.rounds.back().activations_per_io);
  return 0;
}
