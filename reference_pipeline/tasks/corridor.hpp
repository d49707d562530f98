#pragma once
// The corridor CMDP of the paper's Proposition "corridor" (appendix on the operator classes).
//
// A deterministic T-step corridor whose state is the time index t = 0 .. T-1, so successors do
// not depend on the action. At each step two actions: safe (cost 0) and risky (cost 1); the
// budget is 0. Reward is ours, the paper leaves it open: the risky action pays 1, the safe 0.
// Behavior data is a mixture: with probability q (expert mass) a trajectory is all-safe,
// otherwise each step is safe with probability p_s independently. The per-step marginal safe
// frequency is p̄ = q + (1 - q) p_s.
//
// DSRL layout of a pool: observation (1 dim) = t, action (1 dim) = 0 safe / 1 risky,
// reward = action, cost = action, timeouts set on the last row of every episode (t = T - 1).

#include <cstdint>
#include <span>
#include <vector>

#include <data/dsrl.hpp>

#include "episode_log.hpp"

namespace ltt::tasks {

struct CorridorSpec {
  std::int64_t horizon = 100;     // T, 1 .. 300
  double expert_mass = 0.2;       // q in [0, 1)
  double safe_probability = 0.7;  // p_s in (0, 1)
};

inline constexpr double corridor_budget = 0;

// p̄ = q + (1 - q) p_s.
double corridor_marginal_safe_probability(const CorridorSpec& spec);

// Proposition "corridor": weighted cloning with safe-to-risky weight ratio W at every state
// gives the product policy with p'_s = p̄ W / (p̄ W + 1 - p̄) ...
double corridor_cloned_safe_probability(double marginal_safe_probability, double weight_ratio);
// ... whose all-safe probability is p'_s^T (W = 1: unweighted cloning, case (i)).
double corridor_cloned_all_safe_probability(const CorridorSpec& spec, double weight_ratio);

// Case (iii): selecting the zero-cost trajectories of N and cloning them unweighted gives the
// exactly safe policy whenever the selection is nonempty. A trajectory is zero-cost with
// probability P0 = q + (1 - q) p_s^T, so this returns 1 - (1 - P0)^N, the probability of a
// nonempty selection; the paper states the lower bound 1 - (1 - q)^N, returned by the second.
double corridor_selection_safe_probability(const CorridorSpec& spec, std::int64_t trajectories);
double corridor_selection_safe_lower_bound(const CorridorSpec& spec, std::int64_t trajectories);

// N behavior trajectories of the mixture, seeded.
TaskPool generate_corridor(const CorridorSpec& spec, std::int64_t trajectories, std::uint64_t seed);

// A tabular policy: probability of the safe action at each time index.
struct CorridorPolicy {
  std::vector<double> safe_probability;
};

// Per-row weights for cloning a corridor pool:
//   ratio weights      W on safe rows, 1 on risky ones (a per-transition weight clipped at W,
//                      e.g. exp(A / beta) with the advantage of the per-step cost)
//   selection weights  1 on the rows of zero-cost episodes (DSRL episode rule), 0 elsewhere
std::vector<double> corridor_ratio_weights(const data::DsrlDataset& pool, double weight_ratio);
std::vector<double> corridor_selection_weights(const data::DsrlDataset& pool);

// Weighted cloning, tabular: at each t, pi(safe | t) = sum of safe-row weights over the sum of
// all row weights at t (the maximizer of the weighted log-likelihood, proof of the
// proposition). A time index with zero total weight (an empty selection) gets 1/2.
CorridorPolicy clone_corridor(const data::DsrlDataset& pool, std::span<const double> row_weights);

// The exact all-safe probability of a policy, prod_t pi(safe | t).
double corridor_all_safe_probability(const CorridorPolicy& policy);

// Rolls the policy out `episodes` times (seeded); returns how many episodes were all-safe.
std::int64_t simulate_corridor_all_safe(const CorridorPolicy& policy, std::int64_t episodes,
                                        std::uint64_t seed);

}  // namespace ltt::tasks
