// Tests for reference_pipeline/tasks/velocity.hpp: the three tasks' dimensions and constants,
// the observation against MuJoCo's state, x_velocity, reward and cost recomputed by hand from
// qpos before and after each step, the hopper's health termination, the timeout at 1000 steps,
// the clipping of actions, the reset noise's ranges and spread, determinism, environments that
// share a model without touching each other, and the refusals (task name, action and
// observation sizes, non-finite actions, a spec that does not fit its model, a step after the
// end).

#include <tasks/velocity.hpp>

#include <doctest/doctest.h>

#include "../support/throws.hpp"

#include <tasks/mujoco_model.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <numbers>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace tasks = ltt::tasks;
using tasks::VelocityEnvironment;
using tasks::VelocityTaskSpec;

std::vector<float> observe(const VelocityEnvironment& env) {
  std::vector<float> o(static_cast<std::size_t>(env.task().observation_dim));
  env.observation(o);
  return o;
}

// A travelling sine wave over the actuators: a gait that moves every task (the hopper falls
// within a few dozen steps), amplitude 1.2 so that the clip is exercised.
std::vector<double> wave_action(const VelocityEnvironment& env, double hertz) {
  std::vector<double> a(static_cast<std::size_t>(env.task().action_dim));
  const double t = static_cast<double>(env.steps()) * env.task().dt();
  for (std::size_t j = 0; j < a.size(); ++j)
    a[j] = 1.2 * std::sin(2 * std::numbers::pi * hertz * t + static_cast<double>(j));
  return a;
}

// Gymnasium Hopper-v4's is_healthy, written out from hopper_v4.py.
bool hopper_healthy_by_hand(const VelocityEnvironment& env) {
  const auto q = env.qpos(), v = env.qvel();
  bool ok = q[1] > 0.7 && q[2] > -0.2 && q[2] < 0.2;
  for (std::size_t i = 2; i < q.size(); ++i) ok = ok && q[i] > -100 && q[i] < 100;
  for (const double x : v) ok = ok && x > -100 && x < 100;
  return ok;
}

}  // namespace

TEST_CASE("velocity tasks: the three tasks and their constants") {
  const auto all = tasks::velocity_tasks();
  REQUIRE(all.size() == 3);
  CHECK(all[0].name == "half-cheetah-velocity");
  CHECK(all[1].name == "hopper-velocity");
  CHECK(all[2].name == "swimmer-velocity");
  const VelocityTaskSpec& cheetah = tasks::velocity_task("half-cheetah-velocity");
  CHECK(cheetah.observation_dim == 17);
  CHECK(cheetah.action_dim == 6);
  CHECK(cheetah.dt() == doctest::Approx(0.05).epsilon(1e-15));
  CHECK(cheetah.velocity_threshold == 3.2096);
  CHECK(cheetah.control_cost_weight == 0.1);
  CHECK_FALSE(cheetah.health.has_value());
  const VelocityTaskSpec& hopper = tasks::velocity_task("hopper-velocity");
  CHECK(hopper.observation_dim == 11);
  CHECK(hopper.action_dim == 3);
  CHECK(hopper.dt() == doctest::Approx(0.008).epsilon(1e-15));
  CHECK(hopper.velocity_threshold == 0.7402);
  CHECK(hopper.healthy_reward == 1.0);
  CHECK(hopper.control_cost_weight == 1e-3);
  CHECK(hopper.observed_velocity_limit == 10.0);
  CHECK(hopper.health.has_value());
  const VelocityTaskSpec& swimmer = tasks::velocity_task("swimmer-velocity");
  CHECK(swimmer.observation_dim == 8);
  CHECK(swimmer.action_dim == 2);
  CHECK(swimmer.dt() == doctest::Approx(0.04).epsilon(1e-15));
  CHECK(swimmer.velocity_threshold == 0.2282);
  CHECK(swimmer.control_cost_weight == 1e-4);
  for (const VelocityTaskSpec& t : all) {
    CAPTURE(t.name);
    CHECK(t.horizon == 1000);
    CHECK(t.budget == 20);
    CHECK(t.max_step_cost == 1);
    CHECK(t.forward_reward_weight == 1);
    CHECK(tasks::mujoco_model(t.model).opt.timestep == t.timestep);
  }
}

