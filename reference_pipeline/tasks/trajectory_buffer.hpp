#pragma once
// FSRL's TrajectoryBuffer, the store DSRL's datasets were collected into (liuzuxin/FSRL,
// fsrl/data/traj_buf.py; DSRL's scripts/train_trpol_expert.py): every episode of a training run
// is offered to it in order, and
//
//  - an episode whose return is below `return_floor` or whose cost is above `cost_ceiling` is
//    dropped (DSRL's PointGoal1 run: rmin = 0, cmax = 100 = 4 budgets);
//  - the buffer holds up to `capacity` episodes freely; when it reaches
//    floor(filter_interval * capacity) it is thinned back to `capacity` by the grid filter;
//  - the grid filter lays a g x g grid over the (return, cost) box of the episodes it holds,
//    g = ceil(sqrt(capacity)), keeps the most recent episode of every non-empty cell, then, until
//    `capacity` are kept, picks a non-empty cell uniformly at random and keeps its most recent
//    remaining episode. Dense regions of the (return, cost) plane are thinned, sparse ones kept
//    whole, and within a cell the newer episodes survive.
//
// The draws go through the portable curation::detail::uniform_below, so a seed gives the same
// buffer everywhere. Kept positions are returned in arrival order, as FSRL compacts its list.
#include <cstdint>
#include <random>
#include <span>
#include <vector>

namespace ltt::tasks {

struct TrajectoryBufferOptions {
  std::int64_t capacity = 1500;  // FSRL's max_trajectory (DSRL PointGoal1: max_traj_len = 1500)
  double filter_interval = 1.5;  // thinned at floor(filter_interval * capacity) episodes
  double return_floor = 0;       // rmin
  double cost_ceiling = 100;     // cmax
};

// The (return, cost) of an episode offered to the buffer.
struct EpisodeMetrics {
  double episodic_return = 0, episodic_cost = 0;
};

// The grid filter: positions (into `episodes`, ascending) of the `target` kept. All of them when
// there are at most `target`. Throws std::invalid_argument naming 'target' (< 1).
std::vector<std::int64_t> grid_filter(std::span<const EpisodeMetrics> episodes, std::int64_t target,
                                      std::mt19937_64& rng);

// The buffer over a whole run: `episodes` in arrival order; returns the positions held at the
// end, in arrival order. `settle_last` of the accepted episodes arrive after the buffer's last
// thinning (the buffer is thinned to `capacity` just before them, and they are added unthinned):
// the state in which a run's buffer was written out, between `capacity` and
// floor(filter_interval * capacity) - 1 episodes. Throws std::invalid_argument naming the option
// or 'settle_last' (negative, more than the accepted episodes, or not below
// floor(filter_interval * capacity) - capacity).
std::vector<std::int64_t> trajectory_buffer(std::span<const EpisodeMetrics> episodes,
                                            const TrajectoryBufferOptions& options,
                                            std::int64_t settle_last, std::mt19937_64& rng);

}  // namespace ltt::tasks
