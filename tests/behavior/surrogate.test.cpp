// Tests for the Gaussian policy's log-probability and the PPO-Lagrangian surrogate
// (behavior/gaussian_policy.hpp, surrogate.hpp): values by hand, gradients against central
// differences in double, alone (with respect to the means and the log standard deviations) and
// through a network (EigenMlp<double>::output_loss_gradient over every parameter). Tolerance as
// in tests/learning/gradients.test.cpp: h = 1e-5 on O(1) losses gives central differences
// accurate to about 1e-10, so 1e-6 relative leaves a wide margin while a wrong term is off by
// order 1. The data keep every ratio at least 0.02 from the clip range's edges 1 +- 0.2, where
// the loss has kinks, and rows fall on both sides of them with both signs of advantage.

#include <behavior/gaussian_policy.hpp>
#include <behavior/surrogate.hpp>
#include <learning/eigen_mlp.hpp>

#include <doctest/doctest.h>

#include "../support/finite_difference.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <random>
#include <vector>

namespace surrogate_test {

namespace bhv = ltt::behavior;
namespace lrn = ltt::learning;

std::vector<double> draws(std::size_t n, std::uint64_t seed, double scale = 1.0) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  std::vector<double> x(n);
  for (auto& v : x) v = scale * normal(rng);
  return x;
}

using ltt_test::relative_error;
using ltt_test::worst_relative_error;

// Ratios spread over [0.6, 1.5] away from the kinks at 0.8 and 1.2, one per row.
std::vector<double> spread_ratios(std::size_t rows) {
  const double pick[] = {0.62, 0.95, 1.35, 1.05, 0.74, 1.48, 0.9, 1.1, 0.7};
  std::vector<double> r(rows);
  for (std::size_t i = 0; i < rows; ++i) r[i] = pick[i % 9];
  return r;
}

TEST_CASE("log-probability: the value by hand, the gradient against central differences") {
  const std::vector<double> mean{0.3, -0.7}, log_std{-0.5, 0.2};
  const std::vector<double> at_mean = mean;
  // At the mean: -sum s_j - A log(2 pi) / 2.
  CHECK(bhv::log_probability<double>(at_mean, mean, log_std) ==
        doctest::Approx(0.5 - 0.2 - std::log(2 * std::numbers::pi)).epsilon(1e-15));
  // One sigma off in the first component: -1/2 more.
  const std::vector<double> off{0.3 + std::exp(-0.5), -0.7};
  CHECK(bhv::log_probability<double>(off, mean, log_std) ==
        doctest::Approx(0.5 - 0.2 - std::log(2 * std::numbers::pi) - 0.5).epsilon(1e-15));

  const std::vector<double> action{0.9, -1.4};
  std::vector<double> d_mean(2, 0.0), d_log_std(2, 0.0);
  bhv::add_log_probability_gradient<double>(action, mean, log_std, 1.0, d_mean, d_log_std);
  const double h = 1e-5;
  for (std::size_t j = 0; j < 2; ++j) {
    std::vector<double> up = mean, down = mean;
    up[j] += h;
    down[j] -= h;
    const double numeric = (bhv::log_probability<double>(action, up, log_std) -
                            bhv::log_probability<double>(action, down, log_std)) /
                           (2 * h);
    CHECK(relative_error(d_mean[j], numeric) < 1e-8);
    std::vector<double> s_up = log_std, s_down = log_std;
    s_up[j] += h;
    s_down[j] -= h;
    const double numeric_s = (bhv::log_probability<double>(action, mean, s_up) -
                              bhv::log_probability<double>(action, mean, s_down)) /
                             (2 * h);
    CHECK(relative_error(d_log_std[j], numeric_s) < 1e-8);
  }
}

// The surrogate's data for `rows` rows of A = 2 around the given means, with the old
// log-probabilities set so the ratios at these means are spread_ratios.
struct Data {
  std::vector<double> actions, old_log_p, reward_adv, cost_adv;
};

Data make_data(const std::vector<double>& means, const std::vector<double>& log_std,
               std::size_t rows, std::uint64_t seed) {
  Data d;
  const auto noise = draws(rows * 2, seed, 0.5);
  d.actions.resize(rows * 2);
  for (std::size_t i = 0; i < rows * 2; ++i) d.actions[i] = means[i] + noise[i];
  const auto ratios = spread_ratios(rows);
  d.reward_adv = draws(rows, seed + 1);
  d.cost_adv = draws(rows, seed + 2);
  for (std::size_t i = 0; i < rows; ++i) {
    const double log_p =
        bhv::log_probability<double>(std::span<const double>(d.actions).subspan(2 * i, 2),
                                     std::span<const double>(means).subspan(2 * i, 2), log_std);
    d.old_log_p.push_back(log_p - std::log(ratios[i]));
  }
  return d;
}

