#pragma once
// One epoch's data: episodes of N environments run in lockstep by the Gaussian policy, with one
// batched forward of the mean network per step over the environments still running (FSRL's
// FastCollector over a vector of N environments, one episode each: DSRL's velocity runs collect
// 10 episodes per epoch on 10 environments, scripts/train_trpol_expert.py).
//
// Determinism. Environment k starts from seeds[k]; at every step the policy's normal draws are
// taken from `noise` environment after environment (in index order), component after component,
// before any environment steps; then the environments step, on `threads` threads when asked
// (contiguous blocks of the running environments, each stepping only its own), and their
// results are gathered in index order. Each environment is independent of the others, so the
// thread count cannot change a bit. The rows come out episode after episode, environment 0's
// first.

#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <span>
#include <vector>

#include <tasks/environment.hpp>

namespace ltt::behavior {

// A fresh episode of a task from its seed.
using EnvironmentFactory = std::function<std::unique_ptr<tasks::Environment>(std::uint64_t seed)>;

// The batched mean of the policy: means (rows x action_dim) at observations (rows x
// observation_dim), row after row.
using MeanFunction = std::function<void(std::span<const float> observations, std::int64_t rows,
                                        std::span<float> means)>;

struct EnvironmentSpec {
  std::int64_t observation_dim = 0, action_dim = 0;
  std::int64_t horizon = 0;  // an episode still running after this many steps is cut (a timeout)
};

struct Rollout {
  std::int64_t observation_dim = 0, action_dim = 0;
  std::vector<float> observations;        // rows x observation_dim: s_t, as the environment gave it
  std::vector<float> actions;             // rows x action_dim: the unclipped draws a_t
  std::vector<double> log_probabilities;  // log pi(a_t | s_t) at the time of the draw
  std::vector<double> rewards, costs;
  std::vector<std::uint8_t> terminals, timeouts;
  // episodes x observation_dim: the observation after each episode's last step (what a timeout
  // bootstraps from)
  std::vector<float> final_observations;
  std::vector<std::int64_t> offsets;  // episode e is rows [offsets[e], offsets[e + 1])

  std::int64_t rows() const { return static_cast<std::int64_t>(rewards.size()); }
  std::int64_t episodes() const { return static_cast<std::int64_t>(offsets.size()) - 1; }
};

// One episode per seed, run to its end: the environment's terminal, its timeout, or done()
// (read as a timeout), or the spec's horizon (a timeout). `mean` sees the observations as the
// environments give them. Throws std::invalid_argument naming the parameter (no seeds, threads
// < 1, log_std of another size than spec.action_dim, a spec width < 1); an environment's own
// exception passes through.
Rollout collect_episodes(const EnvironmentFactory& make, const EnvironmentSpec& spec,
                         std::span<const std::uint64_t> seeds, const MeanFunction& mean,
                         std::span<const double> log_std, std::mt19937_64& noise, int threads);

}  // namespace ltt::behavior
