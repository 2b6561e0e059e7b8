// A figure's spread over seeds (--repeat N, platform/system/repeat.h): the
// mean of its N per-seed values with the two-sided Student-t confidence
// interval's half-width, t(1 - (1 - confidence) / 2, N - 1) * s / sqrt(N),
// s the sample standard deviation (N - 1 in its denominator), and the
// values' min and max. Plain C++ (no SystemC).
#pragma once

#include <cstddef>
#include <vector>

namespace nvmesim::platform::report {

// The p quantile of Student's t distribution with `df` degrees of freedom
// (0 < p < 1, df >= 1), exact to about 1e-12: the finite series of
// Abramowitz & Stegun 26.7.3/26.7.4 for P(|T| < t) at integer df, inverted
// by bisection. NaN outside the domain. t(0.975, 1) = 12.7062,
// t(0.975, 4) = 2.7764, t(0.975, 29) = 2.0452.
double student_t_quantile(double p, unsigned df);

struct SeedInterval {
  size_t n = 0;             // values (seeds)
  double mean = 0;          // NaN when n == 0
  double half_width = 0;    // NaN when n < 2
  double min = 0, max = 0;  // NaN when n == 0
};

// `confidence` in (0, 1): 0.95 gives the 95% interval.
SeedInterval seed_interval(const std::vector<double>& values, double confidence = 0.95);

}  // namespace nvmesim::platform::report