TEST_CASE("velocity tasks: a bad task name, action, observation buffer or spec is refused") {
  ltt_test::check_throws_naming([] { (void)tasks::velocity_task("ant-velocity"); }, "task");
  try {
    (void)tasks::velocity_task("ant-velocity");
  } catch (const std::invalid_argument& e) {
    CHECK(std::string(e.what()).find("half-cheetah-velocity, hopper-velocity, swimmer-velocity") !=
          std::string::npos);
  }
  VelocityEnvironment env(tasks::velocity_task("hopper-velocity"), 1);
  const std::vector<double> two(2, 0.0), three(3, 0.0);
  ltt_test::check_throws_naming([&] { (void)env.step(two); }, "action");
  ltt_test::check_throws_naming(
      [&] { (void)env.step(std::vector<double>{0.0, ltt_test::not_a_number, 0.0}); }, "action");
  ltt_test::check_throws_naming(
      [&] { (void)env.step(std::vector<double>{0.0, 0.0, -INFINITY}); }, "action");
  CHECK(env.steps() == 0);  // nothing was stepped
  std::vector<float> small(10);
  ltt_test::check_throws_naming([&] { env.observation(small); }, "out");

  // A spec that does not fit its model: the hopper's numbers on the swimmer, another timestep.
  VelocityTaskSpec wrong = tasks::velocity_task("hopper-velocity");
  wrong.model = "swimmer.xml";
  ltt_test::check_throws_naming([&] { VelocityEnvironment e(wrong, 1); }, "task");
  wrong = tasks::velocity_task("hopper-velocity");
  wrong.timestep = 0.004;
  ltt_test::check_throws_naming([&] { VelocityEnvironment e(wrong, 1); }, "task");
  wrong = tasks::velocity_task("hopper-velocity");
  wrong.frame_skip = 0;
  ltt_test::check_throws_naming([&] { VelocityEnvironment e(wrong, 1); }, "task");
  wrong = tasks::velocity_task("hopper-velocity");
  wrong.model = "ant.xml";
  ltt_test::check_throws_naming([&] { VelocityEnvironment e(wrong, 1); }, "model");
}

TEST_CASE("velocity tasks: the observation is qpos without the leading positions, then qvel") {
  for (const VelocityTaskSpec& t : tasks::velocity_tasks()) {
    CAPTURE(t.name);
    VelocityEnvironment env(t, 7);
    for (int k = 0; k < 40 && !env.done(); ++k) {
      const auto o = observe(env);
      const auto q = env.qpos(), v = env.qvel();
      REQUIRE(o.size() == q.size() - static_cast<std::size_t>(t.positions_skipped) + v.size());
      std::size_t i = 0;
      for (std::size_t j = static_cast<std::size_t>(t.positions_skipped); j < q.size(); ++j)
        CHECK(o[i++] == static_cast<float>(q[j]));
      for (const double x : v)
        CHECK(o[i++] == static_cast<float>(std::clamp(x, -t.observed_velocity_limit,
                                                      t.observed_velocity_limit)));
      (void)env.step(wave_action(env, 1.0));
    }
  }
}

TEST_CASE("velocity tasks: the hopper's observed velocities are clipped to 10") {
  // Full thigh torque against the leg: joint velocities beyond 10 rad/s within a few steps.
  VelocityEnvironment env(tasks::velocity_task("hopper-velocity"), 3);
  bool clipped = false;
  while (!env.done()) {
    (void)env.step(std::vector<double>{1.0, -1.0, 1.0});
    const auto o = observe(env);
    const auto v = env.qvel();
    for (std::size_t i = 0; i < v.size(); ++i) {
      CHECK(std::abs(o[5 + i]) <= 10.0f);
      if (std::abs(v[i]) > 10) {
        clipped = true;
        CHECK(std::abs(o[5 + i]) == 10.0f);
      }
    }
  }
  CHECK(clipped);
}

TEST_CASE("velocity tasks: x_velocity, reward and cost recomputed from qpos before and after") {
  for (const VelocityTaskSpec& real : tasks::velocity_tasks()) {
    // The cheetah's gaits here stay below its threshold 3.2096 m/s; a copy with threshold 0.3
    // sees both sides of the rule (the hopper and the swimmer see both at their own).
    VelocityTaskSpec t = real;
    if (t.name == "half-cheetah-velocity") t.velocity_threshold = 0.3;
    CAPTURE(t.name);
    std::int64_t over = 0, under = 0;
    for (const double hertz : {0.5, 1.0, 2.0}) {
      VelocityEnvironment env(t, 11);
      while (!env.done()) {
        const double x_before = env.qpos()[0];
        const std::vector<double> a = wave_action(env, hertz);
        const tasks::Step s = env.step(a);
        const double x_velocity = (env.qpos()[0] - x_before) / (t.timestep * t.frame_skip);
        CHECK(env.x_velocity() == x_velocity);
        double control = 0;
        for (const double x : a) control += std::clamp(x, -1.0, 1.0) * std::clamp(x, -1.0, 1.0);
        const double healthy = t.health ? 1.0 : 0.0;
        CHECK(s.reward == doctest::Approx(x_velocity + healthy - t.control_cost_weight * control)
                              .epsilon(1e-14));
        CHECK(s.cost == (x_velocity > t.velocity_threshold ? 1.0 : 0.0));
        (s.cost > 0 ? over : under) += 1;
      }
    }
    CHECK(over > 0);
    CHECK(under > 0);
  }
}

