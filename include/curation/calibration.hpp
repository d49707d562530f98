#pragma once
// The calibration sample C (paper, section 4.3): n trajectories drawn uniformly without
// replacement from the pool, each with its binary label u(tau) (over budget or not). The draw
// is what makes the composition test exact (Lemma "conditional distribution"), so it must be
// uniform and made before anything is learned from the labels; the score and the grid may
// depend on the pool, never on which trajectories were drawn.
//
// Two ways to a Calibration:
//  - draw_calibration(N, n, seed) picks the positions (seeded std::mt19937_64, Floyd's
//    algorithm, the same positions for the same seed on every platform), and the labels come
//    from the labeler; label_calibration attaches them when they are known (simulation,
//    validation on a pool with ground truth);
//  - calibration_from_labels takes a labeled set the user already has (ids and 0/1 bits) and
//    maps it onto the pool, rejecting unknown and repeated ids and bits other than 0 and 1.

#include <curation/detail/check.hpp>
#include <curation/detail/random.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace ltt::curation {

struct Calibration {
  std::vector<std::int64_t> index;   // pool positions, distinct, ascending from the builders
  std::vector<std::uint8_t> unsafe;  // u(tau) in {0, 1}, aligned with index

  std::int64_t size() const { return static_cast<std::int64_t>(index.size()); }
  std::int64_t unsafe_count() const {
    return static_cast<std::int64_t>(std::count(unsafe.begin(), unsafe.end(), std::uint8_t{1}));
  }
};

// n distinct positions of {0, ..., pool_size - 1}, uniformly over all n-subsets, ascending.
// Floyd's algorithm: for j = N - n, ..., N - 1 draw t uniform on {0, ..., j} and take t, or j
// if t is already taken; every n-subset comes out with probability 1 / C(N, n), in O(n) draws.
inline std::vector<std::int64_t> draw_calibration(std::int64_t pool_size, std::int64_t n,
                                                  std::uint64_t seed) {
  constexpr std::string_view fn = "ltt::curation::draw_calibration";
  ltt::detail::require_count(fn, "pool_size", pool_size);
  ltt::detail::require_count(fn, "n", n);
  ltt::detail::require_at_most(fn, "n", n, "pool_size", pool_size);
  std::mt19937_64 rng(seed);
  std::unordered_set<std::int64_t> taken;
  taken.reserve(static_cast<std::size_t>(n));
  std::vector<std::int64_t> drawn;
  drawn.reserve(static_cast<std::size_t>(n));
  for (std::int64_t j = pool_size - n; j < pool_size; ++j) {
    const std::int64_t t = detail::uniform_below(rng, j + 1);
    const std::int64_t pick = taken.insert(t).second ? t : j;
    if (pick == j) taken.insert(j);
    drawn.push_back(pick);
  }
  std::sort(drawn.begin(), drawn.end());
  return drawn;
}

// Attach known labels: unsafe[i] = pool_unsafe[index[i]]. For simulations and validation on a
// pool whose labels are all known; a real labeler labels only the drawn trajectories.
inline Calibration label_calibration(std::span<const std::int64_t> index,
                                     std::span<const std::uint8_t> pool_unsafe) {
  constexpr std::string_view fn = "ltt::curation::label_calibration";
  Calibration c;
  c.index.assign(index.begin(), index.end());
  c.unsafe.resize(index.size());
  for (std::size_t i = 0; i < index.size(); ++i) {
    if (index[i] < 0 || index[i] >= detail::ssize(pool_unsafe.size()))
      detail::invalid(fn, detail::at("index", i), detail::show(index[i]),
                      "must be a pool position in [0, " +
                          detail::show(detail::ssize(pool_unsafe.size())) + ")");
    const std::uint8_t u = pool_unsafe[static_cast<std::size_t>(index[i])];
    if (u > 1)
      detail::invalid(fn, detail::at("pool_unsafe", static_cast<std::size_t>(index[i])),
                      detail::show(std::int64_t{u}), "must be 0 or 1");
    c.unsafe[i] = u;
  }
  return c;
}

