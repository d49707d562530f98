#include "pipeline/task.hpp"

#include <algorithm>
#include <stdexcept>

#include <tasks/car_run.hpp>
#include <tasks/point_goal.hpp>

namespace ltt::pipeline {
namespace {

// Adapts a task class with observation(), step() and done() (tasks/*.hpp) to Environment.
template <class Env>
class Adapter final : public Environment {
 public:
  explicit Adapter(std::uint64_t seed) : env_(seed) {}
  void observation(std::span<float> out) const override {
    const auto o = env_.observation();
    if (out.size() != o.size())
      throw std::invalid_argument("Environment::observation: 'out' must hold observation_dim floats");
    std::copy(o.begin(), o.end(), out.begin());
  }
  tasks::Step step(std::span<const double> action) override { return env_.step(action); }
  bool done() const override { return env_.done(); }

 private:
  Env env_;
};

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
  t.cost_range = static_cast<double>(Env::horizon);
  t.generate = std::move(generate);
  t.environment = [](std::uint64_t seed) -> std::unique_ptr<Environment> {
    return std::make_unique<Adapter<Env>>(seed);
  };
  return t;
}

// Caution drawn from [0, 0.3] only, the reckless end of point-goal's [0, 1]: the pool is
// about 99% unsafe (3 to 6 safe of 1000 on seeds 1-3, tests/pipeline/task.test.cpp), so fewer
// than 11.25% of trajectories are safe and a perfect score cannot make the smallest grid
// selection (the top 15%) at most 25% unsafe: the purity margin is negative for every scorer
// and the walk must refuse (up to its delta error).
constexpr tasks::PointGoalCaution reckless_caution{0.0, 0.3};

const std::vector<Task>& registry() {
  static const std::vector<Task> tasks{
      continuous_task<tasks::PointGoal>(
          "point-goal",
          "2-D point robot reaching goals among circular hazards, graded penetration cost, "
          "behavior of continuously varying caution (budget 5)",
          [](std::int64_t n, std::uint64_t seed) { return tasks::generate_point_goal(n, seed); }),
      continuous_task<tasks::CarRun>(
          "car-run",
          "car on a rolling track, over-speed or off-lane steps cost; the average behavior "
          "is over budget (budget 5)",
          [](std::int64_t n, std::uint64_t seed) { return tasks::generate_car_run(n, seed); }),
      continuous_task<tasks::PointGoal>(
          "point-goal-reckless",
          "point-goal with caution drawn from its reckless end: no certifiable selection "
          "(refusal variant)",
          [](std::int64_t n, std::uint64_t seed) {
            return tasks::generate_point_goal(n, seed, reckless_caution);
          }),
  };
  return tasks;
}

}  // namespace

std::span<const Task> builtin_tasks() { return registry(); }

std::string task_names() {
  std::string names;
  for (const Task& t : registry()) names += t.name + ", ";
  return names + "corridor";
}

const Task& task_named(std::string_view name) {
  for (const Task& t : registry())
    if (t.name == name) return t;
  throw std::invalid_argument("task_named: 'task' = \"" + std::string(name) +
                              "\" is not a built-in task (" + task_names() + ")");
}

}  // namespace ltt::pipeline
