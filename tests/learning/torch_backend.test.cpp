// Tests for reference_pipeline/learning/torch_backend.hpp (built with LTT_WITH_TORCH only): the
// LibTorch backend computes what the Eigen backend computes. Both start from the same bytes and
// see the same minibatches (the trainers own initialization and shuffling), so they differ only
// in the float32 rounding inside the layers: step-by-step losses agree to float32 accuracy,
// trained networks reach the same held-out loss, and one model file gives the same predictions
// on both.

#include <learning/backend.hpp>
#include <learning/behavior_cloning.hpp>
#include <learning/model_file.hpp>
#include <learning/torch_backend.hpp>
#include <learning/value_training.hpp>

#include <doctest/doctest.h>

#include "../support/throws.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

namespace {

namespace lrn = ltt::learning;
namespace fs = std::filesystem;

std::vector<float> uniform_floats(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> x(n);
  for (auto& v : x) v = u(rng);
  return x;
}

// Largest |a_i - b_i| over the largest |b_i|: a relative error on the scale of the values.
double scaled_difference(const std::vector<float>& a, const std::vector<float>& b) {
  REQUIRE(a.size() == b.size());
  double diff = 0.0, scale = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, std::abs(static_cast<double>(a[i]) - static_cast<double>(b[i])));
    scale = std::max(scale, std::abs(static_cast<double>(b[i])));
  }
  return diff / scale;
}

std::vector<float> predictions(const lrn::Backend& backend, const lrn::MlpWeights& w,
                               const std::vector<float>& x) {
  const auto rows = static_cast<std::int64_t>(x.size()) / w.shape.input();
  std::vector<float> y(static_cast<std::size_t>(rows * w.shape.output_width()));
  backend.network(w)->predict(x, rows, y);
  return y;
}

// States in R^4 with a known per-state cost; a segment is H consecutive rows, and a pair prefers
// the segment of smaller summed cost.
constexpr std::int64_t torch_obs_dim = 4;

double cost(const float* s) {
  return std::max(0.0f, s[0] + 0.5f * s[1]) + 0.3 * s[2] * s[2] + 0.1 * std::sin(3.0 * s[3]);
}

lrn::SegmentPairs labeled_pairs(const std::vector<float>& states, std::int64_t pairs,
                                std::int64_t H, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const auto rows = static_cast<std::int64_t>(states.size()) / torch_obs_dim;
  std::uniform_int_distribution<std::int64_t> first(0, rows - H);
  auto segment_cost = [&](std::int64_t f) {
    double c = 0.0;
    for (std::int64_t i = f; i < f + H; ++i) c += cost(states.data() + i * torch_obs_dim);
    return c;
  };
  lrn::SegmentPairs out;
  out.segment_length = H;
  while (static_cast<std::int64_t>(out.preferred.size()) < pairs) {
    const std::int64_t a = first(rng), b = first(rng);
    const double ca = segment_cost(a), cb = segment_cost(b);
    if (ca == cb) continue;
    out.preferred.push_back(ca < cb ? a : b);
    out.rejected.push_back(ca < cb ? b : a);
  }
  return out;
}

}  // namespace

TEST_CASE("torch backend: registered as \"torch\", on CUDA when there is one") {
  const auto names = lrn::backend_names();
  CHECK(std::find(names.begin(), names.end(), "torch") != names.end());
  const auto& torch = lrn::backend_named("torch");
  CHECK(&torch == &lrn::torch_backend());
  CHECK((torch.name() == "torch-cpu" || torch.name() == "torch-cuda"));
  MESSAGE("LibTorch backend: " << torch.name());
  // the network holds exactly the bytes it was given
  const std::vector<std::int64_t> hidden{7, 5};
  const auto start = lrn::initial_weights(lrn::policy_shape(3, hidden, 2), 11);
  CHECK(torch.network(start)->weights() == start);
  ltt_test::check_throws_naming(
      [&] {
        torch.network({start.shape, {1.0f, 2.0f}});
      },
      "start.parameters.size()");
  std::vector<float> out(2);
  ltt_test::check_throws_naming(
      [&] { torch.network(start)->predict(std::vector<float>(4), 1, out); }, "inputs.size()");
}

