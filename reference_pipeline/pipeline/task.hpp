#pragma once
// The built-in tasks the pipeline runs on (docs/pipeline.md, "Tasks"): each names its behavior
// generator, its cost budget, and a fresh environment for evaluating a cloned policy.
//
//   point-goal            the point robot of tasks/point_goal.hpp (Safety-Gymnasium's PointGoal1
//                         field, DSRL PointGoal1's collection), budget 5
//   car-run               the car of tasks/car_run.hpp, budget 5
//   point-goal-reckless   point-goal-rim whose behavior thresholds are drawn from [2B, 3B] only:
//                         built to have no certifiable selection (negative purity margin at alpha =
//                         0.25), for the refusal row of the report
//   point-goal-rim        the previous point-goal (tasks/point_goal_rim.hpp), kept as the case
//                         where the preference score loses to the labels-only one
//
// The corridor is not here: its state is the time index alone, so a state-only value cannot
// rank its trajectories; it has its own study (corridor_study.hpp).
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <tasks/environment.hpp>
#include <tasks/episode_log.hpp>

namespace ltt::pipeline {

// One episode of a task, stepped by a policy (tasks/environment.hpp).
using Environment = tasks::Environment;

struct Task {
  std::string name;
  std::string summary;
  double budget = 0;         // an episode is unsafe when its cost exceeds this
  std::int64_t horizon = 0;  // steps per episode (time limit)
  std::int64_t observation_dim = 0;
  std::int64_t action_dim = 0;  // actions in [-1, 1]^action_dim
  // Episodic cost lies in [0, cost_range] for every policy (horizon x the largest cost of a step):
  // the range the Maurer-Pontil bound needs, fixed before any episode is seen.
  double cost_range = 0;
  // A seeded behavior pool of `episodes` trajectories.
  std::function<tasks::TaskPool(std::int64_t episodes, std::uint64_t seed)> generate;
  // A fresh episode (layout or start drawn from the seed).
  std::function<std::unique_ptr<Environment>(std::uint64_t seed)> environment;
};

// Every built-in continuous task, in the order above.
std::span<const Task> builtin_tasks();
// The task called `name`. Throws std::invalid_argument naming 'task' and listing the names.
const Task& task_named(std::string_view name);
// "point-goal, car-run, point-goal-reckless, point-goal-rim, corridor": what --task accepts.
std::string task_names();

}  // namespace ltt::pipeline
