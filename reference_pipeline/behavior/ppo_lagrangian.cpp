// The PPO-Lagrangian trainer's epoch (ppo_lagrangian.hpp).

#include "behavior/ppo_lagrangian.hpp"

#include <cmath>
#include <numeric>
#include <string_view>
#include <utility>

#include <learning/behavior_cloning.hpp>

#include "behavior/advantages.hpp"
#include "behavior/check.hpp"
#include "behavior/orthogonal_init.hpp"
#include "behavior/ppo_update.hpp"
#include "behavior/running_statistics.hpp"

namespace ltt::behavior {

namespace {

constexpr double normalization_epsilon = 1e-8;  // FSRL BasePolicy._eps

enum Stream : std::uint64_t {
  initial_networks = 0,
  episode_seeds = 1,
  action_noise = 2,
  minibatch_shuffles = 3
};

std::mt19937_64 stream(std::uint64_t seed, Stream s) {
  return std::mt19937_64(learning::stream_seed(seed, s));
}

void check_spec(const EnvironmentSpec& spec) {
  constexpr std::string_view fn = "PpoLagrangian";
  for (const auto& [name, value] :
       {std::pair{"spec.observation_dim", spec.observation_dim},
        std::pair{"spec.action_dim", spec.action_dim}, std::pair{"spec.horizon", spec.horizon}})
    if (value < 1) detail::invalid(fn, name, detail::show(value), "must be >= 1");
}

// The network at its current parameters, as weights.
learning::MlpWeights weights_of(const learning::EigenMlp<float>& net) {
  return {net.shape(), {net.parameters().begin(), net.parameters().end()}};
}

}  // namespace

void check_options(const PpoLagrangianOptions& o) {
  constexpr std::string_view fn = "PpoLagrangian";
  const auto at_least_one = [&](std::string_view name, std::int64_t x) {
    if (x < 1) detail::invalid(fn, name, detail::show(x), "must be >= 1");
  };
  const auto finite = [&](std::string_view name, double x, double lo, double hi,
                          std::string_view range) {
    if (!(std::isfinite(x) && x >= lo && x <= hi))
      detail::invalid(fn, name, detail::show(x), range);
  };
  for (std::size_t i = 0; i < o.hidden.size(); ++i)
    at_least_one(data::cat("options.hidden[", std::to_string(i), "]"), o.hidden[i]);
  at_least_one("options.epochs", o.epochs);
  at_least_one("options.episodes_per_epoch", o.episodes_per_epoch);
  at_least_one("options.batch", o.batch);
  at_least_one("options.repeat", o.repeat);
  at_least_one("options.threads", o.threads);
  constexpr double big = 1e300;
  finite("options.initial_log_std", o.initial_log_std, -20, 2, "must lie in [-20, 2]");
  if (!(o.learning_rate > 0.0 && std::isfinite(o.learning_rate)))
    detail::invalid(fn, "options.learning_rate", detail::show(o.learning_rate),
                    "must be finite and > 0");
  finite("options.gamma", o.gamma, 0, 1, "must lie in [0, 1]");
  finite("options.gae_lambda", o.gae_lambda, 0, 1, "must lie in [0, 1]");
  finite("options.clip", o.clip, 1e-12, 1, "must lie in (0, 1]");
  finite("options.target_kl", o.target_kl, 1e-300, big, "must be finite and > 0");
  finite("options.value_coefficient", o.value_coefficient, 0, big, "must be finite and >= 0");
  finite("options.max_grad_norm", o.max_grad_norm, 0, big, "must be finite and >= 0 (0: none)");
  PidLagrangian{o.pid};  // names 'gains.*'
  const tasks::ThresholdSchedule& c = o.cost_limit;
  finite("options.cost_limit.start", c.start, 0, big, "must be finite and >= 0");
  finite("options.cost_limit.end", c.end, 0, big, "must be finite and >= 0");
  finite("options.cost_limit.hold_until", c.hold_until, 0, 1, "must lie in [0, 1]");
  if (!(c.reach_at >= c.hold_until && c.reach_at <= 1))
    detail::invalid(
        fn, "options.cost_limit.reach_at", detail::show(c.reach_at),
        data::cat("must lie in [hold_until, 1] = [", detail::show(c.hold_until), ", 1]"));
}

struct PpoLagrangian::State {
  EnvironmentFactory make;
  EnvironmentSpec spec;
  PpoLagrangianOptions o;
  ActorCritic networks;
  PidLagrangian pid;
  RunningStatistics reward_returns{1}, cost_returns{1}, observations;
  std::mt19937_64 seeds, noise, shuffles;
  std::int64_t epochs_done = 0, environment_steps = 0;
  double cost_limit = 0;
  std::vector<float> normalized;  // the rollout's mean function's buffer

