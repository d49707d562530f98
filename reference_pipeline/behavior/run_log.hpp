#pragma once
// run.csv, the log of a training run (ltt behavior train): a header, then one row per epoch of
// EpochRecord's fields in this order, numbers in their shortest round-trip form. Every column
// but the last (the epoch's wall-clock seconds) is fixed by the run's settings and seed.
//
//   epoch, environment_steps, cost_limit, multiplier, mean_return, mean_cost, mean_length,
//   episodes, approx_kl, passes, mean_std, actor_loss, reward_critic_loss, cost_critic_loss,
//   seconds

#include <string>

#include "behavior/ppo_lagrangian.hpp"

namespace ltt::behavior {

std::string run_csv_header();                        // ends with a newline
std::string run_csv_row(const EpochRecord& record);  // ends with a newline

}  // namespace ltt::behavior
