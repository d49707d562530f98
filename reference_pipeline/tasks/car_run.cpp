#include "car_run.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>
#include <stdexcept>

#include "check.hpp"

namespace ltt::tasks {
namespace {

constexpr double two_pi = 2 * std::numbers::pi;
constexpr double action_noise = 0.1;

// A behavior policy: a function of the observation alone and of the episode's caution c, so a
// clone that reads the observation could represent each of them. The checkpoint's cost
// threshold kappa = 3 budget (1 - c) sets the cruise target u with share kappa / horizon of the
// road over the limit: from (1 + swing - L / u) / (2 swing) = r, u = L / (1 + swing (1 - 2 r)).
// The cruise speed is read back from the observation, s = v / (1 + swing w(phase)), and tracked
// with a gain high enough (5) that the action noise moves it by about 2 dt 0.1 = 0.02 a step.
// Lane keeping steers toward y = 0 (wanted heading -y, clamped to +-0.4 rad).
struct Controller {
  double caution = 0;

  double target_speed() const {
    const double r = 3 * CarRun::budget * (1 - caution) / CarRun::horizon;
    return CarRun::speed_limit / (1 + CarRun::swing * (1 - 2 * r));
  }

  std::array<double, 2> act(const CarRun& car, std::mt19937_64& rng) const {
    const auto o = car.observation();
    const double v = o[0] * CarRun::speed_limit, y = o[1] * CarRun::lateral_scale;
    const double heading =
        std::asin(std::clamp(static_cast<double>(o[2]) * CarRun::lateral_scale, -1.0, 1.0));
    double phase = std::atan2(static_cast<double>(o[4]), static_cast<double>(o[5])) / two_pi;
    if (phase < 0) phase += 1;
    const double cruise = v / (1 + CarRun::swing * road_wave(phase));
    const double steer = 2.0 * (std::clamp(-y, -0.4, 0.4) - heading);
    const double throttle = 5.0 * (target_speed() - cruise);
    return {std::clamp(steer + action_noise * standard_normal(rng), -1.0, 1.0),
            std::clamp(throttle + action_noise * standard_normal(rng), -1.0, 1.0)};
  }
};

}  // namespace

double road_wave(double phase) {
  const double f = phase - std::floor(phase);
  if (f < 0.25) return 4 * f;
  if (f < 0.75) return 2 - 4 * f;
  return 4 * f - 4;
}

CarRun::CarRun(std::uint64_t start_seed) {
  std::mt19937_64 rng(start_seed);
  y_ = uniform(rng, -0.3, 0.3);
  theta_ = uniform(rng, -0.1, 0.1);
}

double CarRun::speed() const { return s_ * (1 + swing * road_wave(x_ / road_period)); }

std::array<float, CarRun::observation_dim> CarRun::observation() const {
  const double v = speed(), phase = two_pi * x_ / road_period;
  return {static_cast<float>(v / speed_limit),
          static_cast<float>(y_ / lateral_scale),
          static_cast<float>(std::sin(theta_) / lateral_scale),
          static_cast<float>(v * std::sin(theta_) / (speed_limit * lateral_scale)),
          static_cast<float>(std::sin(phase)),
          static_cast<float>(std::cos(phase))};
}

Step CarRun::step(std::span<const double> action) {
  if (done()) throw std::logic_error("ltt::tasks::CarRun::step: the episode has ended");
  if (action.size() != static_cast<std::size_t>(action_dim))
    detail::invalid("CarRun::step", "action",
                    data::cat("must have 2 components; it has ", detail::show(action.size())));
  const double steer = std::clamp(action[0], -1.0, 1.0),
               throttle = std::clamp(action[1], -1.0, 1.0);
  s_ = std::clamp(s_ + 2 * throttle * dt, 0.0, max_speed);
  const double v = speed();
  theta_ += steer * v * dt;
  const double x0 = x_;
  x_ += v * std::cos(theta_) * dt;
  y_ += v * std::sin(theta_) * dt;
  ++t_;
  Step s;
  s.reward = x_ - x0;
  s.cost = (std::abs(y_) > lane_limit || speed() > speed_limit) ? 1 : 0;
  s.timeout = done();
  return s;
}

TaskPool generate_car_run(std::int64_t episodes, std::uint64_t seed) {
  if (episodes < 1)
    detail::invalid("generate_car_run", "episodes", detail::show(episodes), "must be >= 1");
  std::mt19937_64 rng(seed);
  return log_episodes<CarRun>(episodes, rng,
                              [](std::mt19937_64& r) { return Controller{uniform(r, 0, 1)}; });
}

}  // namespace ltt::tasks
