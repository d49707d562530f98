#pragma once
// The trajectory pool D_off (paper, section 3): per trajectory its id, length, episodic return,
// episodic cost and score g(tau). A cost budget b turns episodic cost into the unsafe bit
// u(tau) = [cost > b]; equality is within budget.
//
// Columns are separate vectors so each can be handed on as a std::span; every function of the
// curation layer works on positions 0 .. N-1 in the pool, and ids only translate user files
// (calibration_from_labels).

#include <curation/detail/check.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ltt::curation {

struct TrajectoryPool {
  std::vector<std::int64_t> id;         // required, unique
  std::vector<double> score;            // g(tau), required, finite
  std::vector<std::int64_t> length;     // optional: empty, or one per trajectory (>= 0)
  std::vector<double> episodic_return;  // optional: empty, or one per trajectory (finite)
  std::vector<double> episodic_cost;    // optional: empty, or one per trajectory (finite)

  std::int64_t size() const { return static_cast<std::int64_t>(score.size()); }
};

// Throws std::invalid_argument on an empty pool, a column of the wrong length, a repeated id,
// a non-finite score, return or cost, or a negative length.
inline void validate_pool(const TrajectoryPool& pool) {
  constexpr std::string_view fn = "ltt::curation::validate_pool";
  detail::require_nonempty(fn, "score", pool.score.size());
  const std::size_t N = pool.score.size();
  detail::require_same_size(fn, "id", pool.id.size(), "score", N);
  auto optional_column = [&](std::string_view name, std::size_t size) {
    if (size != 0) detail::require_same_size(fn, name, size, "score", N);
  };
  optional_column("length", pool.length.size());
  optional_column("episodic_return", pool.episodic_return.size());
  optional_column("episodic_cost", pool.episodic_cost.size());
  detail::require_finite(fn, "score", pool.score);
  detail::require_finite(fn, "episodic_return", pool.episodic_return);
  detail::require_finite(fn, "episodic_cost", pool.episodic_cost);
  for (std::size_t i = 0; i < pool.length.size(); ++i)
    if (pool.length[i] < 0)
      detail::invalid(fn, detail::at("length", i), detail::show(pool.length[i]), "must be >= 0");
  detail::require_unique_ids(fn, "id", pool.id);
}

// u(tau_i) = [episodic_cost_i > budget], one byte (0 or 1) per trajectory.
inline std::vector<std::uint8_t> unsafe_bits(std::span<const double> episodic_cost, double budget) {
  constexpr std::string_view fn = "ltt::curation::unsafe_bits";
  detail::require_finite(fn, "budget", budget);
  detail::require_finite(fn, "episodic_cost", episodic_cost);
  std::vector<std::uint8_t> u(episodic_cost.size());
  for (std::size_t i = 0; i < u.size(); ++i) u[i] = episodic_cost[i] > budget ? 1 : 0;
  return u;
}

// The realized unsafe fraction unsafe(S) = |S|^-1 sum_{tau in S} u(tau) of Proposition
// "guarantee", for a selection given as pool positions. 0 for an empty selection.
inline double unsafe_fraction(std::span<const std::uint8_t> unsafe,
                              std::span<const std::int64_t> selection) {
  constexpr std::string_view fn = "ltt::curation::unsafe_fraction";
  std::int64_t bad = 0;
  for (std::size_t i = 0; i < selection.size(); ++i) {
    const std::int64_t s = selection[i];
    if (s < 0 || s >= detail::ssize(unsafe.size()))
      detail::invalid(
          fn, detail::at("selection", i), detail::show(s),
          "must be a pool position in [0, " + detail::show(detail::ssize(unsafe.size())) + ")");
    bad += unsafe[static_cast<std::size_t>(s)] != 0;
  }
  return selection.empty() ? 0.0 : static_cast<double>(bad) / static_cast<double>(selection.size());
}

}  // namespace ltt::curation
