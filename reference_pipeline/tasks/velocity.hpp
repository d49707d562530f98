#pragma once
// The velocity tasks, after Safety-Gymnasium 1.0's SafetyHalfCheetahVelocity-v1,
// SafetyHopperVelocity-v1 and SafetySwimmerVelocity-v1: Gymnasium 0.28.1's HalfCheetah-v4,
// Hopper-v4 and Swimmer-v4 on MuJoCo (the project's own MJCF after Gymnasium's, tasks/models/),
// with a cost of 1 on every step whose forward velocity exceeds the task's threshold.
// docs/tasks.md gives each task's numbers and the file each comes from.
//
//   action       a in R^action_dim, clipped to [-1, 1] and written to MuJoCo's ctrl (Gymnasium
//                writes it unclipped and MuJoCo clamps ctrl to the models' ctrlrange -1 1, the
//                same force); the control cost uses the clipped action
//   dynamics     frame_skip MuJoCo steps (mj_step) of the model's timestep: dt = frame_skip *
//                timestep
//   x_velocity   (qpos[0] after the step - qpos[0] before) / dt
//   reward       (forward_reward_weight * x_velocity + healthy_reward) - control_cost_weight *
//                sum(a^2)
//   cost         1 if x_velocity > velocity_threshold, else 0
//   observation  float32 of (qpos[positions_skipped:], qvel clipped to +-observed_velocity_limit)
//   termination  when the task has a health rule (hopper) and the state after the step breaks it;
//                a timeout after `horizon` steps (a step that is both is terminal, as EpisodeLog
//                stores it)
//   reset        MuJoCo's initial state (qpos0, zero velocity), then qpos[i] += U(-s, s) for every
//                i, then qvel[i] += U(-s, s) or s N(0, 1) for every i (s = reset_noise_scale),
//                drawn in that order from std::mt19937_64(seed) with the portable draws of
//                episode_log.hpp
//
// An episode is a function of (task, seed, actions) only: the same bytes on every x86-64-v3 CPU
// (tests/tasks/velocity_checksum.test.cpp; docs/tasks.md, "Determinism", says why).
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string_view>

#include "environment.hpp"

namespace ltt::tasks {

// An open interval (low, high), as Gymnasium's health test compares: low < x < high.
struct OpenInterval {
  double low = 0, high = 0;
  constexpr bool contains(double x) const { return low < x && x < high; }
};

// Gymnasium Hopper-v4's is_healthy: the height qpos[1] in z, the angle qpos[2] in angle, and every
// entry of the state vector (qpos, qvel) from index 2 on in state.
struct HealthRule {
  OpenInterval z, angle, state;
};

enum class VelocityResetNoise {
  uniform,                  // qpos and qvel: U(-s, s) each
  uniform_then_normal,      // qpos: U(-s, s); qvel: s N(0, 1)
};

struct VelocityTaskSpec {
  std::string_view name;   // "half-cheetah-velocity"
  std::string_view model;  // the embedded MJCF file, "half_cheetah.xml"
  std::int64_t observation_dim = 0, action_dim = 0;
  std::int64_t positions_skipped = 1;  // leading qpos entries the observation leaves out
  std::int64_t frame_skip = 1;         // MuJoCo steps per environment step
  double timestep = 0;                 // of one MuJoCo step, s: the model's (checked)
  double velocity_threshold = 0;
  double forward_reward_weight = 1, healthy_reward = 0, control_cost_weight = 0;
  double observed_velocity_limit = std::numeric_limits<double>::infinity();
  VelocityResetNoise reset_noise = VelocityResetNoise::uniform;
  double reset_noise_scale = 0;
  std::optional<HealthRule> health;  // terminate when broken (hopper); none: never terminal
  std::int64_t horizon = 1000;
  double budget = 20;        // an episode whose cost exceeds it is unsafe (the paper's budget)
  double max_step_cost = 1;  // episodic cost lies in [0, horizon * max_step_cost]

  constexpr double dt() const { return static_cast<double>(frame_skip) * timestep; }
};

// half-cheetah-velocity, hopper-velocity, swimmer-velocity.
std::span<const VelocityTaskSpec> velocity_tasks();
// The task called `name`. Throws std::invalid_argument naming 'task' and listing the names.
const VelocityTaskSpec& velocity_task(std::string_view name);

class VelocityEnvironment final : public Environment {
 public:
  // A fresh episode of `task`, its start drawn from `seed`. Throws std::invalid_argument naming
  // 'task' when the spec does not fit its model (dimensions, timestep) or is out of range.
  VelocityEnvironment(const VelocityTaskSpec& task, std::uint64_t seed);
  ~VelocityEnvironment() override;

  const VelocityTaskSpec& task() const { return task_; }
  // Writes the observation_dim floats. Throws std::invalid_argument naming 'out' for another size.
  void observation(std::span<float> out) const override;
  // One step. Throws std::invalid_argument naming 'action' for a size other than action_dim or a
  // value that is not finite, std::logic_error after the end, and std::runtime_error if MuJoCo
  // warns (a diverged state it would otherwise reset silently).
  Step step(std::span<const double> action) override;
  bool done() const override { return done_; }

  std::int64_t steps() const { return steps_; }
  // The last step's forward velocity (0 before the first step).
  double x_velocity() const { return x_velocity_; }
  // Whether the state passes the task's health rule (always, for a task without one).
  bool healthy() const;
  // MuJoCo's state: nq positions and nv velocities, unclipped.
  std::span<const double> qpos() const;
  std::span<const double> qvel() const;

 private:
  struct Simulation;  // MuJoCo's model and this episode's data (velocity.cpp)
  VelocityTaskSpec task_;
  std::unique_ptr<Simulation> sim_;
  std::int64_t steps_ = 0;
  double x_velocity_ = 0;
  bool done_ = false;
};

}  // namespace ltt::tasks
