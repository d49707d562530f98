// The sequential walk at several budgets (curation/several_budgets_sequential.hpp): with one
// budget it is the single-budget uniform-order SequentialWalk after every label (every double
// compared with ==); with several, each p_jk recomputed from its definition on the labels that
// landed in S_j, the joint walk as ltt::fixed_sequence on max_k p_jk and the per-budget walks
// at their shares; the stop rules; argument checking. The Monte Carlo validity checks are in
// several_budgets_sequential_validity.test.cpp.

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <curation/cost_bands.hpp>
#include <curation/sequential_walk.hpp>
#include <curation/several_budgets_sequential.hpp>
#include <curation/threshold_grid.hpp>
#include <ltt/detail/level_split.hpp>
#include <ltt/fixed_sequence.hpp>
#include <ltt/pvalue.hpp>
#include <ltt/sequential_pvalue.hpp>
#include <ltt/several_budgets.hpp>

#include "../support/throws.hpp"

namespace cur = ltt::curation;

// Named, not anonymous: unit_tests is a unity build (batches of 8 files).
namespace several_budgets_sequential_test {

struct BandedPool {
  std::vector<double> scores;
  std::vector<std::uint8_t> band;
};

// N trajectories, scores on a coarse lattice (ties), bands 0..K with a band-K share that
// falls with the score, so that some steps certify and some do not.
BandedPool random_pool(std::int64_t N, std::int64_t K, std::mt19937_64& rng) {
  BandedPool p;
  std::uniform_int_distribution<int> lattice(0, 400);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const double top = 0.02 + 0.2 * unit(rng), slope = 0.4 * unit(rng);
  for (std::int64_t i = 0; i < N; ++i) {
    const double score = lattice(rng) / 400.0;
    p.scores.push_back(score);
    const double over = top + slope * (1.0 - score);  // chance of exceeding the tightest budget
    std::int64_t band = 0;
    while (band < K && unit(rng) < (band == 0 ? over : 0.6)) ++band;
    p.band.push_back(static_cast<std::uint8_t>(band));
  }
  return p;
}

void check_same_step(const cur::SequentialStep& a, const cur::SequentialStep& b) {
  CHECK(a.quantile == b.quantile);
  CHECK(a.lambda == b.lambda);
  CHECK(a.N == b.N);
  CHECK(a.null_boundary == b.null_boundary);
  CHECK(a.m == b.m);
  CHECK(a.k == b.k);
  CHECK(a.p_anytime == b.p_anytime);
  CHECK(a.p_cap == b.p_cap);
  CHECK(a.p == b.p);
  CHECK(a.rejected == b.rejected);
  CHECK(a.certified_after == b.certified_after);
}

void check_same_certificate(const cur::SequentialCertificate& x,
                            const cur::SequentialCertificate& y) {
  CHECK(x.order == y.order);
  CHECK(x.alpha == y.alpha);
  CHECK(x.delta == y.delta);
  CHECK(x.pool_size == y.pool_size);
  CHECK(x.label_cap == y.label_cap);
  CHECK(x.grid_size == y.grid_size);
  CHECK(x.merged_quantiles == y.merged_quantiles);
  REQUIRE(x.steps.size() == y.steps.size());
  for (std::size_t j = 0; j < x.steps.size(); ++j) check_same_step(x.steps[j], y.steps[j]);
  CHECK(x.labels_used == y.labels_used);
  CHECK(x.unsafe_labels == y.unsafe_labels);
  CHECK(x.depth_trace == y.depth_trace);
  CHECK(x.certified == y.certified);
  CHECK(x.certified_step == y.certified_step);
  CHECK(x.fallback == y.fallback);
  REQUIRE(x.fallback_record.has_value() == y.fallback_record.has_value());
  if (x.fallback_record) {
    CHECK(x.fallback_record->population == y.fallback_record->population);
    CHECK(x.fallback_record->unsafe_upper == y.fallback_record->unsafe_upper);
    CHECK(x.fallback_record->count == y.fallback_record->count);
  }
  CHECK(x.threshold == y.threshold);
  CHECK(x.quantile == y.quantile);
  CHECK(x.selection_size == y.selection_size);
}


TEST_CASE(
    "several_budgets_sequential: one budget is the single-budget uniform walk after every "
    "label, under both procedures") {
  std::mt19937_64 rng(7301);
  for (int pool_index = 0; pool_index < 12; ++pool_index) {
    const std::int64_t N = std::uniform_int_distribution<std::int64_t>(60, 900)(rng);
    const BandedPool pool = random_pool(N, 1, rng);
    const double alpha = std::uniform_real_distribution<double>(0.05, 0.4)(rng);
    const std::int64_t cap =
        std::uniform_int_distribution<std::int64_t>(1, std::min<std::int64_t>(N, 300))(rng);
    const double w = pool_index % 3 == 0 ? 0.0 : 0.2 + 0.1 * (pool_index % 4);
    const std::uint64_t seed = 900 + static_cast<std::uint64_t>(pool_index);
    cur::SequentialSelectionOptions single;
    single.order = cur::LabelOrder::uniform;
    single.alpha = alpha;
    single.delta = 0.1;
    single.label_cap = cap;
    single.cap_test_share = w;
    cur::apply_stop_rule("cap", single);
    for (const auto procedure :
         {ltt::BudgetProcedure::one_threshold, ltt::BudgetProcedure::one_threshold_per_budget}) {
      CAPTURE(pool_index);
      cur::SeveralBudgetsSequentialOptions options;
      options.alphas = {alpha};
      options.delta = 0.1;
      options.procedure = procedure;
      options.label_cap = cap;
      options.cap_test_share = w;
      cur::SequentialWalk one(pool.scores, single, seed);
      cur::SeveralBudgetsSequentialWalk several(pool.scores, options, seed);
      CHECK(std::ranges::equal(one.permutation(), several.permutation()));
      while (several.labels_used() < cap) {
        const std::int64_t position = *several.next_position();
        REQUIRE(one.next_position() == position);
        const std::uint8_t band = pool.band[static_cast<std::size_t>(position)];
        one.add_label(position, band == 1);
        several.add_label(position, band);
        const auto a = one.steps(), b = several.steps(0);
        REQUIRE(a.size() == b.size());
        for (std::size_t j = 0; j < a.size(); ++j) CHECK(a[j].p == b[j].p);
      }
      check_same_certificate(several.certificate().budgets[0], one.certificate());
    }
  }
}

TEST_CASE(
    "several_budgets_sequential: p_jk from its definition, the joint walk on max_k p_jk, the "
    "per-budget walks at delta / K") {
  std::mt19937_64 rng(7302);
  for (int pool_index = 0; pool_index < 8; ++pool_index) {
    CAPTURE(pool_index);
    const std::int64_t K = 2 + pool_index % 3;
    const std::int64_t N = std::uniform_int_distribution<std::int64_t>(150, 700)(rng);
    const BandedPool pool = random_pool(N, K, rng);
    std::vector<double> alphas;
    for (std::int64_t k = 0; k < K; ++k)
      alphas.push_back(std::uniform_real_distribution<double>(0.05, 0.35)(rng));
    const std::int64_t cap = std::uniform_int_distribution<std::int64_t>(40, N)(rng);
    const double w = 0.2;
    for (const auto procedure :
         {ltt::BudgetProcedure::one_threshold, ltt::BudgetProcedure::one_threshold_per_budget}) {
      cur::SeveralBudgetsSequentialOptions options;
      options.alphas = alphas;
      options.procedure = procedure;
      options.label_cap = cap;
      const std::uint64_t seed = 4000 + static_cast<std::uint64_t>(pool_index);
      const cur::SeveralBudgetsSequentialCertificate c =
          cur::several_budgets_sequential(pool.scores, pool.band, seed, options);
      REQUIRE(c.budgets.size() == static_cast<std::size_t>(K));
      const std::vector<std::int64_t> order =
          cur::draw_label_order(N, N, seed);  // the walk's permutation
      const cur::ThresholdGrid grid = cur::threshold_grid(pool.scores);
      const auto J = static_cast<std::size_t>(grid.size());
      const std::int64_t t = c.labels_used;
      CHECK(t <= cap);
      std::vector<std::int64_t> bands(static_cast<std::size_t>(K + 1), 0);
      for (std::int64_t i = 0; i < t; ++i)
        ++bands[pool.band[static_cast<std::size_t>(order[static_cast<std::size_t>(i)])]];
      CHECK(c.band_labels == bands);
      // p[j][k] from the definition: the anytime p-value of the labels in S_j in label order,
      // the cap's exact test when the run reached the cap, combined at shares 1 - w and w.
      std::vector<std::vector<double>> p(J, std::vector<double>(static_cast<std::size_t>(K)));
      for (std::size_t j = 0; j < J; ++j) {
        for (std::int64_t k = 0; k < K; ++k) {
          const double a = alphas[static_cast<std::size_t>(k)];
          auto anytime = ltt::SequentialCompositionPvalue::at_level(
              grid.selection_size[j], a, ltt::sequential_default_prior(a));
          std::int64_t m = 0, unsafe = 0;
          for (std::int64_t i = 0; i < t; ++i) {
            const auto position = static_cast<std::size_t>(order[static_cast<std::size_t>(i)]);
            if (!(pool.scores[position] >= grid.lambda[j])) continue;
            const bool over = pool.band[position] > k;
            anytime.update(over);
            ++m;
            unsafe += over;
          }
          double pj =
              ltt::detail::round_up_pvalue(anytime.pvalue() / ltt::detail::complement_share(w));
          if (t == cap)
            pj = std::min(pj,
                          ltt::detail::round_up_pvalue(
                              ltt::composition_pvalue(unsafe, m, grid.selection_size[j], a) / w));
          p[j][static_cast<std::size_t>(k)] = std::min(1.0, pj);
          const cur::SequentialStep& s = c.budgets[static_cast<std::size_t>(k)].steps[j];
          CHECK(s.m == m);
          CHECK(s.k == unsafe);
          CHECK(s.p == p[j][static_cast<std::size_t>(k)]);
        }
      }
      const auto depth_of = [&](std::int64_t k) {
        const cur::SequentialCertificate& b = c.budgets[static_cast<std::size_t>(k)];
        return b.certified ? *b.certified_step + 1 : 0;
      };
      if (procedure == ltt::BudgetProcedure::one_threshold) {
        const ltt::FixedSequenceResult walk = ltt::fixed_sequence(
            grid.size(),
            [&](std::int64_t j) {
              return ltt::intersection_union_pvalue(p[static_cast<std::size_t>(j)]);
            },
            options.delta);
        const std::int64_t depth = walk.last_rejected ? *walk.last_rejected + 1 : 0;
        for (std::int64_t k = 0; k < K; ++k) CHECK(depth_of(k) == depth);
        for (std::size_t j = 0; j < J; ++j)
          CHECK(c.joint_pvalues[j] == *std::max_element(p[j].begin(), p[j].end()));
        CHECK(c.certified == (depth > 0));
      } else {
        const double level = ltt::detail::level_share(options.delta, K);
        for (std::int64_t k = 0; k < K; ++k) {
          CHECK(c.levels[static_cast<std::size_t>(k)] == level);
          const ltt::FixedSequenceResult walk = ltt::fixed_sequence(
              grid.size(),
              [&](std::int64_t j) {
                return p[static_cast<std::size_t>(j)][static_cast<std::size_t>(k)];
              },
              level);
          CHECK(depth_of(k) == (walk.last_rejected ? *walk.last_rejected + 1 : 0));
        }
        CHECK(c.joint_pvalues.empty());
      }
      // the fallbacks are nested: a looser budget's keeps at least as many
      for (std::int64_t k = 1; k < K; ++k)
        if (c.budgets[static_cast<std::size_t>(k)].fallback &&
            c.budgets[static_cast<std::size_t>(k - 1)].fallback)
          CHECK(c.budgets[static_cast<std::size_t>(k)].selection_size >=
                c.budgets[static_cast<std::size_t>(k - 1)].selection_size);
    }
  }
}

TEST_CASE("several_budgets_sequential: stop rules and the depth trace") {
  // a clean pool (band 0 everywhere): every step certifies well before a cap of the pool size
  const std::int64_t N = 400;
  std::vector<double> scores;
  for (std::int64_t i = 0; i < N; ++i) scores.push_back(static_cast<double>(N - i));
  const std::vector<std::uint8_t> clean(static_cast<std::size_t>(N), 0);
  cur::SeveralBudgetsSequentialOptions options;
  options.alphas = {0.25, 0.2};
  options.label_cap = N;
  auto c = cur::several_budgets_sequential(scores, clean, 11, options);
  CHECK(c.reason == cur::StoppingReason::decided);
  CHECK(c.certified);
  CHECK(c.labels_used < N);
  for (const auto& b : c.budgets) {
    CHECK(*b.certified_step + 1 == b.grid_size);
    CHECK(b.depth_trace.size() == static_cast<std::size_t>(c.labels_used));
    CHECK(std::is_sorted(b.depth_trace.begin(), b.depth_trace.end()));
    CHECK(b.depth_trace.back() == b.grid_size);
    CHECK(*b.steps.back().certified_after == c.labels_used);
  }
  const std::int64_t all_steps = c.labels_used;
  options.target_step = 0;
  c = cur::several_budgets_sequential(scores, clean, 11, options);
  CHECK(c.reason == cur::StoppingReason::target_certified);
  CHECK(c.labels_used <= all_steps);
  CHECK(c.budgets[0].depth_trace.back() >= 1);
  CHECK(c.budgets[0].depth_trace[static_cast<std::size_t>(c.labels_used - 2)] == 0);
  options.target_step.reset();
  options.label_cap = 15;
  c = cur::several_budgets_sequential(scores, clean, 11, options);
  CHECK(c.reason == cur::StoppingReason::label_cap);
  CHECK(c.labels_used == 15);
  // per budget: stops once the shallower of the two budgets' walks reaches the target
  std::vector<std::uint8_t> half(static_cast<std::size_t>(N), 0);
  for (std::size_t i = 0; i < half.size(); i += 2) half[i] = 1;  // over the tightest budget
  options.procedure = ltt::BudgetProcedure::one_threshold_per_budget;
  options.label_cap = 300;
  options.target_step = 0;
  c = cur::several_budgets_sequential(scores, half, 11, options);
  CHECK(c.reason == cur::StoppingReason::label_cap);  // budget 0 (half over) never certifies
  CHECK_FALSE(c.budgets[0].certified);
  CHECK(c.budgets[1].certified);
  CHECK_FALSE(c.certified);
  CHECK(c.budgets[0].fallback_record->unsafe_upper >= 150);
}

TEST_CASE("several_budgets_sequential: argument checking names the parameter") {
  using ltt_test::check_throws_naming;
  const std::vector<double> scores{3.0, 2.0, 1.0, 0.5, 0.25};
  cur::SeveralBudgetsSequentialOptions good;
  good.alphas = {0.3, 0.2};
  good.label_cap = 5;
  const auto with = [&](auto change) {
    cur::SeveralBudgetsSequentialOptions o = good;
    change(o);
    return o;
  };
  const auto build = [&](const cur::SeveralBudgetsSequentialOptions& o) {
    return [&scores, o] { cur::SeveralBudgetsSequentialWalk w(scores, o, 1); };
  };
  check_throws_naming(build(with([](auto& o) { o.alphas.clear(); })), "alphas.size()");
  check_throws_naming(build(with([](auto& o) { o.alphas[1] = 1.0; })), "alphas[1]");
  check_throws_naming(build(with([](auto& o) { o.delta = 0.0; })), "delta");
  check_throws_naming(build(with([](auto& o) { o.label_cap = 6; })), "label_cap");
  check_throws_naming(build(with([](auto& o) { o.cap_test_share = 1.0; })), "cap_test_share");
  check_throws_naming(build(with([](auto& o) { o.target_step = 99; })), "target_step");
  check_throws_naming(build(with([](auto& o) { o.minimum_selection = -1; })), "minimum_selection");
  check_throws_naming(
      [&] {
        const std::vector<double> nan{1.0, ltt_test::not_a_number};
        cur::SeveralBudgetsSequentialWalk w(nan, good, 1);
      },
      "scores[1]");
  cur::SeveralBudgetsSequentialWalk walk(scores, good, 1);
  const std::int64_t next = *walk.next_position();
  check_throws_naming([&] { walk.add_label(next, 3); }, "band");
  check_throws_naming([&] { walk.add_label((next + 1) % 5, 0); }, "position");
  const std::vector<std::uint8_t> bands{0, 0, 3, 0, 0};
  check_throws_naming([&] { cur::several_budgets_sequential(scores, bands, 1, good); },
                      "pool_band[2]");
  check_throws_naming(
      [&] { cur::several_budgets_sequential(scores, std::vector<std::uint8_t>(4, 0), 1, good); },
      "pool_band.size()");
}

}  // namespace several_budgets_sequential_test