  State(EnvironmentFactory make_, const EnvironmentSpec& spec_, const PpoLagrangianOptions& o_,
        std::mt19937_64 init)
      : make(std::move(make_)),
        spec(spec_),
        o(o_),
        networks(initial_networks(spec_, o_, init)),
        pid(o_.pid),
        observations(spec_.observation_dim),
        seeds(stream(o_.seed, episode_seeds)),
        noise(stream(o_.seed, action_noise)),
        shuffles(stream(o_.seed, minibatch_shuffles)),
        cost_limit(o_.cost_limit.at(0.0)) {}

  static ActorCritic initial_networks(const EnvironmentSpec& spec, const PpoLagrangianOptions& o,
                                      std::mt19937_64& rng) {
    const learning::AdamOptions adam{o.learning_rate, 0.9, 0.999, 1e-8};
    const learning::MlpShape actor =
        learning::policy_shape(spec.observation_dim, o.hidden, spec.action_dim);
    const learning::MlpShape critic = learning::value_shape(spec.observation_dim, o.hidden);
    const learning::MlpWeights a = orthogonal_weights(actor, rng);
    const learning::MlpWeights r = orthogonal_weights(critic, rng);
    const learning::MlpWeights c = orthogonal_weights(critic, rng);
    const auto act = static_cast<std::size_t>(spec.action_dim);
    return ActorCritic{learning::EigenMlp<float>(actor, a.parameters, adam),
                       std::vector<float>(act, static_cast<float>(o.initial_log_std)),
                       learning::AdamState<float>(spec.action_dim, adam),
                       learning::EigenMlp<float>(critic, r.parameters, adam),
                       learning::EigenMlp<float>(critic, c.parameters, adam)};
  }

  // The observations as the networks see them: z-scored by the running statistics, or as given.
  std::span<const float> network_input(std::span<const float> raw, std::vector<float>& buffer) {
    if (!o.observation_normalization) return raw;
    const auto width = static_cast<std::size_t>(spec.observation_dim);
    buffer.resize(raw.size());
    const auto mean = observations.mean();
    const auto variance = observations.variance();
    for (std::size_t i = 0; i < raw.size(); ++i) {
      const std::size_t c = i % width;
      buffer[i] = static_cast<float>((static_cast<double>(raw[i]) - mean[c]) /
                                     std::sqrt(variance[c] + normalization_epsilon));
    }
    return buffer;
  }

  // A critic's values of `rows` rows, on the scale of the returns.
  std::vector<double> values(learning::EigenMlp<float>& critic, const RunningStatistics& returns,
                             std::span<const float> inputs, std::int64_t rows) {
    std::vector<float> out(static_cast<std::size_t>(rows));
    critic.predict(inputs, rows, out);
    const double scale =
        o.value_normalization ? std::sqrt(returns.variance()[0] + normalization_epsilon) : 1.0;
    std::vector<double> v(out.size());
    for (std::size_t i = 0; i < out.size(); ++i) v[i] = static_cast<double>(out[i]) * scale;
    return v;
  }

