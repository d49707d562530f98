#pragma once
// Trajectory scores from per-state values (paper, section 4.2 and appendix "score
// aggregation"): g(tau) = (1/|tau|) sum_t V(s_t) by default, or the minimum, or a percentile of
// V along the trajectory (the paper's tenth-percentile aggregator).
//
// Percentile definition: linear interpolation between order statistics, NumPy's default
// (`numpy.percentile(x, p)`, Hyndman-Fan type 7). With x_(0) <= ... <= x_(L-1) the sorted
// values and h = (L - 1) p / 100, the p-th percentile is x_(i) + (h - i)(x_(i+1) - x_(i)) for
// i = floor(h); p = 0 is the minimum, p = 100 the maximum, p = 50 the usual median.

#include <curation/detail/check.hpp>
#include <curation/detail/sum.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ltt::curation {

enum class Aggregation { mean, minimum, percentile };

struct Aggregator {
  Aggregation kind = Aggregation::mean;
  double percentile = 10.0;  // in percent, [0, 100]; read only when kind == percentile
};

// The names the program's --aggregation and the Python module's aggregation= take.
constexpr std::string_view aggregation_name(Aggregation kind) {
  switch (kind) {
    case Aggregation::mean:
      return "mean";
    case Aggregation::minimum:
      return "minimum";
    case Aggregation::percentile:
      return "percentile";
  }
  return "?";
}

// The aggregation called `name`; nullopt for a name other than mean, minimum, percentile.
constexpr std::optional<Aggregation> aggregation_named(std::string_view name) {
  for (const Aggregation kind : {Aggregation::mean, Aggregation::minimum, Aggregation::percentile})
    if (name == aggregation_name(kind)) return kind;
  return std::nullopt;
}

namespace detail {

inline void check_aggregator(std::string_view fn, const Aggregator& a) {
  switch (a.kind) {
    case Aggregation::mean:
    case Aggregation::minimum:
      return;
    case Aggregation::percentile:
      if (!(a.percentile >= 0.0 && a.percentile <= 100.0))
        invalid(fn, "aggregator.percentile", show(a.percentile), "must lie in [0, 100]");
      return;
  }
  invalid(fn, "aggregator.kind", std::to_string(static_cast<int>(a.kind)),
          "is not a known Aggregation");
}

// Type-7 percentile of x, reordering scratch (a copy of x). Only the two order statistics
// that bracket h are placed, by nth_element, so the cost is O(L).
inline double percentile_of(std::vector<double>& scratch, double p) {
  const std::size_t L = scratch.size();
  const double h = static_cast<double>(L - 1) * (p / 100.0);
  const auto i = static_cast<std::size_t>(std::floor(h));
  const double t = h - static_cast<double>(i);
  std::nth_element(scratch.begin(), scratch.begin() + static_cast<std::ptrdiff_t>(i),
                   scratch.end());
  const double lo = scratch[i];
  if (t == 0.0 || i + 1 >= L) return lo;
  // After nth_element everything past i is >= lo, so x_(i+1) is the minimum of that range.
  const double hi =
      *std::min_element(scratch.begin() + static_cast<std::ptrdiff_t>(i) + 1, scratch.end());
  return std::fma(hi - lo, t, lo);  // one rounding, the same with or without FMA contraction
}

inline double aggregate_checked(std::span<const double> values, const Aggregator& a,
                                std::vector<double>& scratch) {
  switch (a.kind) {
    case Aggregation::mean:
      return compensated_mean(values);
    case Aggregation::minimum:
      return *std::min_element(values.begin(), values.end());
    case Aggregation::percentile:
      scratch.assign(values.begin(), values.end());
      return percentile_of(scratch, a.percentile);
  }
  return 0.0;  // unreachable: the aggregator was checked
}

}  // namespace detail

// Score of one trajectory from the values V(s_t) of its states (at least one, all finite).
inline double aggregate_score(std::span<const double> state_values,
                              const Aggregator& aggregator = {}) {
  constexpr std::string_view fn = "ltt::curation::aggregate_score";
  detail::check_aggregator(fn, aggregator);
  detail::require_nonempty(fn, "state_values", state_values.size());
  detail::require_finite(fn, "state_values", state_values);
  std::vector<double> scratch;
  return detail::aggregate_checked(state_values, aggregator, scratch);
}

// Scores of N trajectories whose state values are stored back to back: trajectory i owns
// state_values[offsets[i], offsets[i + 1]), so offsets has N + 1 entries from 0 to
// state_values.size(). Every trajectory needs at least one state.
inline std::vector<double> trajectory_scores(std::span<const double> state_values,
                                             std::span<const std::int64_t> offsets,
                                             const Aggregator& aggregator = {}) {
  constexpr std::string_view fn = "ltt::curation::trajectory_scores";
  detail::check_aggregator(fn, aggregator);
  detail::require_offsets(fn, offsets, state_values.size());
  detail::require_finite(fn, "state_values", state_values);
  std::vector<double> scores(offsets.size() - 1);
  std::vector<double> scratch;
  for (std::size_t i = 0; i + 1 < offsets.size(); ++i) {
    const auto first = static_cast<std::size_t>(offsets[i]);
    const auto last = static_cast<std::size_t>(offsets[i + 1]);
    if (first == last)
      detail::invalid(fn, "trajectory " + std::to_string(i), "0 states",
                      "must have at least one state (offsets[" + std::to_string(i) +
                          "] == offsets[" + std::to_string(i + 1) + "])");
    scores[i] =
        detail::aggregate_checked(state_values.subspan(first, last - first), aggregator, scratch);
  }
  return scores;
}

}  // namespace ltt::curation
