#include "nvmesim/platform/system/progress.h"

#include <cstdlib>
#include <unistd.h>

#include "nvmesim/platform/config/params.h"

namespace nvmesim::platform {

namespace {

constexpr double kRefreshSeconds = 0.5;  // between two lines

std::string seconds_text(double s) {
  char b[32];
  if (s < 60) std::snprintf(b, sizeof b, "%.0fs", s);
  else std::snprintf(b, sizeof b, "%dm%02ds", int(s) / 60, int(s) % 60);
  return b;
}

}  // namespace

Progress::Progress(uint64_t total_ios, double runtime_ns, std::string label, std::FILE* out, double quiet_s)
    : total_ios_(total_ios), runtime_ns_(runtime_ns), label_(std::move(label)), out_(out),
      start_(std::chrono::steady_clock::now()), quiet_s_(quiet_s) {}

Progress::~Progress() {
  if (printed_) {
    std::fputs("\r\033[K", out_);  // leave the terminal as the results expect it
    std::fflush(out_);
  }
}

bool Progress::wanted() { return ::isatty(STDERR_FILENO) && !std::getenv("NVMESIM_NO_PROGRESS"); }

std::string Progress::line(uint64_t ios, double sim_ns, double wall_s) const {
  // Done as a fraction: I/Os of the total, or simulated time of the runtime.
  double done = 0;
  if (total_ios_) done = double(ios) / double(total_ios_);
  else if (runtime_ns_ > 0) done = sim_ns / runtime_ns_;
  if (done > 1) done = 1;
  const double rate = wall_s > 0 ? double(ios) / wall_s : 0;
  char b[200];
  std::snprintf(b, sizeof b, "%s%s%.1f%% done, %llu I/Os, %s simulated, %.0f I/Os per wall s, ETA %s",
                label_.c_str(), label_.empty() ? "" : ": ", 100 * done,
                static_cast<unsigned long long>(ios), format_time_ns(sim_ns).c_str(), rate,
                done > 0 ? seconds_text(wall_s * (1 - done) / done).c_str() : "?");
  return "nvmesim: [" + std::string(b) + "]";
}

void Progress::update(uint64_t ios, double sim_ns) {
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  if (wall_s < quiet_s_ || wall_s - last_print_s_ < kRefreshSeconds) return;
  last_print_s_ = wall_s;
  printed_ = true;
  std::fprintf(out_, "\r\033[K%s", line(ios, sim_ns, wall_s).c_str());
  std::fflush(out_);
}

}  // namespace nvmesim::platform
