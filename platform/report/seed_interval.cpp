#include "nvmesim/platform/report/seed_interval.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace nvmesim::platform::report {

namespace {

constexpr double kPi = 3.14159265358979323846;

// P(|T| < t) for t = sqrt(df) * tan(theta), Abramowitz & Stegun 26.7.3 (df
// odd) and 26.7.4 (df even): a finite sum of powers of cos(theta), every
// term positive, so it is accurate for any df. Increasing in theta.
double two_sided(double theta, unsigned df) {
  const double s = std::sin(theta), c = std::cos(theta), c2 = c * c;
  if (df % 2 == 0) {
    // sin(theta) * (1 + 1/2 c^2 + 1*3/(2*4) c^4 + ... + 1*3..(df-3)/(2*4..(df-2)) c^(df-2))
    double term = 1, sum = 1;
    for (unsigned k = 2; k + 2 <= df; k += 2) {
      term *= double(k - 1) / double(k) * c2;
      sum += term;
    }
    return s * sum;
  }
  if (df == 1) return 2 * theta / kPi;
  // 2/pi * (theta + sin(theta) * (c + 2/3 c^3 + 2*4/(3*5) c^5 + ... + 2*4..(df-3)/(3*5..(df-2)) c^(df-2)))
  double term = c, sum = c;
  for (unsigned k = 3; k + 2 <= df; k += 2) {
    term *= double(k - 1) / double(k) * c2;
    sum += term;
  }
  return 2 / kPi * (theta + s * sum);
}

}  // namespace

double student_t_quantile(double p, unsigned df) {
  if (df == 0 || !(p > 0 && p < 1)) return std::numeric_limits<double>::quiet_NaN();
  if (p == 0.5) return 0;
  if (p < 0.5) return -student_t_quantile(1 - p, df);
  // Solve P(|T| < t) = 2p - 1 for theta in (0, pi/2), then t = sqrt(df) tan(theta).
  const double target = 2 * p - 1;
  double lo = 0, hi = kPi / 2;
  for (int i = 0; i < 200 && hi - lo > 0; ++i) {
    const double mid = (lo + hi) / 2;
    if (mid <= lo || mid >= hi) break;
    (two_sided(mid, df) < target ? lo : hi) = mid;
  }
  return std::sqrt(double(df)) * std::tan((lo + hi) / 2);
}

SeedInterval seed_interval(const std::vector<double>& values, double confidence) {
  constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  SeedInterval r;
  r.n = values.size();
  if (values.empty()) {
    r.mean = r.half_width = r.min = r.max = nan;
    return r;
  }
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  r.min = *lo;
  r.max = *hi;
  // Offsets from the minimum: equal values give exactly that value and a
  // zero width (a plain sum / n of 0.1s is not 0.1).
  double offsets = 0;
  for (double v : values) offsets += v - r.min;
  r.mean = r.min + offsets / double(r.n);
  if (r.n < 2) {
    r.half_width = nan;
    return r;
  }
  double squares = 0;
  for (double v : values) squares += (v - r.mean) * (v - r.mean);
  const double sd = std::sqrt(squares / double(r.n - 1));
  r.half_width = sd == 0 ? 0 : student_t_quantile(1 - (1 - confidence) / 2, unsigned(r.n - 1)) * sd /
                                    std::sqrt(double(r.n));
  return r;
}

}  // namespace nvmesim::platform::report
