#pragma once
// The size of a Monte Carlo cell: its full draw count in Release, that count divided by
// LTT_TEST_MONTE_CARLO_DIVISOR (20) in the sanitizer build, which tests/CMakeLists.txt defines
// when LTT_SANITIZE is on (scripts/test's build-asan/). A memory error shows in a few runs, so
// under ASan + UBSan every cell runs, but small; the statistics are checked once, at full size,
// in Release.
//
// A reduced cell is still a test that can fail. Its Clopper-Pearson checks take the interval of
// the count it actually drew, so a smaller cell only widens them. A bar that the full-size cell
// holds an estimate to as it stands (no interval: "certified on more than half the draws",
// "mean labels at most 0.6 n") is held in a reduced cell to the estimate's own interval at
// level 1e-3 (the helpers below), so the reduced check fails only when its sample is
// significantly on the wrong side of the bar; at full size the helpers are the bare comparison.

#include <ltt/bounds.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>

#ifndef LTT_TEST_MONTE_CARLO_DIVISOR
#define LTT_TEST_MONTE_CARLO_DIVISOR 1
#endif

namespace ltt_test {

inline constexpr std::int64_t monte_carlo_divisor = LTT_TEST_MONTE_CARLO_DIVISOR;
static_assert(monte_carlo_divisor >= 1);

// The draws a cell of `full` draws runs: full / divisor, but at least `floor` (and never more
// than full).
constexpr std::int64_t monte_carlo_draws(std::int64_t full, std::int64_t floor = 100) {
  return std::min(full, std::max(floor, full / monte_carlo_divisor));
}

inline constexpr double reduced_level = 1e-3;

// count / draws > bar: the estimate at full size; in a reduced cell, the upper end of its
// interval.
inline bool rate_above(std::int64_t count, std::int64_t draws, std::int64_t full, double bar) {
  if (draws >= full) return static_cast<double>(count) > bar * static_cast<double>(draws);
  return ltt::clopper_pearson_upper(count, draws, reduced_level) > bar;
}

// count_a / draws >= count_b / draws - margin, two rates from cells of the same size: the
// estimates at full size; in a reduced cell, the upper end of a's interval against the lower
// end of b's.
inline bool rate_not_below(std::int64_t count_a, std::int64_t count_b, std::int64_t draws,
                           std::int64_t full, double margin) {
  const auto d = static_cast<double>(draws);
  if (draws >= full) return static_cast<double>(count_a) / d >= static_cast<double>(count_b) / d - margin;
  return ltt::clopper_pearson_upper(count_a, draws, reduced_level) >=
         ltt::clopper_pearson_lower(count_b, draws, reduced_level) - margin;
}

// A rate held below bar with margin, count / draws <= bar: at full size the Clopper-Pearson
// upper limit at `level` is at most bar (the rate is shown below bar); in a reduced cell the
// lower limit at reduced_level is (the sample is not significantly above bar), since a small
// sample's upper limit cannot show a rate below bar.
inline bool rate_at_most(std::int64_t count, std::int64_t draws, std::int64_t full, double bar,
                         double level) {
  if (draws >= full) return ltt::clopper_pearson_upper(count, draws, level) <= bar;
  return ltt::clopper_pearson_lower(count, draws, reduced_level) <= bar;
}

// The mean of `draws` values in [0, range] at most bar: the sample mean at full size; in a
// reduced cell, the sample mean less Hoeffding's deviation range sqrt(ln(1 / level) / (2 draws)).
inline bool mean_at_most(double mean, std::int64_t draws, std::int64_t full, double range,
                         double bar) {
  if (draws >= full) return mean <= bar;
  const double deviation =
      range * std::sqrt(std::log(1.0 / reduced_level) / (2.0 * static_cast<double>(draws)));
  return mean - deviation <= bar;
}

}  // namespace ltt_test