// A labeled set the user supplies: label_ids[i] is a pool id, label_unsafe[i] its bit (0 or 1).
// The result is ordered by pool position. One scan of the pool against the sorted labels,
// O(N log n), with no table of all pool ids.
inline Calibration calibration_from_labels(std::span<const std::int64_t> pool_ids,
                                           std::span<const std::int64_t> label_ids,
                                           std::span<const std::int64_t> label_unsafe) {
  constexpr std::string_view fn = "ltt::curation::calibration_from_labels";
  detail::require_nonempty(fn, "pool_ids", pool_ids.size());
  detail::require_same_size(fn, "label_unsafe", label_unsafe.size(), "label_ids", label_ids.size());
  if (label_ids.size() > pool_ids.size())
    detail::invalid(fn, "label_ids.size()", detail::show(detail::ssize(label_ids.size())),
                    "must not exceed the pool size " +
                        detail::show(detail::ssize(pool_ids.size())) +
                        " (the calibration sample is drawn from the pool without replacement)");
  for (std::size_t i = 0; i < label_unsafe.size(); ++i)
    if (label_unsafe[i] != 0 && label_unsafe[i] != 1)
      detail::invalid(
          fn, detail::at("label_unsafe", i), detail::show(label_unsafe[i]),
          "must be 0 (within budget) or 1 (over budget); label id " + detail::show(label_ids[i]));

  std::vector<std::size_t> order(label_ids.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return label_ids[a] < label_ids[b]; });
  for (std::size_t i = 1; i < order.size(); ++i)
    if (label_ids[order[i]] == label_ids[order[i - 1]])
      detail::invalid(fn, detail::at("label_ids", std::max(order[i], order[i - 1])),
                      detail::show(label_ids[order[i]]),
                      "repeats a label id (also at label_ids[" +
                          std::to_string(std::min(order[i], order[i - 1])) + "])");
  std::vector<std::int64_t> sorted_ids(order.size());
  for (std::size_t i = 0; i < order.size(); ++i) sorted_ids[i] = label_ids[order[i]];

  std::vector<std::int64_t> position(order.size(), -1);  // by sorted label
  for (std::size_t p = 0; p < pool_ids.size(); ++p) {
    const auto it = std::lower_bound(sorted_ids.begin(), sorted_ids.end(), pool_ids[p]);
    if (it == sorted_ids.end() || *it != pool_ids[p]) continue;
    const auto s = static_cast<std::size_t>(it - sorted_ids.begin());
    if (position[s] >= 0)
      detail::invalid(fn, detail::at("pool_ids", p), detail::show(pool_ids[p]),
                      "repeats a pool id (also at pool_ids[" + detail::show(position[s]) +
                          "]), so its label is ambiguous");
    position[s] = detail::ssize(p);
  }
  for (std::size_t s = 0; s < position.size(); ++s)
    if (position[s] < 0)
      detail::invalid(fn, detail::at("label_ids", order[s]), detail::show(sorted_ids[s]),
                      "is not the id of any trajectory in the pool");

  std::vector<std::size_t> by_position(order.size());
  for (std::size_t s = 0; s < by_position.size(); ++s) by_position[s] = s;
  std::sort(by_position.begin(), by_position.end(),
            [&](std::size_t a, std::size_t b) { return position[a] < position[b]; });
  Calibration c;
  c.index.reserve(order.size());
  c.unsafe.reserve(order.size());
  for (const std::size_t s : by_position) {
    c.index.push_back(position[s]);
    c.unsafe.push_back(static_cast<std::uint8_t>(label_unsafe[order[s]]));
  }
  return c;
}

namespace detail {

// Checks a Calibration against a pool of N: sizes agree, 1 <= n <= N, positions in range and
// distinct, bits 0 or 1.
inline void check_calibration(std::string_view fn, const Calibration& c, std::int64_t N) {
  require_same_size(fn, "calibration.unsafe", c.unsafe.size(), "calibration.index", c.index.size());
  require_nonempty(fn, "calibration.index", c.index.size());
  if (c.size() > N)
    invalid(fn, "calibration.index.size()", show(c.size()),
            "must not exceed the pool size " + show(N) +
                " (the calibration sample is drawn from the pool without replacement)");
  for (std::size_t i = 0; i < c.index.size(); ++i) {
    if (c.index[i] < 0 || c.index[i] >= N)
      invalid(fn, at("calibration.index", i), show(c.index[i]),
              "must be a pool position in [0, " + show(N) + ")");
    if (c.unsafe[i] > 1)
      invalid(fn, at("calibration.unsafe", i), show(std::int64_t{c.unsafe[i]}), "must be 0 or 1");
  }
  std::vector<std::int64_t> sorted(c.index);
  std::sort(sorted.begin(), sorted.end());
  const auto d = std::adjacent_find(sorted.begin(), sorted.end());
  if (d != sorted.end())
    invalid(fn, "calibration.index", "{..., " + show(*d) + ", ...}",
            "must not repeat a pool position; position " + show(*d) + " occurs twice");
}

// Positions into c.index ordered by score, highest first (ties by pool position): the
// calibration trajectories in S(lambda) are then a prefix for every lambda.
inline std::vector<std::size_t> by_descending_score(std::span<const double> scores,
                                                    std::span<const std::int64_t> index) {
  std::vector<std::size_t> order(index.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const double ga = scores[static_cast<std::size_t>(index[a])];
    const double gb = scores[static_cast<std::size_t>(index[b])];
    return ga != gb ? ga > gb : index[a] < index[b];
  });
  return order;
}

}  // namespace detail

}  // namespace ltt::curation
