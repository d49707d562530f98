// One epoch's PPO-Lagrangian update (ppo_update.hpp).

#include "behavior/ppo_update.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string_view>

#include <curation/detail/random.hpp>

#include "behavior/block_threads.hpp"
#include "behavior/check.hpp"
#include "behavior/surrogate.hpp"

namespace ltt::behavior {

namespace {

constexpr std::string_view update_function = "ppo_update";

void check(const ActorCritic& n, const UpdateBatch& b, const UpdateSettings& s) {
  constexpr std::string_view fn = update_function;
  const auto positive = [&](std::string_view name, double x) {
    if (!(std::isfinite(x) && x > 0.0))
      detail::invalid(fn, name, detail::show(x), "must be finite and > 0");
  };
  const auto non_negative = [&](std::string_view name, double x) {
    if (!(std::isfinite(x) && x >= 0.0))
      detail::invalid(fn, name, detail::show(x), "must be finite and >= 0");
  };
  if (s.batch < 1) detail::invalid(fn, "settings.batch", detail::show(s.batch), "must be >= 1");
  if (s.repeat < 1) detail::invalid(fn, "settings.repeat", detail::show(s.repeat), "must be >= 1");
  if (s.threads < 1)
    detail::invalid(fn, "settings.threads", detail::show(static_cast<std::int64_t>(s.threads)),
                    "must be >= 1");
  positive("settings.clip", s.clip);
  positive("settings.target_kl", s.target_kl);
  non_negative("settings.value_coefficient", s.value_coefficient);
  non_negative("settings.max_grad_norm", s.max_grad_norm);
  non_negative("settings.multiplier", s.multiplier);
  const std::int64_t obs = n.actor.shape().input(), act = n.actor.shape().output_width();
  const auto rows = static_cast<std::int64_t>(b.old_log_probabilities.size());
  if (rows < 1) detail::invalid(fn, "batch.old_log_probabilities.size()", "0", "must be >= 1");
  detail::require_size(fn, "networks.log_std", n.log_std.size(), act, "the actor's output width");
  detail::require_size(fn, "batch.observations", b.observations.size(), rows * obs,
                       "rows * observation width");
  detail::require_size(fn, "batch.actions", b.actions.size(), rows * act, "rows * action_dim");
  for (const auto& [name, size] : {std::pair{"batch.reward_advantages", b.reward_advantages.size()},
                                   std::pair{"batch.cost_advantages", b.cost_advantages.size()},
                                   std::pair{"batch.reward_targets", b.reward_targets.size()},
                                   std::pair{"batch.cost_targets", b.cost_targets.size()}})
    detail::require_size(fn, name, size, rows, "rows");
}

// The rows of one minibatch, gathered.
struct Minibatch {
  std::vector<float> observations, actions, reward_targets, cost_targets;
  std::vector<double> old_log_probabilities, reward_advantages, cost_advantages;

