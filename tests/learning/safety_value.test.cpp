// Tests for reference_pipeline/learning/safety_value.hpp and normalization.hpp: the held-out
// split, normalization folded into the ensemble (scores invariant to a per-column affine change
// of units), the normalization statistics against a direct computation, and argument checks.

#include <learning/safety_value.hpp>

#include <curation/preference_pairs.hpp>

#include <doctest/doctest.h>

#include "../support/throws.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace {

namespace lrn = ltt::learning;
namespace cur = ltt::curation;
using ltt_test::check_throws_naming;

constexpr std::int64_t safety_obs_dim = 3;

// Trajectories of 30 states around a per-trajectory centre; per-step cost max(0, s0 + s1).
struct SafetyPool {
  std::vector<float> states;
  std::vector<std::int64_t> offsets{0};
  std::vector<double> step_costs;
};

SafetyPool make_safety_pool(std::int64_t trajectories, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> centre(-1.0f, 1.0f), step(-0.1f, 0.1f);
  SafetyPool pool;
  for (std::int64_t i = 0; i < trajectories; ++i) {
    float s[safety_obs_dim];
    for (auto& x : s) x = centre(rng);
    for (int t = 0; t < 30; ++t) {
      for (auto& x : s) x = std::clamp(x + step(rng), -1.5f, 1.5f);
      pool.states.insert(pool.states.end(), s, s + safety_obs_dim);
      pool.step_costs.push_back(std::max(0.0, static_cast<double>(s[0]) + s[1]));
    }
    pool.offsets.push_back(pool.offsets.back() + 30);
  }
  return pool;
}

lrn::SegmentPairs paper_pairs(const SafetyPool& pool, std::int64_t pairs, std::int64_t H) {
  cur::PreferencePairOptions o;
  o.pairs = pairs;
  o.segment_length = H;
  o.seed = 11;
  return lrn::segment_pairs(cur::sample_preference_pairs(pool.step_costs, pool.offsets, o),
                            pool.offsets, H);
}

lrn::SafetyValueOptions small_safety_options() {
  lrn::SafetyValueOptions o;
  o.value.hidden = {16, 16};
  o.value.members = 2;
  o.value.epochs = 30;
  o.value.batch_pairs = 50;
  o.value.adam.learning_rate = 3e-3;
  o.value.seed = 5;
  o.value.progress = lrn::Progress::quiet;
  return o;
}

}  // namespace

TEST_CASE("observation_normalization: column means and population standard deviations") {
  const std::vector<float> x{1, 10, 5, 2, 20, 5, 3, 30, 5, 6, 40, 5};  // 4 rows, 3 columns
  const lrn::ObservationNormalization z = lrn::observation_normalization(x, 3);
  CHECK(z.mean[0] == doctest::Approx(3.0));
  CHECK(z.mean[1] == doctest::Approx(25.0));
  CHECK(z.mean[2] == doctest::Approx(5.0));
  CHECK(z.scale[0] == doctest::Approx(std::sqrt((4.0 + 1 + 0 + 9) / 4)));
  CHECK(z.scale[1] == doctest::Approx(std::sqrt((225.0 + 25 + 25 + 225) / 4)));
  CHECK(z.scale[2] == 1.0);  // a constant column keeps scale 1
  const std::vector<float> n = lrn::normalized_rows(x, z);
  CHECK(n[2] == 0.0f);
  CHECK(n[1] == doctest::Approx((10 - 25) / z.scale[1]));
  check_throws_naming([&] { lrn::observation_normalization(x, 5); }, "observations.size()");
  check_throws_naming([&] { lrn::observation_normalization(x, 0); }, "obs_dim");
}

