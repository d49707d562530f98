// exp_kernel (<ltt/detail/exp_kernel.hpp>): below one ulp from exp over its range, measured
// against long double expl, and every lane of a vector the scalar result to the bit.

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <random>

#include <ltt/detail/exp_kernel.hpp>

TEST_CASE("exp_kernel is within one ulp of exp on [-708, 1], the same bits in every lane") {
  std::mt19937_64 rng(20261207);
  std::uniform_real_distribution<double> wide(ltt::detail::exp_kernel_min, 1.0), near0(-1.0, 1.0);
  double worst = 0.0, worst_at = 0.0;
  int lanes_differ = 0;
  const double ends[] = {ltt::detail::exp_kernel_min, -0x1.62e42fefa39efp-2, 0.0, -0.0, 1.0, -1e-300};
  ltt::detail::Lanes v{};
  for (int i = 0; i < 400000; ++i) {
    const double x = i < 6 ? ends[i] : (i % 2 ? wide(rng) : near0(rng));
    const double e = ltt::detail::exp_kernel(x);
    const long double exact = std::exp(static_cast<long double>(x));
    const double rounded = static_cast<double>(exact);
    const double ulp = std::nextafter(rounded, HUGE_VAL) - rounded;
    const double error = static_cast<double>(std::fabs((static_cast<long double>(e) - exact) / ulp));
    if (error > worst) worst = error, worst_at = x;
    v[i % ltt::detail::lane_count] = x;
    if ((i + 1) % ltt::detail::lane_count == 0) {
      const ltt::detail::Lanes w = ltt::detail::exp_kernel(v);
      for (int l = 0; l < ltt::detail::lane_count; ++l) {
        const double one = ltt::detail::exp_kernel(v[l]), lane = w[l];
        lanes_differ += std::memcmp(&one, &lane, sizeof one) != 0;
      }
    }
  }
  MESSAGE("exp_kernel worst error " << worst << " ulp at x = " << worst_at);
  CHECK(worst < 1.0);
  CHECK(lanes_differ == 0);
}