  void gather(const UpdateBatch& b, std::span<const std::int64_t> rows, std::size_t obs,
              std::size_t act) {
    const std::size_t n = rows.size();
    observations.resize(n * obs);
    actions.resize(n * act);
    reward_targets.resize(n);
    cost_targets.resize(n);
    old_log_probabilities.resize(n);
    reward_advantages.resize(n);
    cost_advantages.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      const auto r = static_cast<std::size_t>(rows[i]);
      std::copy_n(b.observations.begin() + static_cast<std::ptrdiff_t>(r * obs), obs,
                  observations.begin() + static_cast<std::ptrdiff_t>(i * obs));
      std::copy_n(b.actions.begin() + static_cast<std::ptrdiff_t>(r * act), act,
                  actions.begin() + static_cast<std::ptrdiff_t>(i * act));
      reward_targets[i] = b.reward_targets[r];
      cost_targets[i] = b.cost_targets[r];
      old_log_probabilities[i] = b.old_log_probabilities[r];
      reward_advantages[i] = b.reward_advantages[r];
      cost_advantages[i] = b.cost_advantages[r];
    }
    normalize_advantages(reward_advantages);
    normalize_advantages(cost_advantages);
  }
};

struct StepLosses {
  double actor = 0, reward_critic = 0, cost_critic = 0, kl = 0, gradient_norm = 0;
};

// One gradient step on a minibatch.
StepLosses minibatch_step(ActorCritic& n, const Minibatch& m, const UpdateSettings& s,
                          BlockThreads& threads) {
  const std::size_t act = n.log_std.size();
  const auto rows = static_cast<std::int64_t>(m.old_log_probabilities.size());
  const std::vector<double> log_std(n.log_std.begin(), n.log_std.end());
  std::vector<double> d_log_std(act, 0.0);
  StepLosses losses;
  const auto actor = [&] {
    losses.actor = n.actor.output_loss_gradient(
        m.observations, rows,
        [&](std::span<const float> means, std::int64_t first, std::int64_t count,
            std::span<float> d_means) {
          const auto f = static_cast<std::size_t>(first), c = static_cast<std::size_t>(count);
          const SurrogateRows part{std::span(m.old_log_probabilities).subspan(f, c),
                                   std::span(m.reward_advantages).subspan(f, c),
                                   std::span(m.cost_advantages).subspan(f, c)};
          const SurrogateTerms t = clipped_surrogate<float>(
              means, std::span(m.actions).subspan(f * act, c * act), log_std, part, rows, s.clip,
              s.multiplier, d_means, d_log_std);
          losses.kl += t.kl;
          return t.loss;
        });
  };
  const auto coefficient = static_cast<float>(s.value_coefficient);
  const auto reward_critic = [&] {
    losses.reward_critic =
        n.reward_critic.squared_error_gradient(m.observations, m.reward_targets, {}, rows);
    n.reward_critic.scale_gradient(coefficient);
  };
  const auto cost_critic = [&] {
    losses.cost_critic =
        n.cost_critic.squared_error_gradient(m.observations, m.cost_targets, {}, rows);
    n.cost_critic.scale_gradient(coefficient);
  };
  // The three gradients share nothing: on 3 threads each has its own, on 2 the cost critic's
  // runs beside the other two (each network is as much work as another, its hidden layers
  // dominating), on 1 they run in turn. Each network's bits are its own either way.
  threads.run([&](std::size_t block) {
    if (threads.blocks() == 1) {
      actor();
      reward_critic();
      cost_critic();
    } else if (block == 0) {
      actor();
      if (threads.blocks() == 2) reward_critic();
    } else if (block == 1) {
      if (threads.blocks() == 2)
        cost_critic();
      else
        reward_critic();
    } else {
      cost_critic();
    }
  });
  std::vector<float> log_std_gradient(act);
  double squares = 0.0;
  for (std::size_t j = 0; j < act; ++j) {
    log_std_gradient[j] = static_cast<float>(d_log_std[j]);
    squares += static_cast<double>(log_std_gradient[j]) * log_std_gradient[j];
  }
  for (const double norm :
       {n.actor.gradient_norm(), n.reward_critic.gradient_norm(), n.cost_critic.gradient_norm()})
    squares += norm * norm;
  losses.gradient_norm = std::sqrt(squares);
  // torch.nn.utils.clip_grad_norm_: scale by max_norm / (norm + 1e-6) when that is below 1.
  const double factor = s.max_grad_norm / (losses.gradient_norm + 1e-6);
  if (s.max_grad_norm > 0.0 && factor < 1.0) {
    const auto f = static_cast<float>(factor);
    n.actor.scale_gradient(f);
    n.reward_critic.scale_gradient(f);
    n.cost_critic.scale_gradient(f);
    for (float& g : log_std_gradient) g *= f;
  }
  n.actor.adam_step();
  n.log_std_adam.step(n.log_std, log_std_gradient);
  n.reward_critic.adam_step();
  n.cost_critic.adam_step();
  return losses;
}

}  // namespace

std::vector<std::int64_t> minibatch_bounds(std::int64_t rows, std::int64_t size) {
  if (rows < 1) detail::invalid("minibatch_bounds", "rows", detail::show(rows), "must be >= 1");
  if (size < 1) detail::invalid("minibatch_bounds", "size", detail::show(size), "must be >= 1");
  const bool merge_last = rows % size > 0;
  std::vector<std::int64_t> ends;
  for (std::int64_t first = 0; first < rows; first += size) {
    if (merge_last && first + 2 * size >= rows) {
      ends.push_back(rows);
      break;
    }
    ends.push_back(first + size);
  }
  return ends;
}

UpdateStatistics ppo_update(ActorCritic& networks, const UpdateBatch& batch,
                            const UpdateSettings& settings, std::mt19937_64& shuffle) {
  check(networks, batch, settings);
  const auto obs = static_cast<std::size_t>(networks.actor.shape().input());
  const std::size_t act = networks.log_std.size();
  const auto rows = static_cast<std::int64_t>(batch.old_log_probabilities.size());
  const std::vector<std::int64_t> ends = minibatch_bounds(rows, settings.batch);
  std::vector<std::int64_t> order(static_cast<std::size_t>(rows));
  Minibatch m;
  UpdateStatistics u;
  BlockThreads threads(static_cast<std::size_t>(std::min(settings.threads, 3)));
  for (std::int64_t pass = 0; pass < settings.repeat; ++pass) {
    std::iota(order.begin(), order.end(), std::int64_t{0});
    for (std::int64_t i = rows - 1; i > 0; --i)
      std::swap(order[static_cast<std::size_t>(i)],
                order[static_cast<std::size_t>(curation::detail::uniform_below(shuffle, i + 1))]);
    double kl = 0.0;
    std::int64_t first = 0;
    for (const std::int64_t end : ends) {
      m.gather(batch,
               std::span(order).subspan(static_cast<std::size_t>(first),
                                        static_cast<std::size_t>(end - first)),
               obs, act);
      const StepLosses l = minibatch_step(networks, m, settings, threads);
      kl += l.kl;
      u.actor_loss += l.actor;
      u.reward_critic_loss += l.reward_critic;
      u.cost_critic_loss += l.cost_critic;
      u.gradient_norm += l.gradient_norm;
      ++u.minibatches;
      first = end;
    }
    ++u.passes;
    u.approx_kl = kl / (static_cast<double>(ends.size()) + 1e-7);
    if (u.approx_kl > 1.5 * settings.target_kl) break;
  }
  const auto steps = static_cast<double>(u.minibatches);
  u.actor_loss /= steps;
  u.reward_critic_loss /= steps;
  u.cost_critic_loss /= steps;
  u.gradient_norm /= steps;
  return u;
}

}  // namespace ltt::behavior
