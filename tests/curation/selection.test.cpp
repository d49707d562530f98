// Tests for include/curation/selection.hpp: threshold sets and the top-K threshold with ties.

#include <curation/selection.hpp>

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace cur = ltt::curation;
using Positions = std::vector<std::int64_t>;

TEST_CASE("selection_at: {g >= lambda}, ascending positions, ties kept") {
  const std::vector<double> g{0.5, 0.9, 0.2, 0.9, 0.7};
  CHECK(cur::selection_at(g, 0.7) == Positions{1, 3, 4});
  CHECK(cur::selection_at(g, 0.9) == Positions{1, 3});
  CHECK(cur::selection_at(g, -1.0) == Positions{0, 1, 2, 3, 4});
  CHECK(cur::selection_at(g, std::numeric_limits<double>::infinity()).empty());
}

TEST_CASE("top_count_threshold: the K-th largest score") {
  const std::vector<double> g{0.5, 0.9, 0.2, 0.9, 0.7};
  CHECK(cur::top_count_threshold(g, 1) == 0.9);
  CHECK(cur::top_count_threshold(g, 2) == 0.9);
  CHECK(cur::top_count_threshold(g, 3) == 0.7);
  CHECK(cur::top_count_threshold(g, 5) == 0.2);
  CHECK(std::isinf(cur::top_count_threshold(g, 0)));
  // "Top 1" inside a tie keeps the tie.
  CHECK(cur::selection_at(g, cur::top_count_threshold(g, 1)).size() == 2);
  CHECK_THROWS_AS(cur::top_count_threshold(g, 6), std::invalid_argument);
  CHECK_THROWS_AS(cur::top_count_threshold(g, -1), std::invalid_argument);
}
