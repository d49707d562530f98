// The double-double logarithm and cell deviances of the saddle point
// (<ltt/detail/double_double.hpp>, <ltt/detail/saddle_point.hpp>) against 113-bit __float128
// references (libquadmath): log to 2^-66 relative, bd0 to 2^-62, the bars of their comments with
// a margin of about 4 over the measured worst (2^-68.4 and 2^-64.9).

#include <doctest/doctest.h>

#include <quadmath.h>

#include <cmath>
#include <random>

#include <ltt/detail/saddle_point.hpp>

namespace {

using ltt::detail::DoubleDouble;
using ltt::detail::Four;

__float128 value(const DoubleDouble<Four>& x, int lane) {
  return static_cast<__float128>(x.hi[lane]) + static_cast<__float128>(x.lo[lane]);
}

}  // namespace

TEST_CASE("log_double_double is within 2^-66 of log over the doubles") {
  std::mt19937_64 rng(20261208);
  std::uniform_real_distribution<double> exponent(-700.0, 700.0), near1(-0.3, 0.3), unit(0.5, 2.0);
  double worst = 0.0, worst_at = 0.0;
  for (int i = 0; i < 100000; ++i) {
    Four y;
    for (int l = 0; l < 4; ++l) {
      const int kind = (i + l) % 3;
      y[l] = kind == 0 ? std::exp(exponent(rng)) : kind == 1 ? 1.0 + near1(rng) : unit(rng);
    }
    const DoubleDouble<Four> got = ltt::detail::log_double_double(y, y - y);
    for (int l = 0; l < 4; ++l) {
      const __float128 exact = logq(static_cast<__float128>(y[l]));
      const __float128 scale = fabsq(exact) > 1e-300 ? fabsq(exact) : 1;
      const double error = static_cast<double>(fabsq(value(got, l) - exact) / scale);
      if (!(error <= worst)) worst = error, worst_at = y[l];
    }
  }
  MESSAGE("log_double_double worst relative error 2^" << std::log2(worst) << " at " << worst_at);
  CHECK(worst <= 0x1p-66);
}

TEST_CASE("deviance_lanes is within 2^-62 of bd0, empty cells, tiny and large deviations") {
  std::mt19937_64 rng(20261209);
  std::uniform_real_distribution<double> log_x(0.0, 30.0), spread(-3.0, 3.0);
  double worst = 0.0, worst_x = 0.0;
  for (int i = 0; i < 100000; ++i) {
    Four x, diff_hi, diff_lo;
    for (int l = 0; l < 4; ++l) {
      const double scale = (i + l) % 3 == 0 ? 1.0 : (i % 3 == 1 ? 1e-2 : 1e-4);
      double cell = std::floor(std::exp(log_x(rng)));
      const double expected = cell * std::exp(spread(rng) * scale);
      if ((i + l) % 7 == 0) cell = 0.0;
      const DoubleDouble<double> d = ltt::detail::two_sum(cell, -expected);  // exact
      x[l] = cell, diff_hi[l] = d.hi, diff_lo[l] = d.lo;
    }
    const DoubleDouble<Four> got = ltt::detail::deviance_lanes(x, {diff_hi, diff_lo});
    for (int l = 0; l < 4; ++l) {
      const __float128 xq = x[l];
      const __float128 e = xq - (static_cast<__float128>(diff_hi[l]) + diff_lo[l]);
      __float128 exact = x[l] == 0 ? e : xq * logq(xq / e) + e - xq;
      const __float128 v = (xq - e) / (xq + e);
      if (x[l] != 0 && fabsq(v) < 0.1) {  // the series: the closed form cancels there
        __float128 power = 2 * xq * v;
        exact = (xq - e) * v;
        for (int j = 1; j < 40; ++j) exact += (power *= v * v) / (2 * j + 1);
      }
      const double error = static_cast<double>(fabsq(value(got, l) - exact) / exact);
      if (!(error <= worst)) worst = error, worst_x = x[l];
    }
  }
  MESSAGE("deviance_lanes worst relative error 2^" << std::log2(worst) << " at x = " << worst_x);
  CHECK(worst <= 0x1p-62);
}
