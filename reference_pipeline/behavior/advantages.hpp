#pragma once
// Generalized advantage estimation (Schulman et al. 2016) as FSRL computes it for each critic
// (fsrl/policy/base_policy.py, compute_gae_returns and gae_return), on one epoch's rows, episode
// after episode:
//
//   delta_t = r_t + gamma V(s_{t+1}) [not terminal_t] - V(s_t),
//   A_t     = delta_t + gamma lambda [not end_t] A_{t+1},         end_t = terminal_t or timeout_t,
//
// and the critic's target (the return) R_t = A_t + V(s_t). A timeout is not a terminal: the
// episode was cut by the time limit, so the value of the state it reached still counts
// (value_mask in base_policy.py masks only `terminated`). The same function serves the reward
// (r = reward) and the cost (r = cost).

#include <cstdint>
#include <span>
#include <vector>

namespace ltt::behavior {

// rewards, values (V(s_t)), next_values (V(s_{t+1}), the state after row t's step, whatever its
// flags), terminal and timeout: one entry per row. The last row must end an episode (terminal
// or timeout). Throws std::invalid_argument naming the parameter (sizes, gamma or lambda outside
// [0, 1], a last row that ends nothing).
std::vector<double> generalized_advantages(std::span<const double> rewards,
                                           std::span<const double> values,
                                           std::span<const double> next_values,
                                           std::span<const std::uint8_t> terminal,
                                           std::span<const std::uint8_t> timeout, double gamma,
                                           double lambda);

}  // namespace ltt::behavior