TEST_CASE("velocity tasks: the hopper ends when it falls, by Gymnasium's health rule") {
  const VelocityTaskSpec& t = tasks::velocity_task("hopper-velocity");
  for (const std::uint64_t seed : {1, 2, 3}) {
    VelocityEnvironment env(t, seed);
    CHECK(env.healthy());
    tasks::Step s;
    // Full torque on every joint: it topples within a few dozen steps.
    while (!env.done()) {
      s = env.step(std::vector<double>{-1.0, 1.0, -1.0});
      CHECK(env.healthy() == hopper_healthy_by_hand(env));
      CHECK(s.terminal == !env.healthy());
      CHECK_FALSE(s.timeout);
    }
    CHECK(s.terminal);
    CHECK(env.steps() < 200);
    MESSAGE("seed " << seed << ": the hopper fell at step " << env.steps() << " (z "
                    << env.qpos()[1] << ", angle " << env.qpos()[2] << ")");
    CHECK_THROWS_AS((void)env.step(std::vector<double>{0.0, 0.0, 0.0}), std::logic_error);
  }
}

TEST_CASE("velocity tasks: with the angle rule lifted, the hopper ends when z drops to 0.7") {
  VelocityTaskSpec t = tasks::velocity_task("hopper-velocity");
  t.health->angle = {-INFINITY, INFINITY};
  VelocityEnvironment env(t, 4);
  tasks::Step s;
  while (!env.done()) {
    s = env.step(std::vector<double>{-1.0, 1.0, -1.0});
    const auto q = env.qpos();
    bool state_ok = true;
    for (std::size_t i = 2; i < q.size(); ++i) state_ok = state_ok && std::abs(q[i]) < 100;
    for (const double x : env.qvel()) state_ok = state_ok && std::abs(x) < 100;
    CHECK(s.terminal == !(q[1] > 0.7 && state_ok));
  }
  CHECK(s.terminal);
  CHECK(env.qpos()[1] <= 0.7);
  MESSAGE("the hopper's height fell to " << env.qpos()[1] << " at step " << env.steps());
}

TEST_CASE("velocity tasks: the cheetah and the swimmer time out at step 1000, never terminal") {
  for (const char* name : {"half-cheetah-velocity", "swimmer-velocity"}) {
    CAPTURE(name);
    VelocityEnvironment env(tasks::velocity_task(name), 5);
    tasks::Step s;
    while (!env.done()) {
      s = env.step(wave_action(env, 2.0));
      CHECK_FALSE(s.terminal);
      CHECK(s.timeout == (env.steps() == 1000));
    }
    CHECK(env.steps() == 1000);
    CHECK(s.timeout);
    CHECK_THROWS_AS((void)env.step(wave_action(env, 2.0)), std::logic_error);
  }
}

TEST_CASE("velocity tasks: actions are clipped to [-1, 1] before MuJoCo sees them") {
  for (const VelocityTaskSpec& t : tasks::velocity_tasks()) {
    CAPTURE(t.name);
    VelocityEnvironment raw(t, 9), clipped(t, 9);
    std::mt19937_64 rng(4);
    for (int k = 0; k < 30 && !raw.done(); ++k) {
      std::vector<double> a(static_cast<std::size_t>(t.action_dim)), c(a.size());
      for (std::size_t j = 0; j < a.size(); ++j) {
        a[j] = tasks::uniform(rng, -3.0, 3.0);
        c[j] = std::clamp(a[j], -1.0, 1.0);
      }
      const tasks::Step sa = raw.step(a), sc = clipped.step(c);
      CHECK(sa.reward == sc.reward);
      CHECK(sa.cost == sc.cost);
      CHECK(sa.terminal == sc.terminal);
      CHECK(observe(raw) == observe(clipped));
    }
  }
}

