// Tests for reference_pipeline/tasks/car_run.hpp: reward and cost of a step, determinism, the
// behavior pool's properties (docs/tasks.md) and its DSRL round trip.

#include <tasks/car_run.hpp>

#include <doctest/doctest.h>

#include "pool_checks.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>

namespace {
namespace tasks = ltt::tasks;
using tasks::CarRun;
}  // namespace

TEST_CASE("car-run: reward is forward progress, cost is off-lane or over the speed limit") {
  CarRun car(3);
  CHECK(std::abs(car.y()) <= 0.3);
  // Hold the heading at zero and accelerate: cost starts exactly when the speed passes 1.5.
  while (!car.done()) {
    const double x0 = car.x();
    const std::array<double, 2> a{-car.heading() / (std::max(car.speed(), 0.1) * CarRun::dt), 1.0};
    const tasks::Step s = car.step(a);
    CHECK(s.reward == doctest::Approx(car.x() - x0).epsilon(1e-12));
    CHECK(s.cost == ((std::abs(car.y()) > CarRun::lane_limit || car.speed() > CarRun::speed_limit) ? 1.0 : 0.0));
    CHECK(s.timeout == (car.steps() == CarRun::horizon));
    CHECK_FALSE(s.terminal);
  }
  CHECK(car.speed() == CarRun::max_speed);
  const auto o = car.observation();
  CHECK(o[0] == static_cast<float>(CarRun::max_speed));
  CHECK(o.size() == static_cast<std::size_t>(CarRun::observation_dim));
}

TEST_CASE("car-run: the behavior pool is seeded, 30-70% over budget, safe ones drive") {
  const std::int64_t episodes = 400;
  const tasks::TaskPool pool = tasks::generate_car_run(episodes, 1);
  CHECK(tasks::generate_car_run(episodes, 1).dataset.actions.bytes == pool.dataset.actions.bytes);
  CHECK(tasks::generate_car_run(episodes, 2).dataset.actions.bytes != pool.dataset.actions.bytes);
  CHECK(pool.dataset.observations.shape[1] == CarRun::observation_dim);

  std::int64_t unsafe = 0;
  double safe_min_return = 1e300;
  for (const tasks::EpisodeRecord& e : pool.episodes) {
    CHECK(e.length == CarRun::horizon);
    if (e.episodic_cost > CarRun::budget)
      ++unsafe;
    else
      safe_min_return = std::min(safe_min_return, e.episodic_return);
  }
  const double unsafe_fraction = static_cast<double>(unsafe) / episodes;
  MESSAGE("car-run pool: unsafe fraction " << unsafe_fraction << ", least safe return "
                                           << safe_min_return);
  CHECK(unsafe_fraction >= 0.3);
  CHECK(unsafe_fraction <= 0.7);
  // At least a third of the 30 units the speed limit allows in 200 steps: not a parked car.
  CHECK(safe_min_return >= 10);
  ltt_test::check_dsrl_round_trip(pool, "car-run");
}
