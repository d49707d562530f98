#include "pipeline/task.hpp"

#include "pipeline/check.hpp"

#include <algorithm>
#include <stdexcept>

#include <data/text.hpp>
#include <tasks/car_run.hpp>
#include <tasks/point_goal.hpp>
#include <tasks/point_goal_rim.hpp>
#include <tasks/velocity.hpp>

#include <behavior/collection.hpp>
#include <behavior/committed_runs.hpp>

namespace ltt::pipeline {
namespace {

template <class Env>
Task continuous_task(std::string name, std::string summary,
                     std::function<tasks::TaskPool(std::int64_t, std::uint64_t)> generate) {
  Task t;
  t.name = std::move(name);
  t.summary = std::move(summary);
  t.budget = Env::budget;
  t.horizon = Env::horizon;
  t.observation_dim = Env::observation_dim;
  t.action_dim = Env::action_dim;
  t.cost_range = static_cast<double>(Env::horizon) * Env::max_step_cost;
  t.generate = std::move(generate);
  t.environment = [](std::uint64_t seed) -> std::unique_ptr<Environment> {
    return std::make_unique<tasks::EnvironmentAdapter<Env>>(seed);
  };
  return t;
}

// A MuJoCo velocity task (tasks/velocity.hpp) whose behavior data is collected from its
// committed PPO-Lagrangian run (behavior/committed_runs.hpp) as DSRL collected its velocity
// datasets (behavior/collection.hpp, with DSRL's rmin and cmax for the task). A task without a
// committed run is not registered.
Task velocity_task(const tasks::VelocityTaskSpec& spec, std::string summary) {
  Task t;
  t.name = std::string(spec.name);
  t.summary = std::move(summary);
  t.budget = spec.budget;
  t.horizon = spec.horizon;
  t.observation_dim = spec.observation_dim;
  t.action_dim = spec.action_dim;
  t.cost_range = static_cast<double>(spec.horizon) * spec.max_step_cost;
  const behavior::EnvironmentFactory make = [&spec](std::uint64_t seed)
      -> std::unique_ptr<tasks::Environment> {
    return std::make_unique<tasks::VelocityEnvironment>(spec, seed);
  };
  const behavior::EnvironmentSpec env{spec.observation_dim, spec.action_dim, spec.horizon};
  t.generate = [&spec, make, env](std::int64_t n, std::uint64_t seed) {
    return behavior::collect_dataset(make, env, behavior::committed_run(spec.name), n, seed,
                                     behavior::dsrl_collection(spec.name));
  };
  t.environment = make;
  return t;
}

// Thresholds drawn from [2B, 3B] only, the loose end of point-goal-rim's [0, 3B]: at or above
// the unconstrained controller's expected cost (about 2B) a checkpoint behaves unconstrained, so
// the pool is almost all unsafe (2, 3 and 1 safe of 1000 on seeds 1-3,
// tests/pipeline/task.test.cpp), fewer than 11.25% of trajectories are safe and a perfect
// score cannot make the smallest grid selection (the top 15%) at most 25% unsafe: the purity
// margin is negative for every scorer and the walk must refuse (up to its delta error).
constexpr tasks::PointGoalRimThresholds reckless_thresholds{2 * tasks::PointGoalRim::budget,
                                                            3 * tasks::PointGoalRim::budget};

const std::vector<Task>& registry() {
  static const std::vector<Task> tasks{
      continuous_task<tasks::PointGoal>(
          "point-goal",
          "point robot reaching goals in Safety-Gymnasium's PointGoal1 field (8 hazards, 1 cost a "
          "step inside one), behavior collected like DSRL's PointGoal1: a simulated "
          "TRPO-Lagrangian run with its threshold schedule through FSRL's trajectory buffer "
          "(budget 5)",
          [](std::int64_t n, std::uint64_t seed) { return tasks::generate_point_goal(n, seed); }),
      continuous_task<tasks::CarRun>(
          "car-run",
          "car on a rolling track, over-speed or off-lane steps cost; the average behavior "
          "is over budget (budget 5)",
          [](std::int64_t n, std::uint64_t seed) { return tasks::generate_car_run(n, seed); }),
      continuous_task<tasks::PointGoalRim>(
          "point-goal-reckless",
          "point-goal-rim with thresholds drawn from [2B, 3B] only: no certifiable selection "
          "(refusal variant)",
          [](std::int64_t n, std::uint64_t seed) {
            return tasks::generate_point_goal_rim(n, seed, reckless_thresholds);
          }),
      continuous_task<tasks::PointGoalRim>(
          "point-goal-rim",
          "the previous point-goal: 2-D point robot among 10 hazards in an 8 x 8 arena, graded "
          "penetration cost, behavior trained at cost thresholds uniform on [0, 3B] (budget 5); "
          "its learned score tracks the layout's hazards, not the behavior's caution",
          [](std::int64_t n, std::uint64_t seed) {
            return tasks::generate_point_goal_rim(n, seed);
          }),
  };
  static const std::vector<Task> with_velocity = [] {
    std::vector<Task> all = tasks;
    for (const tasks::VelocityTaskSpec& spec : tasks::velocity_tasks())
      if (!behavior::committed_run(spec.name).empty())
        all.push_back(velocity_task(
            spec,
            data::cat(spec.name, " after Safety-Gymnasium's v1 task on MuJoCo (cost 1 a step over the "
                            "velocity threshold), behavior collected like DSRL's: the committed "
                            "PPO-Lagrangian run's checkpoints through FSRL's trajectory buffer "
                            "(budget 20)")));
    return all;
  }();
  return with_velocity;
}

}  // namespace

std::span<const Task> builtin_tasks() { return registry(); }

std::string task_names() {
  std::string names;
  for (const Task& t : registry()) names += data::cat(t.name, ", ");
  return data::cat(names, "corridor");
}

const Task& task_named(std::string_view name) {
  for (const Task& t : registry())
    if (t.name == name) return t;
  detail::invalid("task_named", "task", data::cat("\"", name, "\""),
                  data::cat("is not a built-in task (", task_names(), ")"));
}

}  // namespace ltt::pipeline