TEST_CASE("velocity tasks: the reset noise is U(-s, s) on qpos, U(-s, s) or s N(0, 1) on qvel") {
  for (const VelocityTaskSpec& t : tasks::velocity_tasks()) {
    CAPTURE(t.name);
    const mjModel& m = tasks::mujoco_model(t.model);
    const double s = t.reset_noise_scale;
    double q_low = s, q_high = -s, v_low = 1e9, v_high = -1e9, v_sum = 0, v_squares = 0;
    std::int64_t n = 0;
    for (std::uint64_t seed = 0; seed < 400; ++seed) {
      VelocityEnvironment env(t, seed);
      const auto q = env.qpos(), v = env.qvel();
      for (std::size_t i = 0; i < q.size(); ++i) {
        const double u = q[i] - m.qpos0[i];
        CHECK(u >= -s * (1 + 1e-12));
        CHECK(u < s * (1 + 1e-12));
        q_low = std::min(q_low, u);
        q_high = std::max(q_high, u);
      }
      for (const double x : v) {
        v_low = std::min(v_low, x);
        v_high = std::max(v_high, x);
        v_sum += x;
        v_squares += x * x;
        ++n;
      }
    }
    // 400 starts of at least 5 draws: the extremes come within 2% of the range's ends.
    CHECK(q_low < -0.98 * s);
    CHECK(q_high > 0.98 * s);
    const double mean = v_sum / static_cast<double>(n);
    const double sd = std::sqrt(v_squares / static_cast<double>(n) - mean * mean);
    if (t.reset_noise == tasks::VelocityResetNoise::uniform) {
      CHECK(v_low >= -s);
      CHECK(v_high < s);
      CHECK(v_low < -0.98 * s);
      CHECK(v_high > 0.98 * s);
    } else {
      // s N(0, 1) on 3600 draws: mean within 5 standard errors of 0, standard deviation
      // within 5 of its own (sd / sqrt(2n)) of s, and beyond 3 s somewhere (p ~ 0.99).
      CHECK(std::abs(mean) < 5 * s / std::sqrt(static_cast<double>(n)));
      CHECK(std::abs(sd - s) < 5 * s / std::sqrt(2.0 * static_cast<double>(n)));
      CHECK(std::max(-v_low, v_high) > 3 * s);
    }
  }
}

TEST_CASE("velocity tasks: an episode is a function of the task, the seed and the actions") {
  for (const VelocityTaskSpec& t : tasks::velocity_tasks()) {
    CAPTURE(t.name);
    VelocityEnvironment a(t, 21), b(t, 21), c(t, 22);
    CHECK(observe(a) == observe(b));
    CHECK(observe(a) != observe(c));
    // Two environments stepped in turn on the shared model give what one alone gives.
    VelocityEnvironment alone(t, 21);
    std::vector<std::vector<float>> alone_observations;
    while (!alone.done() && alone.steps() < 100) {
      (void)alone.step(wave_action(alone, 1.0));
      alone_observations.push_back(observe(alone));
    }
    std::size_t k = 0;
    while (!a.done() && a.steps() < 100) {
      if (!c.done()) (void)c.step(wave_action(c, 3.0));
      (void)a.step(wave_action(a, 1.0));
      CHECK(observe(a) == alone_observations[k++]);
    }
  }
}

TEST_CASE("velocity tasks: environments on two threads give the bytes of one thread") {
  const VelocityTaskSpec& t = tasks::velocity_task("half-cheetah-velocity");
  const auto run = [&t](std::uint64_t seed) {
    VelocityEnvironment env(t, seed);
    std::vector<float> all;
    while (!env.done() && env.steps() < 300) {
      (void)env.step(wave_action(env, 1.5));
      const auto o = observe(env);
      all.insert(all.end(), o.begin(), o.end());
    }
    return all;
  };
  const auto first = run(1), second = run(2);
  std::vector<float> threaded_first, threaded_second;
  std::thread one([&] { threaded_first = run(1); });
  std::thread two([&] { threaded_second = run(2); });
  one.join();
  two.join();
  CHECK(threaded_first == first);
  CHECK(threaded_second == second);
}

TEST_CASE("velocity tasks: stepped through the Environment interface") {
  std::unique_ptr<tasks::Environment> env =
      std::make_unique<VelocityEnvironment>(tasks::velocity_task("swimmer-velocity"), 1);
  std::vector<float> o(8);
  std::int64_t steps = 0;
  while (!env->done()) {
    env->observation(o);
    (void)env->step(std::vector<double>{0.5, -0.5});
    ++steps;
  }
  CHECK(steps == 1000);
}