TEST_CASE("train_safety_value: held-out share, determinism, accuracy") {
  const SafetyPool pool = make_safety_pool(200, 1);
  const lrn::SegmentPairs pairs = paper_pairs(pool, 300, 10);
  const lrn::SafetyValueOptions o = small_safety_options();
  const lrn::SafetyValue v = lrn::train_safety_value(pool.states, safety_obs_dim, pairs, o);
  CHECK(v.held_out_pairs == 30);  // floor(0.1 * 300)
  CHECK(v.train_pairs == 270);
  CHECK(v.observation_dim == safety_obs_dim);
  REQUIRE(v.ensemble.members.size() == 2);
  CHECK(v.ensemble.members[0].shape.input() == safety_obs_dim);
  REQUIRE(v.epoch_loss.size() == 2);
  CHECK(v.epoch_loss[0].back() < v.epoch_loss[0].front());
  MESSAGE("train accuracy " << v.train.accuracy << ", held-out " << v.held_out.accuracy);
  CHECK(v.train.accuracy > 0.9);
  CHECK(v.held_out.accuracy > 0.8);
  const lrn::SafetyValue again = lrn::train_safety_value(pool.states, safety_obs_dim, pairs, o);
  CHECK(again.ensemble.members[1].parameters == v.ensemble.members[1].parameters);
  CHECK(again.held_out.accuracy == v.held_out.accuracy);

  lrn::SafetyValueOptions none = o;
  none.held_out_fraction = 0.0;
  const lrn::SafetyValue all = lrn::train_safety_value(pool.states, safety_obs_dim, pairs, none);
  CHECK(all.train_pairs == 300);
  CHECK(all.held_out_pairs == 0);
  CHECK(all.held_out.accuracy == 0.0);
}

TEST_CASE("train_safety_value: normalization folded in, so units do not matter") {
  // Columns rescaled by powers of two: every statistic scales exactly, the z-scores are the same
  // bytes, so the training is the same, and the folded ensembles give the same scores on the
  // raw rows of each table, exactly.
  const SafetyPool pool = make_safety_pool(150, 2);
  const lrn::SegmentPairs pairs = paper_pairs(pool, 200, 10);
  SafetyPool scaled = pool, shifted = pool;
  for (std::size_t i = 0; i < scaled.states.size(); i += safety_obs_dim) {
    scaled.states[i] *= 1024.0f;
    scaled.states[i + 1] *= 1.0f / 512.0f;
    shifted.states[i + 2] += 50.0f;
  }
  const lrn::SafetyValueOptions o = small_safety_options();
  const lrn::SafetyValue a = lrn::train_safety_value(pool.states, safety_obs_dim, pairs, o);
  const lrn::SafetyValue b = lrn::train_safety_value(scaled.states, safety_obs_dim, pairs, o);
  CHECK(b.normalization.scale[0] == 1024 * a.normalization.scale[0]);
  const std::vector<double> sa =
      lrn::trajectory_scores(a.ensemble, pool.states, safety_obs_dim, pool.offsets);
  const std::vector<double> sb =
      lrn::trajectory_scores(b.ensemble, scaled.states, safety_obs_dim, scaled.offsets);
  CHECK(sa == sb);

  // A shift changes the z-scores by rounding only; training carries that along but keeps the
  // ranking: the two value functions order the trajectories (nearly) alike.
  const lrn::SafetyValue c = lrn::train_safety_value(shifted.states, safety_obs_dim, pairs, o);
  const std::vector<double> sc =
      lrn::trajectory_scores(c.ensemble, shifted.states, safety_obs_dim, shifted.offsets);
  std::int64_t concordant = 0, discordant = 0;
  for (std::size_t i = 0; i < sa.size(); ++i)
    for (std::size_t j = 0; j < i; ++j) {
      const double x = (sa[i] - sa[j]) * (sc[i] - sc[j]);
      concordant += x > 0;
      discordant += x < 0;
    }
  MESSAGE("shifted column: " << discordant << " discordant trajectory pairs of "
                             << concordant + discordant);
  CHECK(discordant <= (concordant + discordant) / 100);
}

TEST_CASE("train_safety_value: argument checks name the parameter") {
  const SafetyPool pool = make_safety_pool(20, 3);
  const lrn::SegmentPairs pairs = paper_pairs(pool, 20, 10);
  lrn::SafetyValueOptions o = small_safety_options();
  o.held_out_fraction = 1.0;
  check_throws_naming([&] { lrn::train_safety_value(pool.states, safety_obs_dim, pairs, o); },
                      "options.held_out_fraction");
  o.held_out_fraction = 0.1;
  lrn::SegmentPairs one = pairs;
  one.preferred.resize(1);
  one.rejected.resize(1);
  o.held_out_fraction = 0.99;
  CHECK_NOTHROW(
      lrn::train_safety_value(pool.states, safety_obs_dim, one, o));  // floor(0.99) = 0 held out
  lrn::SegmentPairs bad = pairs;
  bad.rejected[3] = static_cast<std::int64_t>(pool.step_costs.size());
  o.held_out_fraction = 0.1;
  check_throws_naming([&] { lrn::train_safety_value(pool.states, safety_obs_dim, bad, o); },
                      "pairs.rejected[3]");
  check_throws_naming([&] { lrn::train_safety_value(pool.states, 0, pairs, o); }, "obs_dim");
}
