// Tests for include/curation/v_filter.hpp: the estimated-fraction selection by hand, and that
// the calibrated fallback never keeps more than it (a lower bound sits below its estimate).

#include <curation/calibrated_selection.hpp>
#include <curation/v_filter.hpp>

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace cur = ltt::curation;
using Positions = std::vector<std::int64_t>;

TEST_CASE("v_filter: top floor(safe N / n) by score, by hand") {
  const std::vector<double> g{0.1, 0.9, 0.4, 0.8, 0.3, 0.7, 0.2, 0.6, 0.5, 0.0};
  // 3 safe of 4 labels: f = 0.75, K = floor(7.5) = 7 -> scores >= 0.3.
  const cur::Calibration c{{1, 4, 6, 9}, {0, 0, 1, 0}};
  const auto v = cur::v_filter(g, c);
  CHECK(v.labels == 4);
  CHECK(v.safe_labels == 3);
  CHECK(v.safe_fraction == 0.75);
  CHECK(v.count == 7);
  CHECK(v.threshold == 0.3);
  CHECK(v.selected == Positions{1, 2, 3, 4, 5, 7, 8});
  // No safe label: nothing kept.
  const auto none = cur::v_filter(g, cur::Calibration{{1, 4}, {1, 1}});
  CHECK(none.count == 0);
  CHECK(std::isinf(none.threshold));
  CHECK(none.selected.empty());
  CHECK_THROWS_AS(cur::v_filter(g, cur::Calibration{{1, 1}, {0, 0}}), std::invalid_argument);
}

TEST_CASE("v_filter: the calibrated fallback keeps no more (without its minimum)") {
  for (std::int64_t n = 1; n <= 60; n += 7)
    for (std::int64_t safe = 0; safe <= n; ++safe) {
      const std::int64_t N = 997;
      const auto f = cur::uncertified_fallback(N, safe, n, 0.1, 0);
      CHECK(f.count <= safe * N / n);
    }
}
