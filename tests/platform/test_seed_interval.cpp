// --repeat's statistics (platform/report/seed_interval.h): Student-t
// quantiles against published table values and closed forms, and a figure's
// mean and 95% half-width on samples worked out by hand.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "nvmesim/platform/report/seed_interval.h"

using nvmesim::platform::report::seed_interval;
using nvmesim::platform::report::student_t_quantile;

TEST_CASE("seed_interval: Student-t quantiles", "[repeat]") {
  // Two-sided 95% critical values of the usual t table (e.g. NIST/SEMATECH
  // e-Handbook, 1.3.6.7.2), three decimals.
  CHECK(student_t_quantile(0.975, 1) == Approx(12.706).margin(5e-4));
  CHECK(student_t_quantile(0.975, 2) == Approx(4.303).margin(5e-4));
  CHECK(student_t_quantile(0.975, 4) == Approx(2.776).margin(5e-4));
  CHECK(student_t_quantile(0.975, 10) == Approx(2.228).margin(5e-4));
  CHECK(student_t_quantile(0.975, 29) == Approx(2.045).margin(5e-4));
  CHECK(student_t_quantile(0.975, 30) == Approx(2.042).margin(5e-4));
  CHECK(student_t_quantile(0.975, 100) == Approx(1.984).margin(5e-4));
  CHECK(student_t_quantile(0.995, 7) == Approx(3.499).margin(5e-4));
  // Closed forms: df 1 is Cauchy, t = tan(pi (p - 1/2)); df 2 has
  // t = (2p - 1) / sqrt(2 p (1 - p)).
  const double pi = std::acos(-1.0);
  for (double p : {0.6, 0.9, 0.975, 0.995}) {
    INFO(p);
    CHECK(student_t_quantile(p, 1) == Approx(std::tan(pi * (p - 0.5))).epsilon(1e-10));
    CHECK(student_t_quantile(p, 2) == Approx((2 * p - 1) / std::sqrt(2 * p * (1 - p))).epsilon(1e-10));
  }
  // Toward the normal quantile 1.959964 as df grows, from above.
  const double t999 = student_t_quantile(0.975, 999);
  CHECK(t999 > 1.959964);
  CHECK(t999 == Approx(1.962341).margin(1e-5));
  CHECK(t999 < student_t_quantile(0.975, 100));
  // Symmetric about 0; undefined outside its domain.
  CHECK(student_t_quantile(0.025, 4) == -student_t_quantile(0.975, 4));
  CHECK(student_t_quantile(0.5, 4) == 0);
  CHECK(std::isnan(student_t_quantile(0.975, 0)));
  CHECK(std::isnan(student_t_quantile(0, 4)));
  CHECK(std::isnan(student_t_quantile(1, 4)));
}

TEST_CASE("seed_interval: mean, half-width, min and max of a sample", "[repeat]") {
  // 1..5: mean 3, s^2 = (4+1+0+1+4)/4 = 2.5, half-width t(0.975,4) s/sqrt(5)
  // = 2.776445 * sqrt(0.5) = 1.963243.
  auto i = seed_interval({3, 1, 5, 2, 4});
  CHECK(i.n == 5);
  CHECK(i.mean == 3);
  CHECK(i.min == 1);
  CHECK(i.max == 5);
  CHECK(i.half_width == Approx(1.963243).margin(1e-6));
  // 100, 110, 120: s = 10, half-width 4.302653 * 10 / sqrt(3) = 24.841377.
  i = seed_interval({120, 100, 110});
  CHECK(i.mean == 110);
  CHECK(i.half_width == Approx(24.841377).margin(1e-6));
  // A 90% interval of the same: t(0.95, 2) = 2.919986, 16.858545.
  CHECK(seed_interval({120, 100, 110}, 0.90).half_width == Approx(16.858545).margin(1e-6));
  // Equal values: that value and a width of exactly 0.
  i = seed_interval({0.1, 0.1, 0.1});
  CHECK(i.mean == 0.1);
  CHECK(i.half_width == 0);
  // One value: no interval; none: nothing.
  i = seed_interval({7});
  CHECK(i.n == 1);
  CHECK(i.mean == 7);
  CHECK(std::isnan(i.half_width));
  i = seed_interval({});
  CHECK(i.n == 0);
  CHECK(std::isnan(i.mean));
  CHECK(std::isnan(i.min));
}
