#pragma once
// point-goal-rim: a 2-D point robot with velocity, a goal and circular hazards (docs/tasks.md).
//
// Dynamics (dt = 0.1): the action is an acceleration in the goal frame (below),
//   a_world = a[0] e + a[1] n,  v <- 0.95 v + 2 a_world dt, then |v| capped at 1;  p <- p + v dt,
// with e the unit vector from the robot to the goal and n = e turned 90 degrees to the left.
// Layout from the seed: the robot starts at the origin at rest, the goal lies at distance
// 2.5 .. 3.5 in a uniform direction, and 10 hazards of radius 0.4 are placed, two of them
// across the straight path (at 35% and 65% of the way, offset by at most 0.2 sideways), eight
// anywhere in the arena, the square |x|, |y| <= 4, clear of start and goal. When the robot
// comes within 0.3 of the goal a new goal is drawn (as in Safety Gym's goal tasks): 2.5 .. 3.5
// away in a uniform direction, inside the arena and clear of the hazards.
// Observation (35 dims), robot-centred and turned so that the goal lies straight ahead, as
// Safety-Gymnasium's egocentric sensors are turned with the robot: velocity along e and n (2),
// goal distance / 3 (1), and a 32-bin lidar over hazards: bin k covers bearings
// [2 pi k / 32, 2 pi (k+1) / 32) counter-clockwise from e and holds max over hazards centred
// in it of max(0, 1 - distance to centre / 3). Bin 0 starts exactly at the goal direction, so a
// hazard just left of the straight path (bin 0) and one just right of it (bin 31) read apart.
// Reward: progress, distance to goal before the step minus after. Cost (graded, <= 1 a step):
// the penetration depth of the step's end position, max over hazards of max(0, 1 - d / 0.4),
// d the distance to the hazard's centre: 0 on the rim, 1 at the centre. No terminal; timeout
// at 200 steps. Behavior: see generate_point_goal_rim.

#include <array>
#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "episode_log.hpp"
#include "goal_frame_point.hpp"

namespace ltt::tasks {

class PointGoalRim : public GoalFramePoint<10> {
 public:
  static constexpr std::int64_t lidar_bins = 32;
  static constexpr std::int64_t observation_dim = 3 + lidar_bins, action_dim = 2, horizon = 200;
  static constexpr double budget = 5, max_step_cost = 1;
  static constexpr double dt = 0.1, max_speed = 1.0, hazard_radius = 0.4, goal_radius = 0.3,
                          lidar_range = 3.0, goal_scale = 3.0, arena = 4.0;
  // The pool's world geometry: the arena hazards and goals are placed in.
  static constexpr WorldLayout world_layout{-arena, -arena, arena, arena, hazard_radius,
                                            goal_radius};

  explicit PointGoalRim(std::uint64_t layout_seed);

  std::array<float, observation_dim> observation() const;
  // Action components (goal frame) are clipped to [-1, 1]. Stepping after the end throws.
  Step step(std::span<const double> action);

  // The graded cost of standing at q: max over hazards of max(0, 1 - distance / radius).
  double penetration(Vec q) const;

 private:
  void next_goal();
};

// The cost thresholds kappa the behavior's checkpoints were trained at, drawn uniform on
// [low, high] (in units of episodic cost; 0 <= low <= high). The default [0, 3B] is DSRL's:
// checkpoints trained at gradually changing thresholds, as for car-run (tasks/car_run.hpp).
struct PointGoalRimThresholds {
  double low = 0;
  double high = 3 * PointGoalRim::budget;
};

// One row of the controller family's calibration: its mean episodic cost at caution c, and
// that mean's standard error, measured on point_goal_rim_calibration_episodes episodes of
// point_goal_rim_calibration_seed (point_goal.cpp says how).
struct PointGoalRimCalibration {
  double caution = 0, mean_cost = 0, standard_error = 0;
};
inline constexpr std::uint64_t point_goal_rim_calibration_seed = 12;
inline constexpr std::int64_t point_goal_rim_calibration_episodes = 1000;

// The calibration table, cautions 0, 0.05, .., 1, mean costs non-increasing in c.
std::span<const PointGoalRimCalibration> point_goal_rim_calibration();

// c(kappa): the caution at which the family's expected episodic cost equals the threshold
// kappa, by monotone piecewise-linear interpolation of the calibration table; 0 (the least
// cautious member, unconstrained) for kappa at or above its expected cost, 1 (the most
// cautious) for kappa below the table's smallest mean cost. Throws std::invalid_argument
// (naming 'threshold') for a negative or non-finite kappa.
double point_goal_rim_caution(double threshold);

// The controller of caution c (0 drives straight through hazards at full speed, 1 keeps the
// widest margin at the lowest speed) on every episode: the calibration's measurement.
// Throws std::invalid_argument (naming 'caution') outside [0, 1].
TaskPool generate_point_goal_rim_at_caution(std::int64_t episodes, std::uint64_t seed,
                                            double caution);

// DSRL-like behavior data (docs/tasks.md): each episode draws a layout and a cost threshold
// kappa uniform on [thresholds.low, thresholds.high], and its checkpoint behaves with the
// caution c(kappa) = point_goal_rim_caution(kappa); the policy is a fixed function of the
// observation and c (goal seeking with a lidar-read hazard repulsion whose margin and strength
// grow with c, speed falling with c), plus Gaussian action noise of std 0.1. Seeded.
TaskPool generate_point_goal_rim(std::int64_t episodes, std::uint64_t seed,
                                 const PointGoalRimThresholds& thresholds = {});

}  // namespace ltt::tasks
