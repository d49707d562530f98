#include "trajectory_buffer.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <utility>

#include <curation/detail/random.hpp>

#include "check.hpp"

namespace ltt::tasks {
namespace {

// The cell of x on a grid of `cells` over [lo, hi]; a box of zero width is one cell. The top
// edge gets a cell of its own, as FSRL's (x - lo) // size does.
std::int64_t cell_of(double x, double lo, double hi, std::int64_t cells) {
  if (!(hi > lo)) return 0;
  return static_cast<std::int64_t>(std::floor((x - lo) / ((hi - lo) / static_cast<double>(cells))));
}

}  // namespace

std::vector<std::int64_t> grid_filter(std::span<const EpisodeMetrics> episodes, std::int64_t target,
                                      std::mt19937_64& rng) {
  if (target < 1) detail::invalid("grid_filter", "target", detail::show(target), "must be >= 1");
  const auto n = static_cast<std::int64_t>(episodes.size());
  std::vector<std::int64_t> kept;
  if (n <= target) {
    for (std::int64_t i = 0; i < n; ++i) kept.push_back(i);
    return kept;
  }
  const auto cells = static_cast<std::int64_t>(std::ceil(std::sqrt(static_cast<double>(target))));
  double r_lo = std::numeric_limits<double>::infinity(), r_hi = -r_lo, c_lo = r_lo, c_hi = -r_lo;
  for (const EpisodeMetrics& e : episodes) {
    r_lo = std::min(r_lo, e.episodic_return);
    r_hi = std::max(r_hi, e.episodic_return);
    c_lo = std::min(c_lo, e.episodic_cost);
    c_hi = std::max(c_hi, e.episodic_cost);
  }
  // Cells in the order they are first met, each holding its members in arrival order.
  std::map<std::pair<std::int64_t, std::int64_t>, std::size_t> index;
  std::vector<std::vector<std::int64_t>> members;
  for (std::int64_t i = 0; i < n; ++i) {
    const EpisodeMetrics& e = episodes[static_cast<std::size_t>(i)];
    const std::pair<std::int64_t, std::int64_t> cell{cell_of(e.episodic_return, r_lo, r_hi, cells),
                                                     cell_of(e.episodic_cost, c_lo, c_hi, cells)};
    const auto [it, fresh] = index.try_emplace(cell, members.size());
    if (fresh) members.emplace_back();
    members[it->second].push_back(i);
  }
  // The most recent member of every cell, then random non-empty cells' most recent remaining.
  std::vector<std::size_t> non_empty;
  for (std::size_t c = 0; c < members.size(); ++c) {
    kept.push_back(members[c].back());
    members[c].pop_back();
    if (!members[c].empty()) non_empty.push_back(c);
  }
  while (static_cast<std::int64_t>(kept.size()) < target && !non_empty.empty()) {
    const auto pick = static_cast<std::size_t>(
        curation::detail::uniform_below(rng, static_cast<std::uint64_t>(non_empty.size())));
    std::vector<std::int64_t>& cell = members[non_empty[pick]];
    kept.push_back(cell.back());
    cell.pop_back();
    if (cell.empty()) non_empty.erase(non_empty.begin() + static_cast<std::ptrdiff_t>(pick));
  }
  // More non-empty cells than target: FSRL keeps the first `target` of its list.
  if (static_cast<std::int64_t>(kept.size()) > target)
    kept.resize(static_cast<std::size_t>(target));
  std::sort(kept.begin(), kept.end());
  return kept;
}

std::vector<std::int64_t> trajectory_buffer(std::span<const EpisodeMetrics> episodes,
                                            const TrajectoryBufferOptions& options,
                                            std::int64_t settle_last, std::mt19937_64& rng) {
  constexpr std::string_view function = "trajectory_buffer";
  if (options.capacity < 1)
    detail::invalid(function, "options.capacity", detail::show(options.capacity), "must be >= 1");
  if (!(options.filter_interval > 1 && std::isfinite(options.filter_interval)))
    detail::invalid(function, "options.filter_interval", detail::show(options.filter_interval),
                    "must be finite and > 1 (FSRL's own requirement)");
  if (std::isnan(options.return_floor) || std::isnan(options.cost_ceiling))
    detail::invalid(
        function,
        std::isnan(options.return_floor) ? "options.return_floor" : "options.cost_ceiling", "NaN",
        "must be a number");
  std::vector<std::int64_t> accepted;
  for (std::size_t i = 0; i < episodes.size(); ++i)
    if (episodes[i].episodic_return >= options.return_floor &&
        episodes[i].episodic_cost <= options.cost_ceiling)
      accepted.push_back(static_cast<std::int64_t>(i));
  const auto limit = static_cast<std::int64_t>(
      std::floor(options.filter_interval * static_cast<double>(options.capacity)));
  // After its last thinning the buffer takes at most limit - capacity - 1 more episodes.
  const std::int64_t most = std::min(static_cast<std::int64_t>(accepted.size()),
                                     std::max<std::int64_t>(0, limit - options.capacity - 1));
  if (settle_last < 0 || settle_last > most)
    detail::invalid(function, "settle_last", detail::show(settle_last),
                    data::cat("must lie in [0, ", detail::show(most),
                              "]: at most the accepted episodes, and fewer than the buffer takes "
                              "between two thinnings"));
  std::vector<std::int64_t> held;
  const auto thin = [&] {
    std::vector<EpisodeMetrics> metrics;
    for (const std::int64_t i : held) metrics.push_back(episodes[static_cast<std::size_t>(i)]);
    std::vector<std::int64_t> next;
    for (const std::int64_t k : grid_filter(metrics, options.capacity, rng))
      next.push_back(held[static_cast<std::size_t>(k)]);
    held = std::move(next);
  };
  const std::size_t settle_from = accepted.size() - static_cast<std::size_t>(settle_last);
  for (std::size_t a = 0; a < settle_from; ++a) {
    held.push_back(accepted[a]);
    if (static_cast<std::int64_t>(held.size()) >= limit) thin();
  }
  if (static_cast<std::int64_t>(held.size()) > options.capacity) thin();
  for (std::size_t a = settle_from; a < accepted.size(); ++a) held.push_back(accepted[a]);
  return held;
}

}  // namespace ltt::tasks
