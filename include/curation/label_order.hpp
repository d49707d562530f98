#pragma once
// The label order of the sequential walk (<curation/sequential_selection.hpp>): which pool
// position is labeled next. Everything random in it is one seeded uniform permutation of the
// pool (draw_label_order), fixed before the first label and printed by
// `ltt draw --sequential --seed S`; LabelQueue reads it in one of the two LabelOrders of
// <curation/sequential_options.hpp>:
//  - uniform: from the top. Every prefix is a uniform draw without replacement from the pool.
//  - stratified: the pool is cut into the strata D_0 = S_0, D_k = S_k \ S_{k-1} (k < J) and the
//    rest; given the certified depth d, the next label comes from the stratum k <= min(d, J-1)
//    with the smallest labeled fraction t_k / N_k (ties: the smallest k; full strata skipped),
//    as that stratum's next member in the permutation. The restrictions of a uniform
//    permutation to disjoint sets are independent uniform permutations, and the choice of
//    stratum depends only on the labels so far, so within each stratum the labels are a uniform
//    draw without replacement whatever the allocation: what ltt::StratifiedCompositionEvidence
//    needs. Labels never go to the rest of the pool, where no hypothesis looks.

#include <curation/detail/check.hpp>
#include <curation/detail/random.hpp>
#include <curation/sequential_options.hpp>
#include <ltt/detail/check.hpp>
#include <ltt/detail/int128.hpp>

#include <cstdint>
#include <optional>
#include <random>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

namespace ltt::curation {

// The first `count` positions of a uniform random permutation of {0, ..., pool_size - 1}, in
// draw order (partial Fisher-Yates on the seeded std::mt19937_64 of draw_calibration). Every
// prefix is a uniform draw without replacement.
inline std::vector<std::int64_t> draw_label_order(std::int64_t pool_size, std::int64_t count,
                                                  std::uint64_t seed) {
  constexpr std::string_view fn = "ltt::curation::draw_label_order";
  ltt::detail::require_count(fn, "pool_size", pool_size);
  ltt::detail::require_count(fn, "count", count);
  ltt::detail::require_at_most(fn, "count", count, "pool_size", pool_size);
  std::mt19937_64 rng(seed);
  std::vector<std::int64_t> perm(static_cast<std::size_t>(pool_size));
  for (std::int64_t i = 0; i < pool_size; ++i) perm[static_cast<std::size_t>(i)] = i;
  for (std::int64_t i = 0; i < count; ++i) {
    const std::int64_t j = i + detail::uniform_below(rng, pool_size - i);
    std::swap(perm[static_cast<std::size_t>(i)], perm[static_cast<std::size_t>(j)]);
  }
  perm.resize(static_cast<std::size_t>(count));
  return perm;
}

class LabelQueue {
 public:
  // stratum[i] in [0, strata] is pool position i's stratum (strata: the rest of the pool).
  LabelQueue(std::vector<std::int64_t> stratum, std::int64_t strata, LabelOrder order,
             std::uint64_t seed)
      : order_(order),
        stratum_(std::move(stratum)),
        permutation_(draw_label_order(static_cast<std::int64_t>(stratum_.size()),
                                      static_cast<std::int64_t>(stratum_.size()), seed)),
        members_(static_cast<std::size_t>(strata)),
        taken_(static_cast<std::size_t>(strata), 0) {
    if (order_ == LabelOrder::uniform) return;  // reads the permutation itself
    for (const std::int64_t position : permutation_) {
      const std::int64_t k = stratum_[static_cast<std::size_t>(position)];
      if (k < strata) members_[static_cast<std::size_t>(k)].push_back(position);
    }
  }

  // The position to label next at certified depth `depth`; none when nothing is left to ask.
  std::optional<std::int64_t> next(std::int64_t depth) const {
    return next_of(depth, taken_, cursor_);
  }

  // The next `count` positions (fewer if the queue runs out) if the depth stays `depth`.
  std::vector<std::int64_t> planned(std::int64_t depth, std::int64_t count) const {
    std::vector<std::int64_t> taken = taken_, out;
    std::size_t cursor = cursor_;
    while (static_cast<std::int64_t>(out.size()) < count) {
      const auto position = next_of(depth, taken, cursor);
      if (!position) break;
      out.push_back(*position);
      advance(*position, taken, cursor);
    }
    return out;
  }

  // Records that `position`, next(depth), is labeled.
  void take(std::int64_t position) { advance(position, taken_, cursor_); }

  LabelOrder order() const { return order_; }
  std::span<const std::int64_t> permutation() const { return permutation_; }
  std::int64_t stratum_of(std::int64_t position) const {
    return stratum_[static_cast<std::size_t>(position)];
  }

 private:
  std::optional<std::int64_t> next_of(std::int64_t depth, const std::vector<std::int64_t>& taken,
                                      std::size_t cursor) const {
    if (order_ == LabelOrder::uniform)
      return cursor < permutation_.size() ? std::optional(permutation_[cursor]) : std::nullopt;
    const auto last = static_cast<std::size_t>(
        std::min<std::int64_t>(depth, static_cast<std::int64_t>(members_.size()) - 1));
    std::optional<std::size_t> best;
    for (std::size_t k = 0; k <= last; ++k) {
      const auto size = static_cast<std::int64_t>(members_[k].size());
      if (taken[k] == size) continue;
      // taken_k / N_k < taken_b / N_b, exactly
      if (!best || static_cast<ltt::detail::int128>(taken[k]) *
                           static_cast<std::int64_t>(members_[*best].size()) <
                       static_cast<ltt::detail::int128>(taken[*best]) * size)
        best = k;
    }
    if (!best) return std::nullopt;
    return members_[*best][static_cast<std::size_t>(taken[*best])];
  }

  void advance(std::int64_t position, std::vector<std::int64_t>& taken, std::size_t& cursor) const {
    if (order_ == LabelOrder::uniform) {
      ++cursor;
    } else {
      ++taken[static_cast<std::size_t>(stratum_[static_cast<std::size_t>(position)])];
    }
  }

  LabelOrder order_;
  std::vector<std::int64_t> stratum_;
  std::vector<std::int64_t> permutation_;
  // stratified: per stratum, its members in permutation order and how many are labeled
  std::vector<std::vector<std::int64_t>> members_;
  std::vector<std::int64_t> taken_;
  std::size_t cursor_ = 0;  // uniform: labeled so far
};

}  // namespace ltt::curation
