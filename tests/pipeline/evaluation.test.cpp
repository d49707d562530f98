// Tests for reference_pipeline/pipeline/evaluation.hpp: batched lockstep rollouts give what
// stepping one episode at a time gives, and the policy certificates are the bounds' values.

#include <pipeline/evaluation.hpp>

#include <doctest/doctest.h>

#include <learning/behavior_cloning.hpp>
#include <learning/mlp.hpp>
#include <ltt/bounds.hpp>

#include "../support/throws.hpp"

#include <vector>

namespace pl = ltt::pipeline;
namespace learning = ltt::learning;

namespace {

learning::MlpWeights random_policy(const pl::Task& t, std::uint64_t seed) {
  learning::MlpShape shape{{t.observation_dim, 8, t.action_dim}, learning::OutputActivation::tanh};
  return learning::initial_weights(shape, seed);
}

}  // namespace

// A linear policy whose every action reads one observation entry (all other weights zero), so
// a row's output is the same bits in any batch: x * 0 and + 0 are exact whatever the order of
// the sums. point-goal and its variants: accelerate toward the goal (action 0 of the goal frame)
// in proportion to observation 2 (point-goal: the goal's pseudo-lidar reading in bin 0;
// point-goal-rim: the goal distance); car-run: steer against the lateral offset
// (observation 1) with a steady throttle. Both move, so episodes differ by their layouts.
learning::MlpWeights sparse_policy(const pl::Task& t) {
  learning::MlpWeights w;
  w.shape = learning::MlpShape{{t.observation_dim, t.action_dim}, learning::OutputActivation::tanh};
  w.parameters.assign(static_cast<std::size_t>(w.shape.parameter_count()), 0.0f);
  const auto W = [&](std::int64_t out, std::int64_t in) -> float& {
    return w.parameters[static_cast<std::size_t>(out * t.observation_dim + in)];
  };
  const auto bias = [&](std::int64_t out) -> float& {
    return w.parameters[static_cast<std::size_t>(t.action_dim * t.observation_dim + out)];
  };
  if (t.name.starts_with("point-goal")) {
    W(0, 2) = 1.5f;
  } else {  // car-run: observation 1 is y / 0.1
    W(0, 1) = -0.2f;
    bias(1) = 0.4f;
  }
  return w;
}

TEST_CASE("evaluate_policy: lockstep batches equal one episode at a time") {
  for (const pl::Task& t : pl::builtin_tasks()) {
    CAPTURE(t.name);
    const learning::MlpWeights policy = sparse_policy(t);
    const std::int64_t episodes = 5;
    const pl::Evaluation e = pl::evaluate_policy(t, policy, episodes, 42, 0.1);
    REQUIRE(e.costs.size() == 5);
    CHECK(e.mean_return != 0);  // the policy moves
    for (std::int64_t k = 0; k < episodes; ++k) {
      auto env = t.environment(learning::stream_seed(42, static_cast<std::uint64_t>(k)));
      std::vector<float> obs(static_cast<std::size_t>(t.observation_dim));
      std::vector<double> action(static_cast<std::size_t>(t.action_dim));
      double ret = 0, cost = 0;
      while (!env->done()) {
        env->observation(obs);
        const std::vector<float> a = learning::policy_actions(policy, obs);
        for (std::size_t j = 0; j < action.size(); ++j) action[j] = a[j];
        const auto s = env->step(action);
        ret += s.reward;
        cost += s.cost;
      }
      CHECK(e.returns[static_cast<std::size_t>(k)] == ret);
      CHECK(e.costs[static_cast<std::size_t>(k)] == cost);
    }
  }
}

TEST_CASE("summarize_episodes: the certificates are Clopper-Pearson and Maurer-Pontil") {
  const std::vector<double> returns{1, 2, 3, 4}, costs{0, 7, 2, 9};
  const pl::Evaluation e = pl::summarize_episodes(returns, costs, 5.0, 250.0, 0.1);
  CHECK(e.mean_return == 2.5);
  CHECK(e.mean_cost == 4.5);
  CHECK(e.over_budget == 2);
  CHECK(e.over_budget_upper == ltt::clopper_pearson_upper(2, 4, 0.1));
  CHECK(e.cost_upper == ltt::maurer_pontil_upper(costs, 250.0, 0.1));
  CHECK(e.cost_upper >= e.mean_cost);
}

TEST_CASE("evaluate_policy: bad input names the parameter") {
  const pl::Task& t = pl::task_named("car-run");
  const learning::MlpWeights policy = random_policy(t, 1);
  ltt_test::check_throws_naming([&] { (void)pl::evaluate_policy(t, policy, 1, 0, 0.1); },
                                "episodes");
  ltt_test::check_throws_naming([&] { (void)pl::evaluate_policy(t, policy, 4, 0, 1.0); }, "delta");
  const learning::MlpWeights other = random_policy(pl::task_named("point-goal"), 1);
  ltt_test::check_throws_naming([&] { (void)pl::evaluate_policy(t, other, 4, 0, 0.1); }, "policy");
}
