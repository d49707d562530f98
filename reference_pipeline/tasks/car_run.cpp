#include "car_run.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>

#include <curation/detail/random.hpp>

namespace ltt::tasks {
namespace {

// Lane keeping toward y = 0 and speed tracking toward a target, with Gaussian action noise and
// a steering bias held over the episode (a badly aligned car).
struct Controller {
  double target_speed = 1;  // as a fraction of the speed limit
  double lane_gain = 1;     // heading wanted per unit of lateral offset
  double noise = 0;
  double steer_bias = 0;

  std::array<double, 2> act(const CarRun& car, std::mt19937_64& rng) const {
    const double want_heading = std::clamp(-lane_gain * car.y(), -0.4, 0.4);
    const double steer = 2.0 * (want_heading - car.heading()) + steer_bias;
    const double throttle = 2.0 * (target_speed * CarRun::speed_limit - car.speed());
    return {std::clamp(steer + noise * standard_normal(rng), -1.0, 1.0),
            std::clamp(throttle + noise * standard_normal(rng), -1.0, 1.0)};
  }
};

Controller draw_controller(std::mt19937_64& rng) {
  const double u = curation::detail::uniform_unit(rng);
  if (u < 0.3)  // speeder: drives over the limit
    return {uniform(rng, 1.02, 1.3), uniform(rng, 0.5, 1.5), uniform(rng, 0.0, 0.3), 0.0};
  if (u < 0.7)  // careful: under the limit, firm lane keeping
    return {uniform(rng, 0.6, 0.95), uniform(rng, 0.8, 1.5), uniform(rng, 0.0, 0.3),
            uniform(rng, -0.05, 0.05)};
  // wobbly: near the limit, weak lane keeping, noisy, biased steering
  return {uniform(rng, 0.8, 1.0), uniform(rng, 0.0, 0.5), uniform(rng, 0.2, 0.7),
          uniform(rng, -0.3, 0.3)};
}

}  // namespace

CarRun::CarRun(std::uint64_t start_seed) {
  std::mt19937_64 rng(start_seed);
  y_ = uniform(rng, -0.3, 0.3);
  theta_ = uniform(rng, -0.1, 0.1);
}

std::array<float, CarRun::observation_dim> CarRun::observation() const {
  return {static_cast<float>(v_), static_cast<float>(y_), static_cast<float>(std::sin(theta_)),
          static_cast<float>(std::cos(theta_)), static_cast<float>(v_ * std::sin(theta_))};
}

Step CarRun::step(std::span<const double> action) {
  if (done()) throw std::logic_error("CarRun::step: the episode has ended");
  if (action.size() != static_cast<std::size_t>(action_dim))
    throw std::invalid_argument("CarRun::step: 'action' must have 2 components");
  const double steer = std::clamp(action[0], -1.0, 1.0), throttle = std::clamp(action[1], -1.0, 1.0);
  v_ = std::clamp(v_ + 2 * throttle * dt, 0.0, max_speed);
  theta_ += steer * v_ * dt;
  const double x0 = x_;
  x_ += v_ * std::cos(theta_) * dt;
  y_ += v_ * std::sin(theta_) * dt;
  ++t_;
  Step s;
  s.reward = x_ - x0;
  s.cost = (std::abs(y_) > lane_limit || v_ > speed_limit) ? 1 : 0;
  s.timeout = done();
  return s;
}

TaskPool generate_car_run(std::int64_t episodes, std::uint64_t seed) {
  if (episodes < 1) throw std::invalid_argument("generate_car_run: 'episodes' must be >= 1");
  std::mt19937_64 rng(seed);
  return log_episodes<CarRun>(episodes, rng, draw_controller);
}

}  // namespace ltt::tasks