TEST_CASE("torch and Eigen backends: same start, same minibatch, same loss at every step") {
  // 40 Adam steps on one fixed minibatch from the same initial bytes. The backends round
  // differently only inside the float32 layers (summation order of the products): a forward pass
  // differs by a few float32 ulps (relative ~1e-7), and so do the losses at every step (measured:
  // 4e-8 at worst). Bar 1e-5 relative; a wrong term moves the losses far more (without Adam's
  // bias correction the first step is 10 times longer; a sum in place of a mean scales the loss).
  //
  // The squared error runs with Adam's defaults. The Bradley-Terry loss needs eps = 1e-4: it is
  // unchanged by adding a constant to V, so the gradient of the output bias, and of the bias of
  // any hidden unit active on every row of the minibatch, is zero up to rounding; Adam divides by
  // sqrt(v) + eps, which turns a 1e-9 rounding residue into a step of about lr / 10 with eps =
  // 1e-8, in a direction each backend's rounding picks. Those steps leave the loss alone until a
  // unit turns off on some row; then the two runs separate (measured: 7e-4 relative by step 40;
  // the Eigen backend against itself with chunks of 10 rows instead of 512: 2.5e-4).
  // A larger eps damps rounding-sized gradients and keeps every other step as it was.
  const std::vector<std::int64_t> hidden{32, 32};
  const lrn::AdamOptions adam{.learning_rate = 3e-3};
  const auto& torch = lrn::torch_backend();

  SUBCASE("Bradley-Terry over segment sums") {
    const std::int64_t pairs = 16, H = 5;
    const auto start = lrn::initial_weights(lrn::value_shape(6, hidden), 3);
    const auto batch = uniform_floats(static_cast<std::size_t>(2 * H * pairs * 6), 4);
    lrn::AdamOptions bt_adam = adam;
    bt_adam.epsilon = 1e-4;
    const auto e = lrn::eigen_backend().network(start, bt_adam);
    const auto t = torch.network(start, bt_adam);
    double worst = 0.0, first = 0.0, last = 0.0;
    for (int step = 0; step < 40; ++step) {
      const double le = e->bradley_terry_step(batch, pairs, H);
      const double lt = t->bradley_terry_step(batch, pairs, H);
      worst = std::max(worst, std::abs(le - lt) / le);
      (step == 0 ? first : last) = le;
    }
    MESSAGE("BT loss " << first << " -> " << last << ", worst relative difference " << worst);
    CHECK(last < 0.5 * first);
    CHECK(worst < 1e-5);
    const double w = scaled_difference(t->weights().parameters, e->weights().parameters);
    MESSAGE("parameters after 40 steps differ by " << w << " of the largest");
    CHECK(w < 1e-4);
  }

  SUBCASE("weighted squared error through tanh") {
    const std::int64_t rows = 48;
    const auto start = lrn::initial_weights(lrn::policy_shape(6, hidden, 3), 5);
    const auto inputs = uniform_floats(static_cast<std::size_t>(rows * 6), 6);
    auto targets = uniform_floats(static_cast<std::size_t>(rows * 3), 7);
    for (auto& v : targets) v *= 0.9f;
    auto weights = uniform_floats(static_cast<std::size_t>(rows), 8);
    for (auto& v : weights) v = 1.0f + v;  // in [0, 2]
    for (const bool weighted : {false, true}) {
      const std::span<const float> w =
          weighted ? std::span<const float>(weights) : std::span<const float>();
      const auto e = lrn::eigen_backend().network(start, adam);
      const auto t = torch.network(start, adam);
      double worst = 0.0, first = 0.0, last = 0.0;
      for (int step = 0; step < 40; ++step) {
        const double le = e->squared_error_step(inputs, targets, w, rows);
        const double lt = t->squared_error_step(inputs, targets, w, rows);
        worst = std::max(worst, std::abs(le - lt) / le);
        (step == 0 ? first : last) = le;
      }
      MESSAGE(std::string(weighted ? "weighted" : "unweighted")
              << " MSE " << first << " -> " << last << ", worst relative difference " << worst);
      CHECK(last < 0.8 * first);
      CHECK(worst < 1e-5);
    }
  }
}