TEST_CASE("surrogate: value by hand on one row, gradient against central differences") {
  // One row, A > 0, ratio 1.35 (clipped: the term is 1.2 A and has no gradient), and the cost
  // term lambda r C / (1 + lambda).
  {
    const std::vector<double> mean{0.1, 0.2}, log_std{-0.5, -0.5}, action{0.3, 0.0};
    const double log_p = bhv::log_probability<double>(action, mean, log_std);
    const std::vector<double> old{log_p - std::log(1.35)}, A{2.0}, C{-0.5};
    std::vector<double> d(2), ds(2, 0.0);
    const bhv::SurrogateTerms t =
        bhv::clipped_surrogate<double>(mean, action, log_std, {old, A, C}, 1, 0.2, 0.6, d, ds);
    CHECK(t.reward_loss == doctest::Approx(-1.2 * 2.0).epsilon(1e-14));
    CHECK(t.cost_loss == doctest::Approx(1.35 * -0.5).epsilon(1e-14));
    CHECK(t.loss == doctest::Approx((-2.4 + 0.6 * 1.35 * -0.5) / 1.6).epsilon(1e-14));
    CHECK(t.kl == doctest::Approx(-std::log(1.35)).epsilon(1e-14));
    // only the cost term moves: dL/dlog p = r lambda C / (1 + lambda)
    const double g = 1.35 * 0.6 * -0.5 / 1.6;
    CHECK(d[0] == doctest::Approx(g * (0.3 - 0.1) * std::exp(1.0)).epsilon(1e-13));
  }

  const std::size_t rows = 9;
  const auto means = draws(rows * 2, 31, 0.5);
  const std::vector<double> log_std{-0.4, 0.1};
  const Data data = make_data(means, log_std, rows, 32);
  const double clip = 0.2, lambda = 0.7;
  const auto loss = [&](const std::vector<double>& m, const std::vector<double>& s) {
    std::vector<double> d(rows * 2), ds(2, 0.0);
    return bhv::clipped_surrogate<double>(m, data.actions, s,
                                          {data.old_log_p, data.reward_adv, data.cost_adv},
                                          static_cast<std::int64_t>(rows), clip, lambda, d, ds)
        .loss;
  };
  std::vector<double> d_means(rows * 2), d_log_std(2, 0.0);
  bhv::clipped_surrogate<double>(means, data.actions, log_std,
                                 {data.old_log_p, data.reward_adv, data.cost_adv},
                                 static_cast<std::int64_t>(rows), clip, lambda, d_means, d_log_std);
  const double h = 1e-5;
  double worst = 0.0;
  for (std::size_t i = 0; i < means.size(); ++i) {
    auto up = means, down = means;
    up[i] += h;
    down[i] -= h;
    worst = std::max(
        worst, relative_error(d_means[i], (loss(up, log_std) - loss(down, log_std)) / (2 * h)));
  }
  for (std::size_t j = 0; j < 2; ++j) {
    auto up = log_std, down = log_std;
    up[j] += h;
    down[j] -= h;
    worst = std::max(worst,
                     relative_error(d_log_std[j], (loss(means, up) - loss(means, down)) / (2 * h)));
  }
  CHECK(worst < 1e-6);
  // The clipped rows contribute no reward gradient: with lambda = 0 a row whose ratio is past
  // the clip on the side its advantage favours has a zero gradient.
  std::vector<double> d0(rows * 2), ds0(2, 0.0);
  bhv::clipped_surrogate<double>(means, data.actions, log_std,
                                 {data.old_log_p, data.reward_adv, data.cost_adv},
                                 static_cast<std::int64_t>(rows), clip, 0.0, d0, ds0);
  const auto ratios = spread_ratios(rows);
  int zero_rows = 0;
  for (std::size_t i = 0; i < rows; ++i) {
    const bool past = (data.reward_adv[i] > 0 && ratios[i] > 1 + clip) ||
                      (data.reward_adv[i] < 0 && ratios[i] < 1 - clip);
    if (past) {
      ++zero_rows;
      CHECK(d0[2 * i] == 0.0);
      CHECK(d0[2 * i + 1] == 0.0);
    } else {
      CHECK(d0[2 * i] != 0.0);
    }
  }
  CHECK(zero_rows > 0);
}

TEST_CASE("surrogate through the policy network: every parameter against central differences") {
  // obs 3 -> 5 -> 5 -> 2 (tanh), chunks of 4 rows over 9: the surrogate's dL/dmu through
  // output_loss_gradient, the minibatch mean over all 9 rows.
  const std::vector<std::int64_t> hidden{5, 5};
  const auto shape = lrn::policy_shape(3, hidden, 2);
  const auto w0 = lrn::initial_weights(shape, 41);
  lrn::EigenMlp<double> mlp(shape, std::vector<double>(w0.parameters.begin(), w0.parameters.end()),
                            {}, /*chunk_rows=*/4);
  const std::int64_t rows = 9;
  const auto obs = draws(static_cast<std::size_t>(rows * 3), 42);
  std::vector<double> means(static_cast<std::size_t>(rows * 2));
  mlp.predict(obs, rows, means);
  const std::vector<double> log_std{-0.5, -0.3};
  const Data data = make_data(means, log_std, static_cast<std::size_t>(rows), 43);
  std::vector<double> d_log_std(2);
  const auto surrogate = [&] {
    std::fill(d_log_std.begin(), d_log_std.end(), 0.0);
    return mlp.output_loss_gradient(
        obs, rows,
        [&](std::span<const double> y, std::int64_t first, std::int64_t n, std::span<double> d) {
          const auto f = static_cast<std::size_t>(first), c = static_cast<std::size_t>(n);
          return bhv::clipped_surrogate<double>(
                     y, std::span<const double>(data.actions).subspan(2 * f, 2 * c), log_std,
                     {std::span(data.old_log_p).subspan(f, c),
                      std::span(data.reward_adv).subspan(f, c),
                      std::span(data.cost_adv).subspan(f, c)},
                     rows, 0.2, 0.4, d, d_log_std)
              .loss;
        });
  };
  CHECK(worst_relative_error(mlp, surrogate) < 1e-6);
}

}  // namespace surrogate_test
