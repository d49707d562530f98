// Tests for include/ltt/detail/level_split.hpp: shares of delta rounded toward validity,
// checked in exact arithmetic (__float128 holds every sum and product below exactly, or rounds
// a value that is a double to itself). ltt::detail::level_share is tested with Bonferroni in
// fixed_sequence.test.cpp.

#include <ltt/detail/level_split.hpp>

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace {

using quad = __float128;

// w in [2^-50, 1): c = 1 - w then has its bits within 2^0 .. 2^-105, so c + w is exact in the
// 113-bit significand of __float128.
std::vector<double> shares_to_test() {
  std::vector<double> w = {0.2,  0.1,       0.3, 0.25, 0.5,         0.05,          0.01,
                           1e-3, 1.0 / 3.0, 0.7, 0.9,  0.123456789, 1.0 - 0x1p-53, 0x1p-50};
  std::mt19937_64 rng(20261128);
  std::uniform_real_distribution<double> log2_w(-50.0, 0.0);
  for (int i = 0; i < 20000; ++i) {
    const double v = std::exp2(log2_w(rng));
    if (v < 1.0) w.push_back(v);
  }
  return w;
}

}  // namespace

TEST_CASE("complement_share: c + w <= 1 exactly, and c is the largest such double") {
  std::int64_t nearest_exceeds = 0;  // how often fl(1 - w) itself sums past 1
  for (const double w : shares_to_test()) {
    CAPTURE(w);
    const double c = ltt::detail::complement_share(w);
    CHECK(static_cast<quad>(c) + static_cast<quad>(w) <= 1);
    CHECK(static_cast<quad>(std::nextafter(c, 2.0)) + static_cast<quad>(w) > 1);
    CHECK(ltt::detail::sum_exceeds_one(c, w) == false);
    CHECK(ltt::detail::sum_exceeds_one(std::nextafter(c, 2.0), w));
    nearest_exceeds += static_cast<quad>(1.0 - w) + static_cast<quad>(w) > 1;
  }
  // the case that asked for this: fl(1 - 0.2) = 0.8 lies 5.6e-17 above 1 - fl(0.2)
  CHECK(static_cast<quad>(0.8) + static_cast<quad>(0.2) > 1);
  CHECK(ltt::detail::complement_share(0.2) == std::nextafter(0.8, 0.0));
  CHECK(nearest_exceeds > 1000);  // rounding to nearest goes up often: the check has work to do
  CHECK(ltt::detail::complement_share(0.0) == 1.0);
  CHECK(ltt::detail::complement_share(0.5) == 0.5);
  CHECK(ltt::detail::complement_share(1.0) == 0.0);
}

TEST_CASE("share_sum_down: at most w + c e exactly, and within three ulps of it") {
  // the fixed tail's level share w + (1 - w) E, E >= 0 the frozen anytime evidence
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> log2_e(-30.0, 30.0);
  std::int64_t nearest_exceeds = 0;
  for (const double w : shares_to_test()) {
    const double c = ltt::detail::complement_share(w);
    const double e = std::exp2(log2_e(rng));
    CAPTURE(w);
    CAPTURE(e);
    const double s = ltt::detail::share_sum_down(w, c, e);
    // c e is exact in 106 bits; the sum w + c e is rounded once to 113 bits, and s, a double,
    // lies at or below the exact value iff it lies at or below that rounding
    const quad exact = static_cast<quad>(w) + static_cast<quad>(c) * static_cast<quad>(e);
    CHECK(static_cast<quad>(s) <= exact);
    const double up3 =
        std::nextafter(std::nextafter(std::nextafter(s, INFINITY), INFINITY), INFINITY);
    CHECK(static_cast<quad>(up3) > exact);
    nearest_exceeds += static_cast<quad>(w + c * e) > exact;
  }
  CHECK(nearest_exceeds > 1000);
  CHECK(ltt::detail::share_sum_down(0.5, 0.5, 0.0) == 0.5);
  CHECK(ltt::detail::share_sum_down(0.5, 0.5, 1.0) == 1.0);
}