TEST_CASE("torch and Eigen backends reach the same held-out loss" *
          doctest::test_suite("training")) {
  // The value trainer on both backends with Adam's default eps: same seeds, so the same initial
  // bytes and minibatches. Rounding-sized gradients (see the test above) make the runs separate
  // slowly: measured 1e-6 relative on the first epoch's loss, 0.6 percent on the last epoch's
  // and 0.4 percent on the held-out loss. So the bars are loose on the path (1e-3 on the first
  // epoch, where a wrong Adam or loss term shows as 1e-2 or more; 5 percent on the last) and on
  // what training is for: held-out loss within 3 percent and the same accuracy to 0.01.
  const auto train_states = uniform_floats(2000 * torch_obs_dim, 21);
  const auto held_states = uniform_floats(1000 * torch_obs_dim, 22);
  const std::int64_t H = 8;
  const auto train_pairs = labeled_pairs(train_states, 600, H, 23);
  const auto held_pairs = labeled_pairs(held_states, 1000, H, 24);
  lrn::ValueTrainingOptions o;
  o.hidden = {32, 32};
  o.members = 2;
  o.epochs = 20;
  o.batch_pairs = 64;
  o.adam.learning_rate = 3e-3;
  o.seed = 9;
  o.progress = lrn::Progress::quiet;
  const auto& torch = lrn::torch_backend();
  const auto e =
      lrn::train_value_ensemble(train_states, torch_obs_dim, train_pairs, o, lrn::eigen_backend());
  const auto t = lrn::train_value_ensemble(train_states, torch_obs_dim, train_pairs, o, torch);
  for (std::size_t k = 0; k < 2; ++k) {
    const double first =
        std::abs(e.epoch_loss[k].front() - t.epoch_loss[k].front()) / e.epoch_loss[k].front();
    const double last =
        std::abs(e.epoch_loss[k].back() - t.epoch_loss[k].back()) / e.epoch_loss[k].back();
    MESSAGE("member " << k << ": epoch loss " << e.epoch_loss[k].front() << " -> "
                      << e.epoch_loss[k].back() << ", relative difference first epoch " << first
                      << ", last " << last);
    CHECK(e.epoch_loss[k].back() < 0.5 * e.epoch_loss[k].front());
    CHECK(first < 1e-3);
    CHECK(last < 0.05);
  }
  // members trained side by side on two threads: the same bytes
  auto two = o;
  two.threads = 2;
  const auto t2 = lrn::train_value_ensemble(train_states, torch_obs_dim, train_pairs, two, torch);
  CHECK(t2.ensemble.members == t.ensemble.members);
  CHECK(t2.epoch_loss == t.epoch_loss);

  const auto he = lrn::evaluate_pairs(e.ensemble, held_states, torch_obs_dim, held_pairs);
  const auto ht = lrn::evaluate_pairs(t.ensemble, held_states, torch_obs_dim, held_pairs);
  // the torch ensemble evaluated by torch gives the same loss as evaluated by Eigen
  const auto ht_torch =
      lrn::evaluate_pairs(t.ensemble, held_states, torch_obs_dim, held_pairs, torch);
  MESSAGE("held-out loss eigen " << he.loss << " torch " << ht.loss << " (torch-evaluated "
                                 << ht_torch.loss << "), accuracy eigen " << he.accuracy
                                 << " torch " << ht.accuracy);
  CHECK(he.accuracy > 0.9);
  CHECK(std::abs(he.loss - ht.loss) < 0.03 * he.loss);
  CHECK(std::abs(he.accuracy - ht.accuracy) < 0.01);
  CHECK(std::abs(ht_torch.loss - ht.loss) < 1e-5 * ht.loss);

  // behavior cloning of a = tanh(K s) with per-sample weights through the same trainer
  const std::int64_t rows = 1500, held_rows = 500, A = 2;
  const auto obs = uniform_floats(static_cast<std::size_t>((rows + held_rows) * torch_obs_dim), 25);
  const auto K = uniform_floats(static_cast<std::size_t>(A * torch_obs_dim), 26);
  std::vector<float> actions(static_cast<std::size_t>((rows + held_rows) * A));
  for (std::int64_t i = 0; i < rows + held_rows; ++i)
    for (std::int64_t j = 0; j < A; ++j) {
      float z = 0.0f;
      for (std::int64_t d = 0; d < torch_obs_dim; ++d)
        z += K[static_cast<std::size_t>(j * torch_obs_dim + d)] *
             obs[static_cast<std::size_t>(i * torch_obs_dim + d)];
      actions[static_cast<std::size_t>(i * A + j)] = std::tanh(z);
    }
  auto weights = uniform_floats(static_cast<std::size_t>(rows), 27);
  for (auto& w : weights) w = 1.0f + w;
  const lrn::BehaviorData data{
      std::span(obs).first(static_cast<std::size_t>(rows * torch_obs_dim)), torch_obs_dim,
      std::span(actions).first(static_cast<std::size_t>(rows * A)), A, weights};
  lrn::PolicyTrainingOptions p;
  p.hidden = {32, 32};
  p.epochs = 20;
  p.batch = 64;
  p.adam.learning_rate = 3e-3;
  p.progress = lrn::Progress::quiet;
  const auto pe = lrn::train_policy(data, p, lrn::eigen_backend());
  const auto pt = lrn::train_policy(data, p, torch);
  const std::vector<float> held_obs(obs.begin() + rows * torch_obs_dim, obs.end());
  auto held_mse = [&](const lrn::MlpWeights& policy) {
    const auto a = lrn::policy_actions(policy, held_obs);
    double s = 0.0;
    for (std::size_t i = 0; i < a.size(); ++i) {
      const double r = static_cast<double>(a[i]) -
                       static_cast<double>(actions[static_cast<std::size_t>(rows * A) + i]);
      s += r * r;
    }
    return s / static_cast<double>(a.size());
  };
  const double me = held_mse(pe.policy), mt = held_mse(pt.policy);
  MESSAGE("behavior cloning: epoch loss " << pe.epoch_loss.front() << " -> " << pe.epoch_loss.back()
                                          << ", held-out MSE eigen " << me << " torch " << mt);
  CHECK(std::abs(pe.epoch_loss.front() - pt.epoch_loss.front()) < 1e-4 * pe.epoch_loss.front());
  CHECK(me < 0.01);
  CHECK(std::abs(me - mt) < 0.05 * me);
}

