#pragma once
// point-goal: a point robot reaching goals among hazards, built after Safety-Gymnasium's
// PointGoal1 (its field, sensors, reward and cost) and DSRL's dataset of it (how the behavior
// was collected); docs/tasks.md, "point-goal", says which property of each each choice follows.
//
// Field (Safety-Gymnasium GoalLevel1): 8 hazards of radius 0.2, then the robot, then the goal
// are placed uniformly in [-1.5, 1.5]^2, any two of them at least the sum of their keepouts apart
// (hazard 0.18, robot 0.4, goal 0.305). A goal of radius 0.3: within it, a new goal is placed the
// same way (clear of the hazards and of the robot). No walls.
// Dynamics (dt = 0.1 s, 200 steps: the 20 s of a 1000-step Safety-Gymnasium episode): the action
// a in [-1, 1]^2 (clipped) is an acceleration in the goal frame, a_world = a[0] e + a[1] n, e the
// unit vector toward the goal and n = e turned 90 degrees left; v <- 0.95 v + 2 a_world dt, |v|
// capped at 1; p <- p + v dt.
// Observation (34 dims), robot-centred and turned toward the goal: the velocity along e and n,
// then Safety-Gymnasium's pseudo-lidar (16 bins, max_dist 3, aliased) of the goal and of the
// hazards. Bin k covers bearings [2 pi k / 16, 2 pi (k+1) / 16) counter-clockwise from e; an object
// at distance d and bearing b in bin k reads s = max(0, 3 - d) / 3 there, alias * s in bin k + 1
// and (1 - alias) * s in bin k - 1, alias = b / (2 pi / 16) - k; a bin keeps the largest reading.
// Reward: progress toward the goal, plus 1 on reaching it. Cost: 1 for every hazard whose disc
// holds the robot at the end of the step. No terminal; timeout at 200 steps.
// Behavior: generate_point_goal.
#include <array>
#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "episode_log.hpp"
#include "goal_frame_point.hpp"
#include "training_run.hpp"

namespace ltt::tasks {

class PointGoal : public GoalFramePoint<8> {
 public:
  static constexpr std::int64_t lidar_bins = 16;
  static constexpr std::int64_t observation_dim = 2 + 2 * lidar_bins, action_dim = 2, horizon = 200;
  // Hazards may overlap (their centres are at least 0.36 apart, radius 0.2), never three at a
  // point: at most 2 cost a step.
  static constexpr double budget = 5, max_step_cost = 2;
  static constexpr double dt = 0.1, max_speed = 1.0, hazard_radius = 0.2, goal_radius = 0.3,
                          lidar_range = 3.0, extent = 1.5, hazard_keepout = 0.18,
                          robot_keepout = 0.4, goal_keepout = 0.305;
  // The pool's world geometry: the field everything is placed in (the robot may leave it).
  static constexpr WorldLayout world_layout{-extent, -extent, extent, extent, hazard_radius,
                                            goal_radius};

  explicit PointGoal(std::uint64_t layout_seed);

  std::array<float, observation_dim> observation() const;
  // Action components (goal frame) are clipped to [-1, 1]. Stepping after the end throws.
  Step step(std::span<const double> action);


 private:
  void place_goal();
};

// The behavior family: a checkpoint's policy mean as a function of the observation, its
// competence q, caution c and noise sigma (training_run.hpp), plus Gaussian noise of std sigma on
// each action component. Goal seeking at speed max(speed_floor, 1 - speed_cut c), slowing
// near the goal; every hazard bin whose disc is nearer than margin(c) = margin_low +
// (margin_high - margin_low) c pushes away from the hazard with strength push c (c = 0: hazards
// are ignored) and slides past it on the side away from the goal line; near a hazard the speed
// falls by up to near_slowdown c more; the whole mean is scaled by q.
struct PointGoalBehavior {
  double margin_low = 0.3, margin_high = 0.3;
  double push = 1.2;
  double speed_cut = 1.5, speed_floor = 0.1;
  double near_slowdown = 0.5;
};

// The checkpoint's action for the environment's current observation (noise from rng).
std::array<double, 2> point_goal_action(const PointGoal& env, const Checkpoint& checkpoint,
                                        const PointGoalBehavior& behavior, std::mt19937_64& rng);

// The policy mean alone (no noise), from an observation (observation_dim values).
std::array<double, 2> point_goal_policy_mean(std::span<const float> observation,
                                             const Checkpoint& checkpoint,
                                             const PointGoalBehavior& behavior);

// One episode of the checkpoint from `seed` (its layout, then its action noise), logged when
// `log` is not null: the EpisodeRunner of point-goal's training run.
EpisodeMetrics run_point_goal_episode(std::uint64_t seed, const Checkpoint& checkpoint,
                                      const PointGoalBehavior& behavior, EpisodeLog* log);

struct PointGoalData {
  TrainingRunOptions run{};
  PointGoalBehavior behavior{};
};

// DSRL-like behavior data (docs/tasks.md): the dataset of a simulated TRPO-Lagrangian run on
// point-goal with DSRL PointGoal1's threshold schedule, collected through FSRL's trajectory
// buffer. Seeded.
TaskPool generate_point_goal(std::int64_t episodes, std::uint64_t seed,
                             const PointGoalData& data = {});

// The run behind generate_point_goal: every episode it logged, with its checkpoint, and which
// of them the dataset keeps (for the docs' tables and the tests).
TrainingRun point_goal_training_run(std::int64_t episodes, std::uint64_t seed,
                                    const PointGoalData& data = {});

}  // namespace ltt::tasks
