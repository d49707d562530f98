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
#include <curation/threshold_grid.hpp>
#include <ltt/detail/check.hpp>
#include <ltt/detail/int128.hpp>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
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

namespace detail::sequential {

// Each pool position's stratum: the first grid step whose selection holds it (D_k =
// S_k \ S_{k-1}), or J (outside every selection).
inline std::vector<std::int64_t> strata_of(std::span<const double> scores,
                                           const ThresholdGrid& grid) {
  std::vector<std::int64_t> out;
  out.reserve(scores.size());
  for (const double g : scores)
    out.push_back(static_cast<std::int64_t>(
        std::lower_bound(grid.lambda.begin(), grid.lambda.end(), g, std::greater<>()) -
        grid.lambda.begin()));
  return out;
}

}  // namespace detail::sequential

// The seed of the fixed tail's permutation (LabelQueue::begin_tail), a fixed function of the
// label order's seed (splitmix64's finaliser of seed + 1): independent of the first
// permutation's draws for every practical purpose, and printed by nothing before the switch.
constexpr std::uint64_t tail_seed(std::uint64_t seed) {
  std::uint64_t z = seed + 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
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
        taken_(static_cast<std::size_t>(strata), 0),
        labeled_(stratum_.size(), 0) {
    if (order_ == LabelOrder::uniform) return;  // reads the permutation itself
    for (const std::int64_t position : permutation_) {
      const std::int64_t k = stratum_[static_cast<std::size_t>(position)];
      if (k < strata) members_[static_cast<std::size_t>(k)].push_back(position);
    }
  }

  // The position to label next at certified depth `depth`; none when nothing is left to ask.
  std::optional<std::int64_t> next(std::int64_t depth) const {
    if (tail_) {
      const std::size_t i = tail_next(tail_cursor_);
      return i < tail_permutation_.size() ? std::optional(tail_permutation_[i]) : std::nullopt;
    }
    return next_of(depth, taken_, cursor_);
  }

  // The next `count` positions (fewer if the queue runs out) if the depth stays `depth`.
  std::vector<std::int64_t> planned(std::int64_t depth, std::int64_t count) const {
    std::vector<std::int64_t> taken = taken_, out;
    if (tail_) {
      for (std::size_t i = tail_next(tail_cursor_);
           i < tail_permutation_.size() && static_cast<std::int64_t>(out.size()) < count;
           i = tail_next(i + 1))
        out.push_back(tail_permutation_[i]);
      return out;
    }
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
  void take(std::int64_t position) {
    if (tail_) tail_cursor_ = tail_next(tail_cursor_) + 1;  // before it is marked labeled
    labeled_[static_cast<std::size_t>(position)] = 1;
    if (!tail_) advance(position, taken_, cursor_);
  }

  // The tail (docs/sequential.md, "The fixed tail"): from now on every label comes from a
  // second seeded permutation of the pool, independent of the first, as its next member that
  // lies in a stratum k < `strata` and is not labeled yet. Whatever the labels so far, the
  // next n of them are then a uniform draw without replacement from those unlabeled members.
  void begin_tail(std::uint64_t tail_seed, std::int64_t strata) {
    tail_permutation_ = draw_label_order(static_cast<std::int64_t>(stratum_.size()),
                                         static_cast<std::int64_t>(stratum_.size()), tail_seed);
    tail_strata_ = strata;
    tail_ = true;
  }
  bool in_tail() const { return tail_; }
  // Unlabeled members of strata k < strata: the most the tail can draw.
  std::int64_t unlabeled_in(std::int64_t strata) const {
    std::int64_t count = 0;
    for (std::size_t i = 0; i < stratum_.size(); ++i)
      count += stratum_[i] < strata && labeled_[i] == 0;
    return count;
  }

  // The fixed walk bought label by label (SequentialSelectionOptions::fixed_walk; uniform
  // order): its sample is the first `sample` positions of the permutation, and of those the
  // queue gives only the members of strata k < `below`, in permutation order. The walk lowers
  // `below` as the steps from there on become refused whatever the labels left, so a position
  // passed over is never needed; none of this changes which positions form the sample.
  void restrict_to_sample(std::int64_t sample, std::int64_t below) {
    limit_ = static_cast<std::size_t>(sample);
    below_ = below;
  }
  void set_relevant_strata(std::int64_t below) { below_ = below; }

  LabelOrder order() const { return order_; }
  std::span<const std::int64_t> permutation() const { return permutation_; }
  std::int64_t stratum_of(std::int64_t position) const {
    return stratum_[static_cast<std::size_t>(position)];
  }

 private:
  // The index in the tail permutation of the next position it gives from `from` on.
  std::size_t tail_next(std::size_t from) const {
    while (from < tail_permutation_.size()) {
      const auto position = static_cast<std::size_t>(tail_permutation_[from]);
      if (labeled_[position] == 0 && stratum_[position] < tail_strata_) break;
      ++from;
    }
    return from;
  }

  // Uniform order: the first index from `cursor` on that the queue gives (restrict_to_sample).
  std::size_t skip(std::size_t cursor) const {
    while (cursor < limit_ &&
           stratum_[static_cast<std::size_t>(permutation_[cursor])] >= below_)
      ++cursor;
    return cursor;
  }

  std::optional<std::int64_t> next_of(std::int64_t depth, const std::vector<std::int64_t>& taken,
                                      std::size_t cursor) const {
    if (order_ == LabelOrder::uniform) {
      cursor = skip(cursor);
      return cursor < limit_ ? std::optional(permutation_[cursor]) : std::nullopt;
    }
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
      cursor = skip(cursor) + 1;
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
  std::size_t cursor_ = 0;             // uniform: permutation entries labeled or passed over
  // uniform: the sample's end and the strata given (restrict_to_sample); all by default
  std::size_t limit_ = permutation_.size();
  std::int64_t below_ = std::numeric_limits<std::int64_t>::max();
  std::vector<std::uint8_t> labeled_;  // per position
  // the tail: its permutation, where it is read from, the strata it draws from
  bool tail_ = false;
  std::vector<std::int64_t> tail_permutation_;
  std::size_t tail_cursor_ = 0;
  std::int64_t tail_strata_ = 0;
};

}  // namespace ltt::curation
