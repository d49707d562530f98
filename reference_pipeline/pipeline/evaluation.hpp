#pragma once
// Evaluation of a cloned policy (paper, appendix "Hyperparameters": 100 episodes, deterministic
// policy mean) and the two policy certificates the report adds to it (docs/pipeline.md):
//
//   Pr[episodic cost > budget] <= clopper_pearson_upper(episodes over budget, episodes, delta)
//   E[episodic cost]           <= maurer_pontil_upper(costs, cost_range, delta)
//
// both one-sided at confidence 1 - delta over the evaluation episodes, which are independent
// draws of the environment's start given the seed. The range of the Maurer-Pontil bound is the
// task's a-priori cost range (horizon x the largest per-step cost), never the observed maximum.
//
// Episode e starts from the seed learning::stream_seed(seed, e), so every policy evaluated with
// the same seed meets the same layouts (common random numbers across methods). The episodes run
// in lockstep and the policy is applied to all live observations as one batch.
#include <cstdint>
#include <vector>

#include <learning/backend.hpp>
#include <learning/mlp.hpp>

#include "pipeline/task.hpp"

namespace ltt::pipeline {

struct Evaluation {
  std::vector<double> returns;  // episodic return per episode
  std::vector<double> costs;    // episodic cost per episode
  double mean_return = 0;
  double mean_cost = 0;
  std::int64_t over_budget = 0;  // episodes with cost > budget
  double delta = 0.1;
  double over_budget_upper = 1;  // Clopper-Pearson upper bound on Pr[cost > budget]
  double cost_upper = 0;         // Maurer-Pontil upper bound on E[cost]
};

// Rolls `policy` (observation -> action, tanh output in [-1, 1]) out for `episodes` episodes.
// Throws std::invalid_argument naming 'episodes' (< 2: the Maurer-Pontil bound needs two),
// 'delta' (outside (0, 1)) or 'policy' (input or output width not the task's).
Evaluation evaluate_policy(const Task& task, const learning::MlpWeights& policy,
                           std::int64_t episodes, std::uint64_t seed, double delta,
                           const learning::Backend& backend = learning::eigen_backend());

// The certificates of Evaluation from per-episode costs (what evaluate_policy uses).
Evaluation summarize_episodes(std::vector<double> returns, std::vector<double> costs, double budget,
                              double cost_range, double delta);

}  // namespace ltt::pipeline
