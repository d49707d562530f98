#pragma once
// car-run: a car on a straight, rolling track along x, with a speed limit (docs/tasks.md).
//
// Dynamics (dt = 0.1): action a = (steer, throttle) in [-1, 1]^2. The throttle sets the
// cruise speed s <- clamp(s + 2 throttle dt, 0, 3); the rolling road swings the speed over
// ground around it, v = s (1 + 0.3 w(x / 3)), w the triangle wave of period 1 and range
// [-1, 1] (w(0) = 0, rising), as a legged runner's speed swings within its stride in DSRL's
// velocity tasks. theta <- theta + steer v dt;  x <- x + v cos(theta) dt;  y <- y + v sin(theta)
// dt. Start: x = 0, y uniform in [-0.3, 0.3], theta uniform in [-0.1, 0.1], s = 0 (from the seed).
// Observation (6 dims): v / 1.5 (speed over the limit's); the lateral quantities in units of
// 0.1, y / 0.1, sin(theta) / 0.1, v sin(theta) / (1.5 * 0.1) (the behavior keeps within about
// 0.1 of the centre line, so these read of order 1 like the rest); and the road's phase
// sin(2 pi x / 3), cos(2 pi x / 3).
// Reward: forward progress, x after the step minus before. Cost: 1 per step ending over the
// speed limit (v > 1.5) or off the lane (|y| > 1), as in DSRL's velocity tasks and
// BulletSafetyGym's CarRun. Over the road, the share of distance driven over the limit at
// cruise speed s is clamp((1.3 - 1.5 / s) / 0.6, 0, 1): linear in 1 / s, so the episodic cost
// grows gradually with the cruise speed. No terminal; timeout at 200 steps.
// Behavior: see generate_car_run.

#include <array>
#include <cstdint>
#include <span>

#include "episode_log.hpp"

namespace ltt::tasks {

class CarRun {
 public:
  static constexpr std::int64_t observation_dim = 6, action_dim = 2, horizon = 200;
  static constexpr double budget = 5, max_step_cost = 1;
  static constexpr double dt = 0.1, lane_limit = 1.0, speed_limit = 1.5, max_speed = 3.0,
                          swing = 0.3, road_period = 3.0, lateral_scale = 0.1;

  explicit CarRun(std::uint64_t start_seed);

  std::array<float, observation_dim> observation() const;
  Step step(std::span<const double> action);

  double x() const { return x_; }
  double y() const { return y_; }
  double heading() const { return theta_; }
  double cruise_speed() const { return s_; }
  double speed() const;  // over ground, v = s (1 + swing w(x / road_period))
  std::int64_t steps() const { return t_; }
  bool done() const { return t_ >= horizon; }

 private:
  double x_ = 0, y_ = 0, theta_ = 0, s_ = 0;
  std::int64_t t_ = 0;
};

// w: the triangle wave of period 1 and range [-1, 1], w(0) = 0, rising.
double road_wave(double phase);

// DSRL-like behavior data (docs/tasks.md): each episode draws a caution c uniform on [0, 1],
// read as the cost threshold kappa = 3 budget (1 - c) its checkpoint was trained at; the policy
// is a fixed function of the observation and c: lane keeping, and cruise-speed tracking toward
// the speed whose share of road over the limit is kappa / horizon, plus Gaussian action noise
// of std 0.1. Seeded.
TaskPool generate_car_run(std::int64_t episodes, std::uint64_t seed);

}  // namespace ltt::tasks
