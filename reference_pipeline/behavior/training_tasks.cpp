// The tasks a behavior policy trains on (training_tasks.hpp).

#include "behavior/training_tasks.hpp"

#include <array>

#include <tasks/car_run.hpp>
#include <tasks/environment.hpp>
#include <tasks/velocity.hpp>

#include "behavior/check.hpp"

namespace ltt::behavior {

namespace {

template <class Task>
EnvironmentFactory adapter() {
  return [](std::uint64_t seed) -> std::unique_ptr<tasks::Environment> {
    return std::make_unique<tasks::EnvironmentAdapter<Task>>(seed);
  };
}

// A velocity task's environment: a fresh VelocityEnvironment of its spec from the seed.
EnvironmentFactory velocity(const tasks::VelocityTaskSpec& spec) {
  return [&spec](std::uint64_t seed) -> std::unique_ptr<tasks::Environment> {
    return std::make_unique<tasks::VelocityEnvironment>(spec, seed);
  };
}

// DSRL's velocity configs (scripts/train_trpol_expert.py: MujocoHalfCheetahCfg, MujocoHopperCfg,
// MujocoSwimmerCfg): the limit cost_start until epoch_start, linear to cost_end at epoch_end, of
// 3000 epochs of 10 episodes (episode_per_collect), gamma 0.995, hidden_sizes (128, 128).
// Observations normalized: the joints' velocities are not of order 1, and on half-cheetah the
// normalized run learns faster (docs/behavior.md, "half-cheetah-velocity").
TrainingTask velocity_entry(std::string_view name, double start, double end, double epoch_start,
                            double epoch_end, std::string_view source) {
  const tasks::VelocityTaskSpec& spec = tasks::velocity_task(name);
  return TrainingTask{spec.name,
                      {spec.observation_dim, spec.action_dim, spec.horizon},
                      spec.budget,
                      velocity(spec),
                      {start, end, epoch_start / 3000.0, epoch_end / 3000.0},
                      3000,
                      10,
                      0.995,
                      {128, 128},
                      true,
                      source};
}

const std::array<TrainingTask, 4>& table() {
  // car-run is a velocity task in miniature (a speed limit, cost 1 per step over it): its
  // schedule keeps the shape of DSRL's velocity runs (train_trpol_expert.py: a limit of 25% of
  // the horizon's steps until 800/3000 of the run, down to 1% at 2800/3000), at its horizon of
  // 200 steps: 50 -> 2. DSRL's default discount (0.99); 300 epochs of 10 episodes (2,000 steps)
  // reach the policies' plateau on it; 64 x 64 networks learn it at least as well as DSRL's
  // 128 x 128 in a third of the time (docs/behavior.md, "car-run"). Its observations are
  // scaled to order 1 by the task itself: no normalization.
  static const std::array<TrainingTask, 4> tasks{
      TrainingTask{
          "car-run",
          {tasks::CarRun::observation_dim, tasks::CarRun::action_dim, tasks::CarRun::horizon},
          tasks::CarRun::budget,
          adapter<tasks::CarRun>(),
          {50.0, 2.0, 800.0 / 3000.0, 2800.0 / 3000.0},
          300,
          10,
          0.99,
          {64, 64},
          false,
          "DSRL's velocity schedule scaled to the 200-step horizon (docs/behavior.md)"},
      velocity_entry("half-cheetah-velocity", 250, 10, 800, 2800,
                     "DSRL scripts/train_trpol_expert.py, MujocoHalfCheetahCfg"),
      velocity_entry("hopper-velocity", 250, 10, 800, 2500,
                     "DSRL scripts/train_trpol_expert.py, MujocoHopperCfg"),
      velocity_entry("swimmer-velocity", 200, 10, 800, 2500,
                     "DSRL scripts/train_trpol_expert.py, MujocoSwimmerCfg")};
  return tasks;
}

}  // namespace

std::span<const TrainingTask> training_tasks() { return table(); }

std::string training_task_names() {
  std::string names;
  for (const TrainingTask& t : table()) names += data::cat(names.empty() ? "" : ", ", t.name);
  return names;
}

const TrainingTask& training_task(std::string_view name) {
  for (const TrainingTask& t : table())
    if (t.name == name) return t;
  detail::invalid("training_task", "task", data::in_quotes(name),
                  data::cat("is not a task the trainer knows (", training_task_names(), ")"));
}

PpoLagrangianOptions task_options(const TrainingTask& task) {
  PpoLagrangianOptions o;
  o.cost_limit = task.cost_limit;
  o.epochs = task.epochs;
  o.episodes_per_epoch = task.episodes_per_epoch;
  o.gamma = task.gamma;
  o.hidden = task.hidden;
  o.observation_normalization = task.observation_normalization;
  return o;
}

}  // namespace ltt::behavior
