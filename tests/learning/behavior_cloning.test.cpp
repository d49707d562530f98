// Tests for reference_pipeline/learning/behavior_cloning.hpp: cloning a known controller
// a = tanh(K s + c) to small held-out error, per-sample weights (unit weights change nothing,
// zero weights remove samples), advantage weights, determinism and argument checks; input
// normalization folded into the first layer.

#include <learning/behavior_cloning.hpp>

#include <doctest/doctest.h>

#include "../support/throws.hpp"

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace {

namespace lrn = ltt::learning;
using ltt_test::check_throws_naming;

constexpr std::int64_t obs_dim = 5, action_dim = 2;

struct Controller {
  double K[action_dim][obs_dim] = {{0.6, -0.4, 0.3, 0.0, 0.2}, {-0.3, 0.5, 0.1, -0.6, 0.4}};
  double c[action_dim] = {0.1, -0.2};
  double sign = 1.0;
  void act(const float* s, float* a) const {
    for (std::int64_t j = 0; j < action_dim; ++j) {
      double z = c[j];
      for (std::int64_t i = 0; i < obs_dim; ++i) z += K[j][i] * s[i];
      a[j] = static_cast<float>(sign * std::tanh(z));
    }
  }
};

struct Data {
  std::vector<float> observations, actions;
};

Data make_data(std::int64_t rows, std::uint64_t seed, const Controller& controller) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal;
  Data d;
  d.observations.resize(static_cast<std::size_t>(rows * obs_dim));
  d.actions.resize(static_cast<std::size_t>(rows * action_dim));
  for (auto& x : d.observations) x = normal(rng);
  for (std::int64_t r = 0; r < rows; ++r)
    controller.act(&d.observations[static_cast<std::size_t>(r * obs_dim)],
                   &d.actions[static_cast<std::size_t>(r * action_dim)]);
  return d;
}

double mse(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) s += (a[i] - b[i]) * (a[i] - b[i]);
  return s / static_cast<double>(a.size());
}

lrn::PolicyTrainingOptions small_options() {
  lrn::PolicyTrainingOptions o;
  o.hidden = {64, 64};
  o.epochs = 60;
  o.batch = 128;
  o.adam.learning_rate = 2e-3;
  o.seed = 3;
  o.progress = lrn::Progress::quiet;
  return o;
}

}  // namespace

TEST_CASE("behavior cloning reproduces a known tanh-linear controller" *
          doctest::test_suite("training")) {
  const Controller controller;
  const Data train = make_data(4000, 1, controller), test = make_data(1000, 2, controller);
  const auto result = lrn::train_policy(
      {train.observations, obs_dim, train.actions, action_dim, {}}, small_options());
  REQUIRE(result.epoch_loss.size() == 60);
  const double error = mse(lrn::policy_actions(result.policy, test.observations), test.actions);
  double variance = 0.0;
  for (const float a : test.actions) variance += a * a;
  variance /= static_cast<double>(test.actions.size());
  MESSAGE("held-out MSE " << error << " against action second moment " << variance);
  CHECK(error < 1e-3);
  CHECK(error < 0.01 * variance);
}

TEST_CASE("behavior cloning weights: unit weights change no bit, zero weights drop samples" *
          doctest::test_suite("training")) {
  const Controller controller;
  Controller opposite;
  opposite.sign = -1.0;
  const Data good = make_data(1500, 4, controller), bad = make_data(1500, 5, opposite);
  Data both = good;
  both.observations.insert(both.observations.end(), bad.observations.begin(),
                           bad.observations.end());
  both.actions.insert(both.actions.end(), bad.actions.begin(), bad.actions.end());

  auto o = small_options();
  o.epochs = 3;
  const std::vector<float> ones(3000, 1.0f);
  const auto plain =
      lrn::train_policy({both.observations, obs_dim, both.actions, action_dim, {}}, o);
  const auto unit =
      lrn::train_policy({both.observations, obs_dim, both.actions, action_dim, ones}, o);
  CHECK(plain.policy == unit.policy);
  CHECK(plain.epoch_loss == unit.epoch_loss);

  std::vector<float> keep_good(3000, 0.0f);
  std::fill(keep_good.begin(), keep_good.begin() + 1500, 1.0f);
  o.epochs = 60;
  const auto weighted =
      lrn::train_policy({both.observations, obs_dim, both.actions, action_dim, keep_good}, o);
  const Data test = make_data(500, 6, controller);
  const double error = mse(lrn::policy_actions(weighted.policy, test.observations), test.actions);
  MESSAGE("weighted held-out MSE against the kept controller " << error);
  CHECK(error < 5e-3);
}

TEST_CASE("advantage weights: exp(A / beta) clipped, no overflow") {
  const std::vector<double> a{-1.0, 0.0, 0.1, 0.2, 0.3, 1e6};
  const auto w = lrn::advantage_weights(a, 0.1, 20.0);
  CHECK(w[0] == doctest::Approx(std::exp(-10.0)));
  CHECK(w[1] == 1.0f);
  CHECK(w[2] == doctest::Approx(std::exp(1.0)));
  CHECK(w[3] == doctest::Approx(std::exp(2.0)));
  CHECK(w[4] == 20.0f);  // exp(3) > 20
  CHECK(w[5] == 20.0f);
  check_throws_naming([&] { lrn::advantage_weights(a, 0.0); }, "beta");
  check_throws_naming([&] { lrn::advantage_weights(a, 0.1, 0.5); }, "clip");
  const std::vector<double> nan{std::nan("")};
  check_throws_naming([&] { lrn::advantage_weights(nan); }, "advantages[0]");
}

