#include "point_goal.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>
#include <stdexcept>

#include <curation/detail/random.hpp>

namespace ltt::tasks {
namespace {

using Vec = PointGoal::Vec;
constexpr double two_pi = 2 * std::numbers::pi;

double norm(Vec a) { return std::hypot(a.x, a.y); }
Vec sub(Vec a, Vec b) { return {a.x - b.x, a.y - b.y}; }

// A goal-seeking velocity controller with hazard repulsion (a potential field with a
// tangential slide so it goes around a hazard on the path rather than stopping at it).
struct Controller {
  double caution = 0;  // 0: ignores hazards; 1: keeps a wide margin
  double speed = 1;    // target speed
  double noise = 0;    // std of the Gaussian added to each action component

  std::array<double, 2> act(const PointGoal& env, std::mt19937_64& rng) const {
    const Vec p = env.position(), v = env.velocity();
    const Vec g = sub(env.goal(), p);
    const double dg = std::max(norm(g), 1e-9);
    const double s = std::min(speed, 1.5 * dg);  // slow down near the goal
    Vec want{s * g.x / dg, s * g.y / dg};
    const double margin = 0.15 + 0.6 * caution;
    for (const Vec h : env.hazards()) {
      const Vec d = sub(p, h);
      const double dc = std::max(norm(d), 1e-9);
      const double edge = dc - PointGoal::hazard_radius;
      if (caution <= 0 || edge > margin) continue;
      const double push = 2.0 * caution * (margin - std::max(edge, 0.0)) / margin;
      const Vec out{d.x / dc, d.y / dc};
      // slide around on the side the robot is already on relative to the goal direction:
      // the tangent (side * out.y, -side * out.x) turns toward the goal
      const double side = (g.x * out.y - g.y * out.x) >= 0 ? 1.0 : -1.0;
      want.x += push * (out.x + side * out.y);
      want.y += push * (out.y - side * out.x);
    }
    std::array<double, 2> a{3.0 * (want.x - v.x), 3.0 * (want.y - v.y)};
    for (double& x : a) x = std::clamp(x + noise * standard_normal(rng), -1.0, 1.0);
    return a;
  }
};

Controller draw_controller(std::mt19937_64& rng, const PointGoalMixture& mixture) {
  const double u = curation::detail::uniform_unit(rng);
  if (u < mixture.reckless) return {0.0, uniform(rng, 0.6, 1.0), uniform(rng, 0.0, 0.3)};   // reckless
  if (u < mixture.reckless + mixture.careful) return {uniform(rng, 0.5, 1.0), uniform(rng, 0.3, 0.8), uniform(rng, 0.0, 0.3)};  // careful
  return {uniform(rng, 0.1, 0.5), uniform(rng, 0.4, 0.9), uniform(rng, 0.3, 0.8)};  // erratic
}

}  // namespace

PointGoal::PointGoal(std::uint64_t layout_seed) : rng_(layout_seed) {
  const double angle = uniform(rng_, 0, two_pi), distance = uniform(rng_, 2.5, 3.5);
  goal_ = {distance * std::cos(angle), distance * std::sin(angle)};
  const Vec across{-std::sin(angle), std::cos(angle)};
  for (std::size_t i = 0; i < 2; ++i) {
    const double f = i == 0 ? 0.35 : 0.65, off = uniform(rng_, -0.2, 0.2);
    hazards_[i] = {f * goal_.x + off * across.x, f * goal_.y + off * across.y};
  }
  for (std::size_t i = 2; i < hazards_.size(); ++i) {
    for (;;) {  // clear of the start and the first goal
      const Vec h{uniform(rng_, -arena, arena), uniform(rng_, -arena, arena)};
      if (norm(h) > hazard_radius + 0.4 && norm(sub(h, goal_)) > hazard_radius + 0.4) {
        hazards_[i] = h;
        break;
      }
    }
  }
}

void PointGoal::next_goal() {
  for (;;) {  // 2.5 .. 3.5 away, inside the arena, clear of every hazard
    const double angle = uniform(rng_, 0, two_pi), distance = uniform(rng_, 2.5, 3.5);
    const Vec g{p_.x + distance * std::cos(angle), p_.y + distance * std::sin(angle)};
    if (std::abs(g.x) > arena || std::abs(g.y) > arena) continue;
    bool clear = true;
    for (const Vec h : hazards_) clear = clear && norm(sub(g, h)) > hazard_radius + goal_radius;
    if (clear) {
      goal_ = g;
      ++goals_reached_;
      return;
    }
  }
}

std::array<float, PointGoal::observation_dim> PointGoal::observation() const {
  std::array<float, observation_dim> o{};
  o[0] = static_cast<float>(v_.x);
  o[1] = static_cast<float>(v_.y);
  o[2] = static_cast<float>(goal_.x - p_.x);
  o[3] = static_cast<float>(goal_.y - p_.y);
  for (const Vec h : hazards_) {
    const Vec d = sub(h, p_);
    double a = std::atan2(d.y, d.x);
    if (a < 0) a += two_pi;
    const auto bin = std::min<std::int64_t>(static_cast<std::int64_t>(a / two_pi * lidar_bins), lidar_bins - 1);
    const float value = static_cast<float>(std::max(0.0, 1 - norm(d) / lidar_range));
    float& slot = o[static_cast<std::size_t>(4 + bin)];
    slot = std::max(slot, value);
  }
  return o;
}

Step PointGoal::step(std::span<const double> action) {
  if (done_) throw std::logic_error("PointGoal::step: the episode has ended");
  if (action.size() != static_cast<std::size_t>(action_dim))
    throw std::invalid_argument("PointGoal::step: 'action' must have 2 components");
  const double ax = std::clamp(action[0], -1.0, 1.0), ay = std::clamp(action[1], -1.0, 1.0);
  const double before = norm(sub(goal_, p_));
  v_ = {0.95 * v_.x + 2 * ax * dt, 0.95 * v_.y + 2 * ay * dt};
  const double speed = norm(v_);
  if (speed > max_speed) v_ = {v_.x * max_speed / speed, v_.y * max_speed / speed};
  p_ = {p_.x + v_.x * dt, p_.y + v_.y * dt};
  ++t_;
  Step s;
  const double after = norm(sub(goal_, p_));
  s.reward = before - after;
  for (const Vec h : hazards_)
    if (norm(sub(p_, h)) < hazard_radius) s.cost = 1;
  if (after < goal_radius) next_goal();
  s.timeout = t_ >= horizon;
  done_ = s.timeout;
  return s;
}

TaskPool generate_point_goal(std::int64_t episodes, std::uint64_t seed,
                             const PointGoalMixture& mixture) {
  if (episodes < 1) throw std::invalid_argument("generate_point_goal: 'episodes' must be >= 1");
  const auto share = [](double x) { return std::isfinite(x) && x >= 0 && x <= 1; };
  if (!share(mixture.reckless))
    throw std::invalid_argument("generate_point_goal: 'mixture.reckless' must lie in [0, 1]");
  if (!share(mixture.careful) || !(mixture.reckless + mixture.careful <= 1))
    throw std::invalid_argument(
        "generate_point_goal: 'mixture.careful' must lie in [0, 1 - mixture.reckless]");
  std::mt19937_64 rng(seed);
  return log_episodes<PointGoal>(episodes, rng,
                                 [&](std::mt19937_64& r) { return draw_controller(r, mixture); });
}

}  // namespace ltt::tasks