  // GAE for one critic, its targets (scaled by the statistics before this epoch's update of
  // them), and the statistics updated with the returns.
  std::pair<std::vector<double>, std::vector<float>> advantages_and_targets(
      learning::EigenMlp<float>& critic, RunningStatistics& returns, const Rollout& r,
      std::span<const double> signal, std::span<const float> inputs,
      std::span<const float> final_inputs) {
    const std::vector<double> v = values(critic, returns, inputs, r.rows());
    const std::vector<double> last = values(critic, returns, final_inputs, r.episodes());
    std::vector<double> next(v.size());
    for (std::int64_t e = 0; e < r.episodes(); ++e) {
      const auto a = static_cast<std::size_t>(r.offsets[static_cast<std::size_t>(e)]);
      const auto b = static_cast<std::size_t>(r.offsets[static_cast<std::size_t>(e) + 1]);
      for (std::size_t t = a; t + 1 < b; ++t) next[t] = v[t + 1];
      if (b > a) next[b - 1] = last[static_cast<std::size_t>(e)];
    }
    std::vector<double> advantages =
        generalized_advantages(signal, v, next, r.terminals, r.timeouts, o.gamma, o.gae_lambda);
    std::vector<double> returns_now(v.size());
    for (std::size_t t = 0; t < v.size(); ++t) returns_now[t] = advantages[t] + v[t];
    const double scale =
        o.value_normalization ? std::sqrt(returns.variance()[0] + normalization_epsilon) : 1.0;
    std::vector<float> targets(v.size());
    for (std::size_t t = 0; t < v.size(); ++t)
      targets[t] = static_cast<float>(returns_now[t] / scale);
    if (o.value_normalization) returns.update(returns_now);
    return {std::move(advantages), std::move(targets)};
  }
};

PpoLagrangian::PpoLagrangian(EnvironmentFactory make, const EnvironmentSpec& spec,
                             const PpoLagrangianOptions& options) {
  check_options(options);
  check_spec(spec);
  if (!make) detail::invalid("PpoLagrangian", "make", "must be a function (it is empty)");
  s_ = std::make_unique<State>(std::move(make), spec, options,
                               stream(options.seed, initial_networks));
}

PpoLagrangian::~PpoLagrangian() = default;

EpochRecord PpoLagrangian::run_epoch() {
  State& s = *s_;
  const auto start = std::chrono::steady_clock::now();
  EpochRecord rec;
  rec.epoch = s.epochs_done + 1;
  s.cost_limit =
      s.o.cost_limit.at(static_cast<double>(rec.epoch - 1) / static_cast<double>(s.o.epochs));
  rec.cost_limit = s.cost_limit;

  std::vector<std::uint64_t> seeds(static_cast<std::size_t>(s.o.episodes_per_epoch));
  for (auto& seed : seeds) seed = s.seeds();
  const std::vector<double> log_std(s.networks.log_std.begin(), s.networks.log_std.end());
  const Rollout r = collect_episodes(
      s.make, s.spec, seeds,
      [&](std::span<const float> obs, std::int64_t rows, std::span<float> out) {
        means(obs, rows, out);
      },
      log_std, s.noise, s.o.threads);

  rec.episodes = r.episodes();
  for (std::int64_t e = 0; e < r.episodes(); ++e) {
    const auto a = r.offsets[static_cast<std::size_t>(e)];
    const auto b = r.offsets[static_cast<std::size_t>(e) + 1];
    for (auto t = a; t < b; ++t) {
      rec.mean_return += r.rewards[static_cast<std::size_t>(t)];
      rec.mean_cost += r.costs[static_cast<std::size_t>(t)];
    }
    rec.mean_length += static_cast<double>(b - a);
  }
  const auto episodes = static_cast<double>(r.episodes());
  rec.mean_return /= episodes;
  rec.mean_cost /= episodes;
  rec.mean_length /= episodes;
  rec.multiplier = s.pid.update(rec.mean_cost, s.cost_limit);

  std::vector<float> input_buffer, final_buffer;
  const std::span<const float> inputs = s.network_input(r.observations, input_buffer);
  const std::span<const float> final_inputs = s.network_input(r.final_observations, final_buffer);
  auto [reward_advantages, reward_targets] = s.advantages_and_targets(
      s.networks.reward_critic, s.reward_returns, r, r.rewards, inputs, final_inputs);
  auto [cost_advantages, cost_targets] = s.advantages_and_targets(
      s.networks.cost_critic, s.cost_returns, r, r.costs, inputs, final_inputs);

  const UpdateBatch batch{inputs,          r.actions,      r.log_probabilities, reward_advantages,
                          cost_advantages, reward_targets, cost_targets};
  UpdateSettings settings;
  settings.batch = s.o.batch;
  settings.repeat = s.o.repeat;
  settings.clip = s.o.clip;
  settings.target_kl = s.o.target_kl;
  settings.value_coefficient = s.o.value_coefficient;
  settings.max_grad_norm = s.o.max_grad_norm;
  settings.multiplier = rec.multiplier;
  settings.threads = s.o.threads;
  const UpdateStatistics u = ppo_update(s.networks, batch, settings, s.shuffles);
  if (s.o.observation_normalization) s.observations.update(std::span<const float>(r.observations));

  s.environment_steps += r.rows();
  s.epochs_done = rec.epoch;
  rec.environment_steps = s.environment_steps;
  rec.approx_kl = u.approx_kl;
  rec.passes = u.passes;
  for (const float l : s.networks.log_std) rec.mean_std += std::exp(static_cast<double>(l));
  rec.mean_std /= static_cast<double>(s.networks.log_std.size());
  rec.actor_loss = u.actor_loss;
  rec.reward_critic_loss = u.reward_critic_loss;
  rec.cost_critic_loss = u.cost_critic_loss;
  rec.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return rec;
}

std::int64_t PpoLagrangian::epochs_done() const { return s_->epochs_done; }
std::int64_t PpoLagrangian::environment_steps() const { return s_->environment_steps; }
double PpoLagrangian::multiplier() const { return s_->pid.multiplier(); }
double PpoLagrangian::cost_limit() const { return s_->cost_limit; }
const PpoLagrangianOptions& PpoLagrangian::options() const { return s_->o; }

void PpoLagrangian::means(std::span<const float> observations, std::int64_t rows,
                          std::span<float> out) {
  s_->networks.actor.predict(s_->network_input(observations, s_->normalized), rows, out);
}

GaussianPolicy PpoLagrangian::policy() const {
  GaussianPolicy p{weights_of(s_->networks.actor), s_->networks.log_std};
  if (s_->o.observation_normalization) {
    const auto mean = s_->observations.mean();
    std::vector<double> scale(mean.size());
    for (std::size_t c = 0; c < scale.size(); ++c)
      scale[c] = std::sqrt(s_->observations.variance()[c] + normalization_epsilon);
    learning::fold_input_normalization(p.mean, mean, scale);
  }
  return p;
}

}  // namespace ltt::behavior