TEST_CASE("behavior cloning: same seed, same bytes") {
  const Data d = make_data(300, 7, Controller{});
  auto o = small_options();
  o.epochs = 2;
  const lrn::BehaviorData data{d.observations, obs_dim, d.actions, action_dim, {}};
  CHECK(lrn::train_policy(data, o).policy == lrn::train_policy(data, o).policy);
  o.seed = 4;
  CHECK(!(lrn::train_policy(data, o).policy == lrn::train_policy(data, small_options()).policy));
}

TEST_CASE("train_policy: argument checks") {
  Data d = make_data(10, 8, Controller{});
  auto o = small_options();
  o.epochs = 1;
  d.actions[3] = 1.5f;
  check_throws_naming(
      [&] {
        lrn::train_policy({d.observations, obs_dim, d.actions, action_dim, {}}, o);
      },
      "data.actions[1][1]");
  d.actions[3] = 0.5f;
  const std::vector<float> short_weights(9, 1.0f);
  check_throws_naming(
      [&] {
        lrn::train_policy({d.observations, obs_dim, d.actions, action_dim, short_weights}, o);
      },
      "data.weights.size()");
  std::vector<float> negative(10, 1.0f);
  negative[4] = -1.0f;
  check_throws_naming(
      [&] {
        lrn::train_policy({d.observations, obs_dim, d.actions, action_dim, negative}, o);
      },
      "data.weights[4]");
  check_throws_naming(
      [&] {
        lrn::train_policy(
            {d.observations, obs_dim, std::span<const float>(d.actions).first(18), action_dim, {}},
            o);
      },
      "data.actions");
  o.batch = 0;
  check_throws_naming(
      [&] {
        lrn::train_policy({d.observations, obs_dim, d.actions, action_dim, {}}, o);
      },
      "options.batch");
}

TEST_CASE(
    "fold_input_normalization: the folded network on x is the network on (x - mean) / scale") {
  const lrn::MlpShape shape{{obs_dim, 16, action_dim}, lrn::OutputActivation::tanh};
  const lrn::MlpWeights network = lrn::initial_weights(shape, 7);
  const std::vector<double> mean{3.0, -200.0, 0.5, 0.0, 1e3}, scale{2.0, 50.0, 0.1, 1.0, 400.0};
  std::mt19937_64 rng(11);
  std::normal_distribution<double> normal;
  const std::int64_t rows = 64;
  std::vector<float> raw(static_cast<std::size_t>(rows * obs_dim)), z(raw.size());
  for (std::size_t i = 0; i < raw.size(); ++i) {
    const std::size_t j = i % static_cast<std::size_t>(obs_dim);
    const double zi = normal(rng);
    raw[i] = static_cast<float>(mean[j] + scale[j] * zi);
    z[i] = static_cast<float>((raw[i] - mean[j]) / scale[j]);
  }
  lrn::MlpWeights folded = network;
  lrn::fold_input_normalization(folded, mean, scale);
  const std::vector<float> a = lrn::policy_actions(folded, raw),
                           b = lrn::policy_actions(network, z);
  // float32 rounding of raw inputs up to ~1e3 and of the folded weights: tanh outputs agree to 1e-4
  for (std::size_t i = 0; i < a.size(); ++i) CHECK(std::abs(a[i] - b[i]) <= 1e-4f);
  lrn::MlpWeights bad = network;
  const std::vector<double> short_mean{0.0}, zero_scale{1, 1, 0, 1, 1};
  check_throws_naming([&] { lrn::fold_input_normalization(bad, short_mean, scale); },
                      "mean.size()");
  check_throws_naming([&] { lrn::fold_input_normalization(bad, mean, zero_scale); }, "scale[2]");
}

TEST_CASE("behavior cloning with normalize_observations: badly scaled inputs, same controller" *
          doctest::test_suite("training")) {
  // The controller of the other tests, fed observation 1 in units 1000 times larger: without
  // normalization that input saturates the first layer; with it the fit matches the
  // well-scaled one. Deterministic (fixed seeds); the margins are wide.
  const Controller controller;
  Data train = make_data(4000, 21, controller), test = make_data(1000, 22, controller);
  for (Data* d : {&train, &test})
    for (std::size_t i = 1; i < d->observations.size(); i += obs_dim) d->observations[i] *= 1000.0f;
  const lrn::BehaviorData data{train.observations, obs_dim, train.actions, action_dim, {}};
  lrn::PolicyTrainingOptions options = small_options();
  const double raw_error =
      mse(lrn::policy_actions(lrn::train_policy(data, options).policy, test.observations),
          test.actions);
  options.normalize_observations = true;
  const lrn::PolicyTrainingResult normalized = lrn::train_policy(data, options);
  const double normalized_error =
      mse(lrn::policy_actions(normalized.policy, test.observations), test.actions);
  MESSAGE("held-out MSE on badly scaled inputs: raw " << raw_error << ", normalized "
                                                      << normalized_error);
  CHECK(normalized_error < 1e-3);
  CHECK(normalized_error < raw_error / 5);
}
