#include "point_goal.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string_view>

#include "check.hpp"

namespace ltt::tasks {
namespace {

using Vec = PointGoal::Vec;
constexpr double pi = std::numbers::pi, two_pi = 2 * pi;
constexpr double bin_width = two_pi / PointGoal::lidar_bins;

using detail::goal_frame;
using detail::norm;
using detail::sub;

using Frame = detail::GoalFrame;

// Safety-Gymnasium's pseudo-lidar of `objects` seen from p in frame f, into 16 bins.
void pseudo_lidar(Vec p, const Frame& f, std::span<const Vec> objects, std::span<float> bins) {
  for (const Vec q : objects) {
    const Vec d = sub(q, p);
    double bearing = std::atan2(d.x * f.n.x + d.y * f.n.y, d.x * f.e.x + d.y * f.e.y);
    if (bearing < 0) bearing += two_pi;
    const auto k = std::min<std::int64_t>(static_cast<std::int64_t>(bearing / bin_width),
                                          PointGoal::lidar_bins - 1);
    const double reading = std::max(0.0, PointGoal::lidar_range - norm(d)) / PointGoal::lidar_range;
    const double alias = std::clamp(bearing / bin_width - static_cast<double>(k), 0.0, 1.0);
    const auto keep = [&](std::int64_t bin, double value) {
      float& slot =
          bins[static_cast<std::size_t>((bin + PointGoal::lidar_bins) % PointGoal::lidar_bins)];
      slot = std::max(slot, static_cast<float>(value));
    };
    keep(k, reading);
    keep(k + 1, alias * reading);
    keep(k - 1, (1 - alias) * reading);
  }
}

constexpr std::size_t goal_bins = 2, hazard_bins = 2 + PointGoal::lidar_bins;

}  // namespace

PointGoal::PointGoal(std::uint64_t layout_seed) : GoalFramePoint(layout_seed) {
  const auto clear = [&](Vec v, double keepout, std::span<const Vec> others,
                         double others_keepout) {
    for (const Vec o : others)
      if (norm(sub(v, o)) < keepout + others_keepout) return false;
    return true;
  };
  for (std::size_t i = 0; i < hazards_.size(); ++i) {
    for (;;) {
      const Vec h{uniform(rng_, -extent, extent), uniform(rng_, -extent, extent)};
      if (clear(h, hazard_keepout, std::span(hazards_.data(), i), hazard_keepout)) {
        hazards_[i] = h;
        break;
      }
    }
  }
  for (;;) {
    const Vec r{uniform(rng_, -extent, extent), uniform(rng_, -extent, extent)};
    if (clear(r, robot_keepout, hazards_, hazard_keepout)) {
      p_ = r;
      break;
    }
  }
  place_goal();
}

void PointGoal::place_goal() {
  for (;;) {
    const Vec g{uniform(rng_, -extent, extent), uniform(rng_, -extent, extent)};
    bool clear = norm(sub(g, p_)) >= goal_keepout + robot_keepout;
    for (const Vec h : hazards_) clear = clear && norm(sub(g, h)) >= goal_keepout + hazard_keepout;
    if (clear) {
      goal_ = g;
      return;
    }
  }
}

std::array<float, PointGoal::observation_dim> PointGoal::observation() const {
  const Frame f = goal_frame(p_, goal_);
  std::array<float, observation_dim> o{};
  o[0] = static_cast<float>(v_.x * f.e.x + v_.y * f.e.y);
  o[1] = static_cast<float>(v_.x * f.n.x + v_.y * f.n.y);
  pseudo_lidar(p_, f, std::span(&goal_, 1), std::span(o).subspan(goal_bins, lidar_bins));
  pseudo_lidar(p_, f, hazards_, std::span(o).subspan(hazard_bins, lidar_bins));
  return o;
}

Step PointGoal::step(std::span<const double> action) {
  Step s;
  s.reward = step_point("PointGoal", action, dt, max_speed);
  const double after = norm(sub(goal_, p_));
  for (const Vec h : hazards_) s.cost += norm(sub(p_, h)) <= hazard_radius ? 1.0 : 0.0;
  if (after <= goal_radius) {
    s.reward += 1;
    ++goals_reached_;
    place_goal();
  }
  s.timeout = t_ >= horizon;
  done_ = s.timeout;
  return s;
}

std::array<double, 2> point_goal_policy_mean(std::span<const float> o, const Checkpoint& checkpoint,
                                             const PointGoalBehavior& b) {
  if (o.size() != static_cast<std::size_t>(PointGoal::observation_dim))
    detail::invalid("point_goal_policy_mean", "observation",
                    data::cat("must hold ", detail::show(PointGoal::observation_dim),
                              " values; it holds ", detail::show(o.size())));
  const double c = checkpoint.caution;
  // The goal's distance from its strongest bin; out of lidar range it reads as the range.
  double goal_reading = 0;
  for (std::int64_t k = 0; k < PointGoal::lidar_bins; ++k)
    goal_reading = std::max(goal_reading, static_cast<double>(o[goal_bins + k]));
  const double goal_distance = PointGoal::lidar_range * (1 - goal_reading);
  // Each hazard bin read as a disc centred at its reading's distance, at the bin's middle.
  const auto rim_distance = [&](std::int64_t k) {
    return (1 - static_cast<double>(o[hazard_bins + static_cast<std::size_t>(k)])) *
               PointGoal::lidar_range -
           PointGoal::hazard_radius;
  };
  double nearest = PointGoal::lidar_range;
  for (std::int64_t k = 0; k < PointGoal::lidar_bins; ++k)
    if (o[hazard_bins + static_cast<std::size_t>(k)] > 0)
      nearest = std::min(nearest, rim_distance(k));
  double speed = std::max(b.speed_floor, 1 - b.speed_cut * c);
  constexpr double near = 0.6;  // where a cautious checkpoint starts slowing for a hazard
  if (nearest < near) speed *= 1 - b.near_slowdown * c * (near - std::max(0.0, nearest)) / near;
  double want_e = std::min(speed, 1.5 * goal_distance), want_n = 0;
  const double margin = b.margin_low + (b.margin_high - b.margin_low) * c;
  for (std::int64_t k = 0; k < PointGoal::lidar_bins; ++k) {
    if (o[hazard_bins + static_cast<std::size_t>(k)] <= 0) continue;
    const double edge = rim_distance(k);
    if (edge > margin) continue;
    double bearing = (static_cast<double>(k) + 0.5) * bin_width;
    if (bearing > pi) bearing -= two_pi;
    // From 0 at the margin to its full strength 0.3 inside it.
    const double strength = b.push * c * std::min(1.0, (margin - edge) / 0.3);
    const double side = bearing >= 0 ? 1.0 : -1.0;
    // Away from the hazard, plus the tangent that turns back toward the goal.
    want_e += strength * (-std::cos(bearing) + side * std::sin(bearing));
    want_n += strength * (-std::sin(bearing) - side * std::cos(bearing));
  }
  const double q = checkpoint.competence;
  return {q * 3.0 * (want_e - o[0]), q * 3.0 * (want_n - o[1])};
}

std::array<double, 2> point_goal_action(const PointGoal& env, const Checkpoint& checkpoint,
                                        const PointGoalBehavior& behavior, std::mt19937_64& rng) {
  const auto o = env.observation();
  std::array<double, 2> a = point_goal_policy_mean(o, checkpoint, behavior);
  for (double& x : a) x = std::clamp(x + checkpoint.noise * standard_normal(rng), -1.0, 1.0);
  return a;
}

EpisodeMetrics run_point_goal_episode(std::uint64_t seed, const Checkpoint& checkpoint,
                                      const PointGoalBehavior& behavior, EpisodeLog* log) {
  std::mt19937_64 rng(seed);
  PointGoal env(rng());
  EpisodeMetrics m;
  while (!env.done()) {
    const auto o = env.observation();
    if (log) env.log_world(*log, PointGoal::world_layout);
    const std::array<double, 2> a = point_goal_action(env, checkpoint, behavior, rng);
    const Step s = env.step(a);
    // The sums a reader of the stored float32 values gets back.
    m.episodic_return += static_cast<float>(s.reward);
    m.episodic_cost += static_cast<float>(s.cost);
    if (log) {
      const auto o1 = env.observation();
      const std::array<float, 2> af{static_cast<float>(a[0]), static_cast<float>(a[1])};
      log->add(o, af, s.reward, s.cost, o1, s.terminal, s.timeout);
    }
  }
  return m;
}

TrainingRun point_goal_training_run(std::int64_t episodes, std::uint64_t seed,
                                    const PointGoalData& data) {
  return simulate_training_run(episodes, seed, PointGoal::budget, data.run,
                               [&](std::uint64_t s, const Checkpoint& c, EpisodeLog* log) {
                                 return run_point_goal_episode(s, c, data.behavior, log);
                               });
}

TaskPool generate_point_goal(std::int64_t episodes, std::uint64_t seed, const PointGoalData& data) {
  if (episodes < 1)
    detail::invalid("generate_point_goal", "episodes", detail::show(episodes), "must be >= 1");
  const TrainingRun run = point_goal_training_run(episodes, seed, data);
  // The runner outlives this call (the pool's checkpoints run fresh episodes with it): it owns
  // a copy of the behavior.
  return dataset_of(run, PointGoal::observation_dim, PointGoal::action_dim,
                    [behavior = data.behavior](std::uint64_t s, const Checkpoint& c,
                                               EpisodeLog* log) {
                      return run_point_goal_episode(s, c, behavior, log);
                    });
}

}  // namespace ltt::tasks
