// Tests for include/curation/true_composition.hpp: U_j and the purity margin of a pool worked
// by hand, ties at a threshold counted as the grid's selection holds them, and the error
// contract.

#include <curation/threshold_grid.hpp>
#include <curation/true_composition.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "../support/throws.hpp"

namespace cur = ltt::curation;
using Bits = std::vector<std::uint8_t>;

TEST_CASE("true_composition: U_j by hand, the three tied scores at lambda_1 all counted") {
  const std::vector<double> g{0.9, 0.8, 0.7, 0.7, 0.7, 0.5, 0.4, 0.3, 0.2, 0.1};
  const Bits unsafe{0, 1, 0, 1, 0, 1, 0, 1, 1, 0};
  // floor(9 q) = 7, 4, 1: lambda 0.7 (N_1 = 5 with its ties), 0.5 (6), 0.2 (9).
  const std::vector<double> q{0.8, 0.5, 0.2};
  const cur::ThresholdGrid grid = cur::threshold_grid(g, q);
  const cur::TrueComposition t = cur::true_composition(grid, g, unsafe, 0.45);
  REQUIRE(t.steps.size() == 3);
  CHECK(t.pool_unsafe == 5);
  const std::vector<std::int64_t> N{5, 6, 9}, U{2, 3, 5}, U_star{3, 3, 5};
  for (std::size_t j = 0; j < 3; ++j) {
    CAPTURE(j);
    CHECK(t.steps[j].N == N[j]);
    CHECK(t.steps[j].U == U[j]);
    // U*_j = floor(0.45 N_j) + 1: 3, 3, 5; step 3 (U = 5 >= 5) is a true null
    CHECK(t.steps[j].null_boundary == U_star[j]);
    CHECK(t.steps[j].true_null == (U[j] >= U_star[j]));
    CHECK(t.steps[j].returned == 0);
  }
  CHECK(t.purity_margin == 0.45 - 2.0 / 5.0);
}

TEST_CASE("true_composition: a grid of other scores, or labels of another size, are refused") {
  const std::vector<double> g{0.3, 0.2, 0.1};
  const cur::ThresholdGrid grid = cur::threshold_grid(g, std::vector<double>{0.5});
  ltt_test::check_throws_naming(
      [&] {
        (void)cur::true_composition(grid, g, Bits{0, 1}, 0.25);
      },
      "unsafe.size()");
  const std::vector<double> longer{0.3, 0.2, 0.1, 0.0};
  ltt_test::check_throws_naming(
      [&] {
        (void)cur::true_composition(grid, longer, Bits{0, 1, 0, 0}, 0.25);
      },
      "grid.pool_size");
  ltt_test::check_throws_naming(
      [&] {
        (void)cur::true_composition(grid, g, Bits{0, 1, 0}, 1.5);
      },
      "alpha");
}
