#include "nvmesim/models/host/wakeup_distribution.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace nvmesim::models {

std::vector<WakeupTable> sorted_wakeup_tables(std::vector<WakeupTable> tables) {
  if (tables.empty()) throw std::logic_error("wake-up tables: none");
  std::sort(tables.begin(), tables.end(), [](const WakeupTable& a, const WakeupTable& b) { return a.idle_ns < b.idle_ns; });
  for (const WakeupTable& t : tables) {
    const std::string what = std::string("wake-up table ") + t.source + ": ";
    if (t.size < 2 || t.quantile[0] != 0.0 || t.quantile[t.size - 1] != 1.0 || !(t.idle_ns > 0))
      throw std::logic_error(what + "needs quantiles from 0 to 1 and an idle time");
    for (size_t k = 1; k < t.size; ++k)
      if (t.quantile[k] <= t.quantile[k - 1] || t.delay_ns[k] < t.delay_ns[k - 1])
        throw std::logic_error(what + "quantiles must rise and delays must not fall");
  }
  return tables;
}

double wakeup_quantile_ns(const WakeupTable& t, double u) {
  u = std::clamp(u, 0.0, 1.0);
  // The first quantile >= u (std::lower_bound's answer: the quantiles
  // rise), found from where evenly spaced quantiles would put it: the
  // measured tables are in steps of 1% but for their tail, so the walk is
  // a step or two instead of a binary search's seven (run per host wake-up).
  size_t k = std::min(t.size - 1, size_t(u * double(t.size - 1)));
  while (k > 0 && t.quantile[k - 1] >= u) --k;
  while (t.quantile[k] < u) ++k;  // ends: the last quantile is 1 >= u
  if (k == 0) return t.delay_ns[0];
  const double q0 = t.quantile[k - 1], q1 = t.quantile[k];
  const double w = (u - q0) / (q1 - q0);
  return t.delay_ns[k - 1] + w * (t.delay_ns[k] - t.delay_ns[k - 1]);
}

double wakeup_delay_ns(double idle_ns, double u, const std::vector<WakeupTable>& tables) {
  if (idle_ns <= tables.front().idle_ns) return wakeup_quantile_ns(tables.front(), u);
  if (idle_ns >= tables.back().idle_ns) return wakeup_quantile_ns(tables.back(), u);
  size_t k = 1;
  while (tables[k].idle_ns < idle_ns) ++k;  // tables[k - 1] < idle <= tables[k]
  const WakeupTable& lo = tables[k - 1];
  const WakeupTable& hi = tables[k];
  const double w = std::log(idle_ns / lo.idle_ns) / std::log(hi.idle_ns / lo.idle_ns);
  return (1 - w) * wakeup_quantile_ns(lo, u) + w * wakeup_quantile_ns(hi, u);
}

sc_core::sc_time wakeup_draw(const sc_core::sc_time& idle, double u) {
  return sc_core::sc_time(wakeup_delay_ns(idle.to_seconds() * 1e9, u), sc_core::SC_NS);
}

double UniformStream::next() {
  if (state_ == 0) state_ = seed_ * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
  uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);  // splitmix64
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return (double(z >> 11) + 1.0) / 9007199254740992.0;  // (0, 1]
}

}  // namespace nvmesim::models
