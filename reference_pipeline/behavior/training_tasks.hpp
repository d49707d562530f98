#pragma once
// The tasks a behavior policy can be trained on (`ltt behavior train --task NAME`), with what
// the trainer needs of each: its environment from a seed, its widths and horizon, its cost
// budget, and the run's defaults after DSRL's configuration for the task (docs/behavior.md):
// the cost limit's schedule in fractions of the run, the number of epochs, the episodes per
// epoch, the discount, the networks' hidden widths and whether their inputs are normalized.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <tasks/training_run.hpp>

#include "behavior/ppo_lagrangian.hpp"
#include "behavior/rollout.hpp"

namespace ltt::behavior {

struct TrainingTask {
  std::string_view name;
  EnvironmentSpec spec;
  double budget = 0;  // the task's cost budget (docs/tasks.md)
  EnvironmentFactory make;
  tasks::ThresholdSchedule cost_limit;  // raw episodic cost over fractions of the run
  std::int64_t epochs = 0;
  std::int64_t episodes_per_epoch = 0;
  double gamma = 0.99;
  std::vector<std::int64_t> hidden;  // of the actor and both critics
  bool observation_normalization = false;
  std::string_view defaults_from;  // where the defaults come from, for run.json
};

// Every task, in the order `ltt behavior train --help` lists them.
std::span<const TrainingTask> training_tasks();

// The task named `name`; throws std::invalid_argument naming 'task' and listing the known ones.
const TrainingTask& training_task(std::string_view name);

// "car-run, ..." for messages and help texts.
std::string training_task_names();

// DSRL's PPO-Lagrangian configuration (PpoLagrangianOptions' defaults) with the task's
// schedule, epochs, episodes per epoch, discount, hidden widths and observation normalization.
PpoLagrangianOptions task_options(const TrainingTask& task);

}  // namespace ltt::behavior