TEST_CASE("one model file, both backends: same predictions; torch saves, Eigen loads") {
  // Forward only, from the same bytes: the outputs differ by the float32 rounding of three
  // layers (relative ~1e-6 of the output scale); bar 1e-5.
  const std::vector<std::int64_t> hidden{64, 64};
  const auto& torch = lrn::torch_backend();
  const auto path =
      fs::temp_directory_path() / ("ltt_torch_backend_test_" + std::to_string(::getpid()) + ".mlp");
  const auto x = uniform_floats(500 * 10, 31);

  lrn::save_models(path, std::vector{lrn::initial_weights(lrn::value_shape(10, hidden), 1),
                                     lrn::initial_weights(lrn::policy_shape(10, hidden, 3), 2)});
  for (const auto& net : lrn::load_models(path)) {
    const double d =
        scaled_difference(predictions(torch, net, x), predictions(lrn::eigen_backend(), net, x));
    MESSAGE("loaded network, " << net.shape.output_width() << " outputs: predictions differ by "
                               << d);
    CHECK(d < 1e-5);
  }

  // train on torch, save, load: the exact bytes, and Eigen predicts what torch predicts
  const auto start = lrn::initial_weights(lrn::value_shape(10, hidden), 3);
  const auto t = torch.network(start, {.learning_rate = 1e-2});
  const auto batch = uniform_floats(2 * 4 * 8 * 10, 32);
  for (int step = 0; step < 10; ++step) t->bradley_terry_step(batch, 8, 4);
  const auto trained = t->weights();
  CHECK(trained != start);
  lrn::save_model(path, trained);
  const auto loaded = lrn::load_model(path);
  CHECK(loaded == trained);
  std::vector<float> from_torch(500);
  t->predict(x, 500, from_torch);
  const double d = scaled_difference(predictions(lrn::eigen_backend(), loaded, x), from_torch);
  MESSAGE("saved by torch, loaded by Eigen: predictions differ by " << d);
  CHECK(d < 1e-5);
  fs::remove(path);
}
