// Tests for reference_pipeline/tasks/trajectory_buffer.hpp (FSRL's TrajectoryBuffer): the grid
// filter on constructed (return, cost) sets whose kept episodes are known, and the buffer's range
// filter, thinning and unthinned last arrivals.

#include <tasks/trajectory_buffer.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <stdexcept>
#include <vector>

namespace {

namespace tasks = ltt::tasks;
using tasks::EpisodeMetrics;

std::vector<std::int64_t> range(std::int64_t from, std::int64_t to) {
  std::vector<std::int64_t> v;
  for (std::int64_t i = from; i < to; ++i) v.push_back(i);
  return v;
}

}  // namespace

TEST_CASE("grid filter: at most target episodes are all kept") {
  std::mt19937_64 rng(1);
  const std::vector<EpisodeMetrics> few{{1, 1}, {2, 2}, {3, 3}};
  CHECK(tasks::grid_filter(few, 3, rng) == range(0, 3));
  CHECK(tasks::grid_filter(few, 10, rng) == range(0, 3));
  CHECK_THROWS_AS(tasks::grid_filter(few, 0, rng), std::invalid_argument);
}

TEST_CASE("grid filter: a sparse cell is kept whole, a dense one keeps its newest") {
  // target 4: a 2 x 2 grid over the box [0, 2] x [0, 2], cells of width 1. Nine episodes in cell
  // (0, 0), one at the box's top corner (2, 2), which FSRL's floor division puts in a cell of its
  // own. The first pass keeps each cell's newest (8 and 9), the fill takes from the one cell left
  // with members, newest first (7, then 6), whatever the random draws.
  std::vector<EpisodeMetrics> e;
  for (int i = 0; i < 9; ++i) e.push_back({0.1 * i, 0.05 * i});
  e.push_back({2, 2});
  for (const std::uint64_t seed : {1, 2, 3}) {
    std::mt19937_64 rng(seed);
    CHECK(tasks::grid_filter(e, 4, rng) == std::vector<std::int64_t>{6, 7, 8, 9});
  }
}

TEST_CASE("grid filter: exactly target kept, one per non-empty cell at least, seeded") {
  // 400 episodes on a diagonal band of the (return, cost) plane, 100 kept on a 10 x 10 grid.
  std::vector<EpisodeMetrics> e;
  std::mt19937_64 draw(7);
  std::uniform_real_distribution<double> u(0, 1);
  for (int i = 0; i < 400; ++i) {
    const double x = u(draw);
    e.push_back({20 * x, 20 * x + 3 * u(draw)});
  }
  std::mt19937_64 a(5), b(5), c(6);
  const std::vector<std::int64_t> kept = tasks::grid_filter(e, 100, a);
  CHECK(kept.size() == 100);
  CHECK(std::is_sorted(kept.begin(), kept.end()));
  CHECK(std::set<std::int64_t>(kept.begin(), kept.end()).size() == 100);
  CHECK(tasks::grid_filter(e, 100, b) == kept);
  CHECK(tasks::grid_filter(e, 100, c) != kept);
  // Every cell the episodes occupy keeps at least one of them.
  double r_lo = 1e9, r_hi = -1e9, c_lo = 1e9, c_hi = -1e9;
  for (const EpisodeMetrics& m : e) {
    r_lo = std::min(r_lo, m.episodic_return);
    r_hi = std::max(r_hi, m.episodic_return);
    c_lo = std::min(c_lo, m.episodic_cost);
    c_hi = std::max(c_hi, m.episodic_cost);
  }
  const auto cell = [&](const EpisodeMetrics& m) {
    return std::pair{static_cast<int>((m.episodic_return - r_lo) / ((r_hi - r_lo) / 10)),
                     static_cast<int>((m.episodic_cost - c_lo) / ((c_hi - c_lo) / 10))};
  };
  std::set<std::pair<int, int>> occupied, covered;
  for (const EpisodeMetrics& m : e) occupied.insert(cell(m));
  for (const std::int64_t i : kept) covered.insert(cell(e[static_cast<std::size_t>(i)]));
  CHECK(covered == occupied);
}

TEST_CASE("trajectory buffer: the range filter, the thinning and the last arrivals") {
  tasks::TrajectoryBufferOptions o;
  o.capacity = 10;
  o.filter_interval = 1.5;  // thinned back to 10 whenever it reaches 15
  o.return_floor = 0;
  o.cost_ceiling = 50;
  std::vector<EpisodeMetrics> e;
  for (int i = 0; i < 60; ++i)
    e.push_back({static_cast<double>(i % 7), static_cast<double>(i % 11)});
  e[3] = {-1, 1};  // below the return floor
  e[4] = {1, 51};  // above the cost ceiling
  std::mt19937_64 rng(3);
  const std::vector<std::int64_t> held = tasks::trajectory_buffer(e, o, 4, rng);
  CHECK(held.size() == 14);
  CHECK(std::is_sorted(held.begin(), held.end()));
  CHECK(std::find(held.begin(), held.end(), 3) == held.end());
  CHECK(std::find(held.begin(), held.end(), 4) == held.end());
  // The last four accepted arrived after the last thinning: all held.
  for (const std::int64_t i : {56, 57, 58, 59})
    CHECK(std::find(held.begin(), held.end(), i) != held.end());
  // No settling: exactly the capacity.
  std::mt19937_64 rng2(3);
  CHECK(tasks::trajectory_buffer(e, o, 0, rng2).size() == 10);
  // At most limit - capacity - 1 = 4 can arrive after the last thinning.
  std::mt19937_64 rng3(3);
  CHECK_THROWS_AS(tasks::trajectory_buffer(e, o, 5, rng3), std::invalid_argument);
  o.filter_interval = 1;
  CHECK_THROWS_AS(tasks::trajectory_buffer(e, o, 0, rng3), std::invalid_argument);
  o.filter_interval = 1.5;
  o.capacity = 0;
  CHECK_THROWS_AS(tasks::trajectory_buffer(e, o, 0, rng3), std::invalid_argument);
}
