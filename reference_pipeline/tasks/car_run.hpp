#pragma once
// car-run: a car on a straight track along x (docs/tasks.md).
//
// Dynamics (dt = 0.1): action a = (steer, throttle) in [-1, 1]^2,
//   v <- clamp(v + 2 throttle dt, 0, 3);  theta <- theta + steer v dt (at most 1 rad/s per
//   unit speed);  x <- x + v cos(theta) dt;  y <- y + v sin(theta) dt.
// Start: x = 0, y uniform in [-0.3, 0.3], theta uniform in [-0.1, 0.1], v = 0 (from the seed).
// Observation (5 dims): v, y, sin(theta), cos(theta), v sin(theta) (lateral speed).
// Reward: forward progress, x after the step minus before. Cost: 1 per step ending off the
// lane (|y| > 1) or over the speed limit (v > 1.5). No terminal; timeout at 200 steps.

#include <array>
#include <cstdint>
#include <span>

#include "episode_log.hpp"

namespace ltt::tasks {

class CarRun {
 public:
  static constexpr std::int64_t observation_dim = 5, action_dim = 2, horizon = 200;
  static constexpr double budget = 5;
  static constexpr double dt = 0.1, lane_limit = 1.0, speed_limit = 1.5, max_speed = 3.0;

  explicit CarRun(std::uint64_t start_seed);

  std::array<float, observation_dim> observation() const;
  Step step(std::span<const double> action);

  double x() const { return x_; }
  double y() const { return y_; }
  double heading() const { return theta_; }
  double speed() const { return v_; }
  std::int64_t steps() const { return t_; }
  bool done() const { return t_ >= horizon; }

 private:
  double x_ = 0, y_ = 0, theta_ = 0, v_ = 0;
  std::int64_t t_ = 0;
};

// The behavior mixture of docs/tasks.md (speeder / careful / wobbly), seeded.
TaskPool generate_car_run(std::int64_t episodes, std::uint64_t seed);

}  // namespace ltt::tasks
