#pragma once
// point-goal: a 2-D point robot with velocity, a goal and circular hazards (docs/tasks.md).
//
// Dynamics (dt = 0.1): action a in [-1, 1]^2 is an acceleration,
//   v <- 0.95 v + 2 a dt, then |v| capped at 1;  p <- p + v dt.
// Layout from the seed: the robot starts at the origin at rest, the goal lies at distance
// 2.5 .. 3.5 in a uniform direction, and 8 hazards of radius 0.4 are placed, two of them
// across the straight path (at 35% and 65% of the way, offset by at most 0.2 sideways), six
// anywhere in the arena, the square |x|, |y| <= 4, clear of start and goal. When the robot
// comes within 0.3 of the goal a new goal is drawn (as in Safety Gym's goal tasks): 2.5 .. 3.5
// away in a uniform direction, inside the arena and clear of the hazards.
// Observation (20 dims): velocity (2), goal vector goal - p (2), and a 16-bin pseudo-lidar
// over hazards: bin k covers directions [2 pi k / 16, 2 pi (k+1) / 16) in the world frame and
// holds max over hazards centred in it of max(0, 1 - distance to centre / 3).
// Reward: progress, distance to goal before the step minus after. Cost: 1 per step whose end
// position is inside a hazard. No terminal; timeout at 250 steps. Faster goal-seeking earns
// more reward (more goals in the horizon) and, through the hazards, more cost.

#include <array>
#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "episode_log.hpp"

namespace ltt::tasks {

class PointGoal {
 public:
  static constexpr std::int64_t observation_dim = 20, action_dim = 2, horizon = 250;
  static constexpr std::int64_t lidar_bins = 16, hazard_count = 8;
  static constexpr double budget = 5;
  static constexpr double dt = 0.1, max_speed = 1.0, hazard_radius = 0.4, goal_radius = 0.3,
                          lidar_range = 3.0, arena = 4.0;

  explicit PointGoal(std::uint64_t layout_seed);

  std::array<float, observation_dim> observation() const;
  // Action components are clipped to [-1, 1]. Stepping after the episode ended throws.
  Step step(std::span<const double> action);

  struct Vec { double x = 0, y = 0; };
  Vec position() const { return p_; }
  Vec velocity() const { return v_; }
  Vec goal() const { return goal_; }
  std::span<const Vec> hazards() const { return hazards_; }
  std::int64_t steps() const { return t_; }
  std::int64_t goals_reached() const { return goals_reached_; }
  bool done() const { return done_; }

 private:
  Vec p_, v_, goal_;
  std::array<Vec, hazard_count> hazards_;
  std::int64_t t_ = 0, goals_reached_ = 0;
  bool done_ = false;
  std::mt19937_64 rng_;  // the layout and the goals after the first

  void next_goal();
};

// Shares of the three scripted controllers in the behavior mixture; erratic takes the rest.
struct PointGoalMixture {
  double reckless = 0.35;
  double careful = 0.40;
};
// The behavior mixture of docs/tasks.md: each episode draws a layout and a scripted
// controller (reckless / careful / erratic, with drawn caution, speed and noise), seeded.
TaskPool generate_point_goal(std::int64_t episodes, std::uint64_t seed,
                             const PointGoalMixture& mixture = {});

}  // namespace ltt::tasks
