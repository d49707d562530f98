#pragma once
// Selections as threshold sets. Every selection the curation layer returns, certified or not,
// is S(lambda) = {tau : g(tau) >= lambda} for some lambda, listed as ascending pool positions;
// a selection by count ("the top K") is the threshold set at the K-th largest score, so it
// keeps every trajectory tied with that score and may hold more than K.

#include <curation/detail/check.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string_view>
#include <vector>

namespace ltt::curation {

// S(lambda) = {i : scores[i] >= lambda}, ascending. lambda = +infinity gives the empty set.
inline std::vector<std::int64_t> selection_at(std::span<const double> scores, double lambda) {
  std::vector<std::int64_t> selected;
  for (std::size_t i = 0; i < scores.size(); ++i)
    if (scores[i] >= lambda) selected.push_back(static_cast<std::int64_t>(i));
  return selected;
}

// The K-th largest score, the threshold of "the top K"; +infinity for K = 0 (nothing kept).
// O(N) by nth_element on a copy.
inline double top_count_threshold(std::span<const double> scores, std::int64_t count) {
  constexpr std::string_view fn = "ltt::curation::top_count_threshold";
  ltt::detail::require_count(fn, "count", count);
  ltt::detail::require_at_most(fn, "count", count, "scores.size()", detail::ssize(scores.size()));
  if (count == 0) return std::numeric_limits<double>::infinity();
  std::vector<double> v(scores.begin(), scores.end());
  const auto kth = v.begin() + static_cast<std::ptrdiff_t>(v.size()) - count;
  std::nth_element(v.begin(), kth, v.end());
  return *kth;
}

}  // namespace ltt::curation
