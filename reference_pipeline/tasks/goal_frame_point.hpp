#pragma once
// The point robot of point-goal and point-goal-rim (docs/tasks.md): a holonomic point mass in
// the plane whose action is an acceleration read in the goal frame, the frame its observation
// is turned into. The point has no heading of its own; the goal direction serves as one.
//
//   e = (goal - p) / |goal - p|, n = e turned 90 degrees left;
//   a_world = a_e e + a_n n;  v <- 0.95 v + 2 a_world dt, |v| capped at max_speed;  p <- p + v dt.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <span>
#include <stdexcept>
#include <string_view>

#include "check.hpp"
#include "episode_log.hpp"

namespace ltt::tasks {

struct PlaneVector {
  double x = 0, y = 0;
};

namespace detail {

inline double norm(PlaneVector a) { return std::hypot(a.x, a.y); }
inline PlaneVector sub(PlaneVector a, PlaneVector b) { return {a.x - b.x, a.y - b.y}; }

struct GoalFrame {
  PlaneVector e, n;  // toward the goal, and its left normal
};

// The goal is never closer than a goal radius at an observation (a reached goal is replaced in
// the same step); the floor only keeps the division finite.
inline GoalFrame goal_frame(PlaneVector p, PlaneVector goal) {
  const PlaneVector g = sub(goal, p);
  const double d = std::max(norm(g), 1e-12);
  return {{g.x / d, g.y / d}, {-g.y / d, g.x / d}};
}

// One step of the point mass under the (already clipped) goal-frame acceleration (a_e, a_n).
inline void move_point(PlaneVector& p, PlaneVector& v, const GoalFrame& f, double a_e, double a_n,
                       double dt, double max_speed) {
  const double ax = a_e * f.e.x + a_n * f.n.x, ay = a_e * f.e.y + a_n * f.n.y;
  v = {0.95 * v.x + 2 * ax * dt, 0.95 * v.y + 2 * ay * dt};
  const double speed = norm(v);
  if (speed > max_speed) v = {v.x * max_speed / speed, v.y * max_speed / speed};
  p = {p.x + v.x * dt, p.y + v.y * dt};
}

}  // namespace detail

// What both point tasks keep and show: the point, its goal, HazardCount hazards, the steps
// taken, the goals reached, whether the episode has ended, and the generator of the layout and
// of the goals after the first. A task places the layout in its constructor.
template <std::int64_t HazardCount>
class GoalFramePoint {
 public:
  static constexpr std::int64_t hazard_count = HazardCount;
  using Vec = PlaneVector;

  Vec position() const { return p_; }
  Vec velocity() const { return v_; }
  Vec goal() const { return goal_; }
  std::span<const Vec> hazards() const { return hazards_; }
  std::int64_t steps() const { return t_; }
  std::int64_t goals_reached() const { return goals_reached_; }
  bool done() const { return done_; }

  // The world now, for the pool's world geometry (EpisodeLog::add_world).
  void log_world(EpisodeLog& log, const WorldLayout& layout) const {
    std::array<double, 2 * HazardCount> xy{};
    for (std::size_t i = 0; i < hazards_.size(); ++i) {
      xy[2 * i] = hazards_[i].x;
      xy[2 * i + 1] = hazards_[i].y;
    }
    log.add_world({p_.x, p_.y}, {goal_.x, goal_.y}, xy, layout);
  }

 protected:
  explicit GoalFramePoint(std::uint64_t layout_seed) : rng_(layout_seed) {}

  // The start of a step of `task` (named in messages, e.g. "PointGoal"): refuses a step after
  // the end (std::logic_error) and an action that is not 2 components (std::invalid_argument
  // naming 'action'), clips the action to [-1, 1]^2, moves the point and counts the step.
  // Returns the progress toward the goal, its distance before the step minus after.
  double step_point(std::string_view task, std::span<const double> action, double dt,
                    double max_speed) {
    if (done_)
      throw std::logic_error(data::cat("ltt::tasks::", task, "::step: the episode has ended"));
    if (action.size() != 2)
      detail::invalid(data::cat(task, "::step"), "action",
                      data::cat("must have 2 components; it has ", detail::show(action.size())));
    const double a_e = std::clamp(action[0], -1.0, 1.0), a_n = std::clamp(action[1], -1.0, 1.0);
    const double before = detail::norm(detail::sub(goal_, p_));
    detail::move_point(p_, v_, detail::goal_frame(p_, goal_), a_e, a_n, dt, max_speed);
    ++t_;
    return before - detail::norm(detail::sub(goal_, p_));
  }

  Vec p_, v_, goal_;
  std::array<Vec, HazardCount> hazards_;
  std::int64_t t_ = 0, goals_reached_ = 0;
  bool done_ = false;
  std::mt19937_64 rng_;
};
}  // namespace ltt::tasks
