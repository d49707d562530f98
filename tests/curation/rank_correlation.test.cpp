// Tests for include/curation/rank_correlation.hpp: average ranks and Spearman's rho against
// values worked by hand, ties included, and the error contract.

#include <curation/rank_correlation.hpp>

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "../support/throws.hpp"

namespace cur = ltt::curation;
using Values = std::vector<double>;

TEST_CASE("average_ranks: ties share the mean of the positions they span") {
  // ascending: 1 (position 0), 2 (1), 3 and 3 (2 and 3, mean 2.5)
  CHECK(cur::average_ranks(Values{3, 1, 3, 2}) == Values{2.5, 0, 2.5, 1});
  // all tied: every value gets (0 + 1 + 2) / 3 = 1
  CHECK(cur::average_ranks(Values{7, 7, 7}) == Values{1, 1, 1});
  CHECK(cur::average_ranks(Values{}).empty());
}

TEST_CASE("spearman: hand values, with ties") {
  // b's ranks are {0, 1, 2.5, 4, 2.5} (the two 7s share 2.5); both means are 2. Centred:
  // a {-2, -1, 0, 1, 2}, b {-2, -1, 0.5, 2, 0.5}: sum of products 8, sums of squares 10 and
  // 9.5, so rho = 8 / sqrt(95) = 0.8207826816681233.
  CHECK(cur::spearman(Values{1, 2, 3, 4, 5}, Values{5, 6, 7, 8, 7}) == 8.0 / std::sqrt(95.0));
  CHECK(cur::spearman(Values{1, 2, 3, 4, 5}, Values{5, 6, 7, 8, 7}) ==
        doctest::Approx(0.8207826816681233).epsilon(1e-15));
  // Any strictly monotone map gives +-1 exactly, whatever the values.
  CHECK(cur::spearman(Values{0.1, 5, 2}, Values{-3, 100, 1}) == 1.0);
  CHECK(cur::spearman(Values{0.1, 5, 2}, Values{3, -100, -1}) == -1.0);
  // Ties on both sides: a ranks {0.5, 0.5, 2, 3}, b ranks {0, 2, 2, 2}; centred a
  // {-1, -1, 0.5, 1.5}, b {-1.5, 0.5, 0.5, 0.5}: products 1.5 - 0.5 + 0.25 + 0.75 = 2, squares
  // 4.5 and 3, rho = 2 / sqrt(13.5).
  CHECK(cur::spearman(Values{1, 1, 2, 3}, Values{0, 4, 4, 4}) == 2.0 / std::sqrt(13.5));
  // A constant sample has no order: 0.
  CHECK(cur::spearman(Values{1, 2, 3}, Values{4, 4, 4}) == 0.0);
  CHECK(cur::spearman(Values{1}, Values{2}) == 0.0);
}

TEST_CASE("spearman: samples of different sizes or with NaN are refused, naming them") {
  ltt_test::check_throws_naming(
      [] {
        (void)cur::spearman(Values{1, 2}, Values{1, 2, 3});
      },
      "b.size()");
  const double nan = std::numeric_limits<double>::quiet_NaN();
  ltt_test::check_throws_naming([&] { (void)cur::spearman(Values{1, nan}, Values{1, 2}); }, "a[1]");
}
