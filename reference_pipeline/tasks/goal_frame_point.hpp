#pragma once
// The point robot of point-goal and point-goal-rim (docs/tasks.md): a holonomic point mass in
// the plane whose action is an acceleration read in the goal frame, the frame its observation
// is turned into. The point has no heading of its own; the goal direction serves as one.
//
//   e = (goal - p) / |goal - p|, n = e turned 90 degrees left;
//   a_world = a_e e + a_n n;  v <- 0.95 v + 2 a_world dt, |v| capped at max_speed;  p <- p + v dt.
#include <algorithm>
#include <cmath>
#include <span>
#include <stdexcept>
#include <string_view>

#include "check.hpp"

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

// One step of `task`'s point (`task` names it in messages, e.g. "PointGoal"): refuses a step
// after the end (std::logic_error) and an action that is not 2 components
// (std::invalid_argument naming 'action'), clips the action to [-1, 1]^2, moves the point, and
// returns the progress toward the goal, its distance before the step minus after.
inline double step_point(std::string_view task, bool done, std::span<const double> action,
                         PlaneVector& p, PlaneVector& v, PlaneVector goal, double dt,
                         double max_speed) {
  if (done)
    throw std::logic_error(data::cat("ltt::tasks::", task, "::step: the episode has ended"));
  if (action.size() != 2)
    invalid(data::cat(task, "::step"), "action",
            data::cat("must have 2 components; it has ", show(action.size())));
  const double a_e = std::clamp(action[0], -1.0, 1.0), a_n = std::clamp(action[1], -1.0, 1.0);
  const double before = norm(sub(goal, p));
  move_point(p, v, goal_frame(p, goal), a_e, a_n, dt, max_speed);
  return before - norm(sub(goal, p));
}

}  // namespace detail
}  // namespace ltt::tasks
