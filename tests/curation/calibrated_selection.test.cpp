// Tests for include/curation/calibrated_selection.hpp: a certificate worked by hand on a
// 30-trajectory pool (p-values recomputed here from exact integer binomials), the fallback and
// the drop option on the same pool, argument checking, and a Monte Carlo check of
// Proposition "guarantee" through calibrated_selection itself on pools with known labels.

#include <curation/calibrated_selection.hpp>
#include <curation/calibration.hpp>
#include <curation/trajectory_pool.hpp>
#include <ltt/bounds.hpp>

#include <doctest/doctest.h>

#include "../support/monte_carlo.hpp"
#include "../support/throws.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

namespace cur = ltt::curation;
using Positions = std::vector<std::int64_t>;

using ltt_test::check_throws_naming;

// C(a, b) exactly; the 30-trajectory pool never needs more than C(30, 15) < 2^28.
std::int64_t binomial(std::int64_t a, std::int64_t b) {
  if (b < 0 || b > a) return 0;
  std::int64_t c = 1;
  for (std::int64_t i = 1; i <= b; ++i) c = c * (a - b + i) / i;  // exact at every step
  return c;
}

// F_hyp(k; N, U, m) = sum_{i <= k} C(U, i) C(N - U, m - i) / C(N, m), summed in integers and
// divided once.
double hypergeometric_cdf_exact(std::int64_t k, std::int64_t N, std::int64_t U, std::int64_t m) {
  std::int64_t favourable = 0;
  for (std::int64_t i = 0; i <= k; ++i) favourable += binomial(U, i) * binomial(N - U, m - i);
  return static_cast<double>(favourable) / static_cast<double>(binomial(N, m));
}

// The hand-worked pool. Trajectory of ascending score rank r (0 = lowest) sits at pool
// position 7r mod 30 (7 is prime to 30, so this is a permutation) and has id 100 + position.
// Its score is r, except that ranks 21 and 23 copy the rank below: scores 20, 20 at ranks
// 20, 21 and 22, 22 at ranks 22, 23.
struct HandPool {
  static constexpr std::int64_t N = 30;
  std::vector<double> score = std::vector<double>(N);
  std::vector<std::int64_t> id = std::vector<std::int64_t>(N);
  std::vector<std::uint8_t> unsafe = std::vector<std::uint8_t>(N);
  std::vector<std::int64_t> label_ids, label_bits;

  static std::int64_t position(std::int64_t rank) { return 7 * rank % N; }

  HandPool() {
    const std::set<std::int64_t> unsafe_ranks{0, 1, 2, 3, 4, 5, 6, 7, 9, 12, 16, 19, 22, 26};
    const std::vector<std::int64_t> calibration_ranks{1,  4,  6,  9,  12, 14, 17,
                                                      20, 22, 24, 25, 27, 28, 29};
    for (std::int64_t r = 0; r < N; ++r) {
      const auto p = static_cast<std::size_t>(position(r));
      score[p] = static_cast<double>(r == 21 || r == 23 ? r - 1 : r);
      id[p] = 100 + position(r);
      unsafe[p] = unsafe_ranks.count(r) ? 1 : 0;
    }
    // Labels in descending rank order, to exercise the reordering by pool position.
    for (auto it = calibration_ranks.rbegin(); it != calibration_ranks.rend(); ++it) {
      label_ids.push_back(100 + position(*it));
      label_bits.push_back(unsafe_ranks.count(*it) ? 1 : 0);
    }
  }

  cur::Calibration calibration() const {
    return cur::calibration_from_labels(id, label_ids, label_bits);
  }

  Positions ranks_at_least(std::int64_t lowest_rank) const {
    Positions p;
    for (std::int64_t r = lowest_rank; r < N; ++r) p.push_back(position(r));
    std::sort(p.begin(), p.end());
    return p;
  }
};

}  // namespace

// By hand. Ranks from r = floor(q * 29): 0.85 -> 24, 0.80 -> 23, 0.75 -> 21, 0.70 -> 20,
// 0.65 -> 18, 0.60 -> 17, 0.55 -> 15, ... Scores at those ranks: 24, 22, 20, 20, 18, 17, 15.
//   q     lambda  S(lambda) as ranks          N   calibration ranks in S       m  unsafe  k
//   0.85  24      24..29                      6   24 25 27 28 29               5  -       0
//   0.80  22      22..29 (22 ties with 23)    8   + 22                         6  22      1
//   0.75  20      20..29 (20 ties with 21)   10   + 20                         7  22      1
//   0.70  20      same set: merged, not a step
//   0.65  18      18..29                     12   (none new)                   7  22      1
//   0.60  17      17..29                     13   + 17                         8  22      1
//   0.55  15      15..29                     15   (none new)                   8  22      1
// alpha = 0.25: U* = floor(N / 4) + 1 = 2, 3 (8/4 = 2 exactly, so 3), 3, 4, 4, 4.
//   p_0 = F(0; 6, 2, 5)  = 0 (5 draws of 6 cannot miss both unsafe)
//   p_1 = F(1; 8, 3, 6)  = C(3,1) C(5,5) / C(8,6)             = 3/28    = 0.107
//   p_2 = F(1; 10, 3, 7) = [C(7,7) + 3 C(7,6)] / C(10,7)       = 22/120  = 0.183
//   p_3 = F(1; 12, 4, 7) = [C(8,7) + 4 C(8,6)] / C(12,7)       = 120/792 = 0.152
//   p_4 = F(1; 13, 4, 8) = [C(9,8) + 4 C(9,7)] / C(13,8)       = 153/1287 = 0.119
//   p_5 = F(1; 15, 4, 8) = [C(11,8) + 4 C(11,7)] / C(15,8)     = 1485/6435 = 0.231
// At delta = 0.2 the walk rejects steps 0..4 and stops at step 5: lambda = 17, 13 kept.
TEST_CASE("calibrated_selection: the 30-trajectory certificate, by hand") {
  const HandPool pool;
  cur::CalibratedSelectionOptions options;
  options.alpha = 0.25;
  options.delta = 0.2;
  const cur::CalibratedSelection result =
      cur::calibrated_selection(pool.score, pool.calibration(), options);
  const cur::Certificate& c = result.certificate;

  struct Expected {
    double quantile, lambda;
    std::int64_t N, m, k, U;
  };
  const std::vector<Expected> expected{{0.85, 24, 6, 5, 0, 2},  {0.80, 22, 8, 6, 1, 3},
                                       {0.75, 20, 10, 7, 1, 3}, {0.65, 18, 12, 7, 1, 4},
                                       {0.60, 17, 13, 8, 1, 4}, {0.55, 15, 15, 8, 1, 4}};
  const std::vector<double> hand_p{0.0,         3.0 / 28,     22.0 / 120,
                                   120.0 / 792, 153.0 / 1287, 1485.0 / 6435};

  CHECK(c.pool_size == 30);
  CHECK(c.calibration_size == 14);
  CHECK(c.calibration_unsafe == 6);
  CHECK(c.grid_size == 11);  // 12 quantiles, 0.70 merged into 0.75
  CHECK(c.merged_quantiles == std::vector<double>{0.70});
  REQUIRE(c.steps.size() == expected.size());
  for (std::size_t j = 0; j < expected.size(); ++j) {
    CAPTURE(j);
    const cur::CertificateStep& s = c.steps[j];
    const Expected& e = expected[j];
    CHECK(s.quantile == e.quantile);
    CHECK(s.lambda == e.lambda);
    CHECK(s.N == e.N);
    CHECK(s.m == e.m);
    CHECK(s.k == e.k);
    CHECK(s.null_boundary == e.U);
    const double exact = hypergeometric_cdf_exact(e.k, e.N, e.U, e.m);
    CHECK(exact == doctest::Approx(hand_p[j]).epsilon(1e-15));
    // composition p-values are rounded up by at most 4e-14 relative, never down.
    CHECK(s.p >= exact);
    CHECK(s.p <= exact * (1 + 1e-13));
    CHECK(s.rejected == (j < 5));
  }
  CHECK(c.certified);
  CHECK_FALSE(c.fallback);
  CHECK_FALSE(c.fallback_record.has_value());
  REQUIRE(c.certified_step.has_value());
  CHECK(*c.certified_step == 4);
  CHECK(c.threshold == 17.0);
  CHECK(c.quantile == 0.60);
  CHECK(c.threshold_set_size == 13);
  CHECK(c.dropped == 0);
  CHECK(c.selection_size == 13);
  CHECK(result.selected == pool.ranks_at_least(17));
}

TEST_CASE("calibrated_selection: dropping calibration trajectories labeled unsafe") {
  const HandPool pool;
  cur::CalibratedSelectionOptions options;
  options.alpha = 0.25;
  options.delta = 0.2;
  options.drop_unsafe_calibration = true;
  const auto result = cur::calibrated_selection(pool.score, pool.calibration(), options);
  const cur::Certificate& c = result.certificate;
  // The certificate is the same walk; only the delivered selection changes. The one labeled
  // unsafe calibration trajectory in ranks 17..29 is rank 22.
  CHECK(*c.certified_step == 4);
  CHECK(c.threshold_set_size == 13);
  CHECK(c.dropped == 1);
  CHECK(c.selection_size == 12);
  Positions want = pool.ranks_at_least(17);
  want.erase(std::find(want.begin(), want.end(), HandPool::position(22)));
  CHECK(result.selected == want);
  // The composition only improves: 3 unsafe of 13 before, 2 of 12 after.
  CHECK(cur::unsafe_fraction(pool.unsafe, pool.ranks_at_least(17)) == doctest::Approx(3.0 / 13));
  CHECK(cur::unsafe_fraction(pool.unsafe, result.selected) == doctest::Approx(2.0 / 12));
}

// alpha = 0.1: U*_0 = floor(0.6) + 1 = 1, and p_0 = F(0; 6, 1, 5) = C(5,5)/C(6,5) = 1/6 > 0.1:
// refused at the first step. Fallback: 8 of the 14 labels are safe; the one-sided
// Clopper-Pearson lower bound at delta = 0.1 is L = 0.36913 (checked below by bisection on the
// exact binomial tail), and floor(30 L) = 11.
TEST_CASE("calibrated_selection: refusal and the uncertified fallback, by hand") {
  const HandPool pool;
  cur::CalibratedSelectionOptions options;
  options.alpha = 0.1;
  options.delta = 0.1;
  options.minimum_selection = 5;
  const auto result = cur::calibrated_selection(pool.score, pool.calibration(), options);
  const cur::Certificate& c = result.certificate;
  REQUIRE(c.steps.size() == 1);
  CHECK(c.steps[0].N == 6);
  CHECK(c.steps[0].m == 5);
  CHECK(c.steps[0].k == 0);
  CHECK(c.steps[0].null_boundary == 1);
  CHECK(c.steps[0].p == doctest::Approx(1.0 / 6).epsilon(1e-13));
  CHECK_FALSE(c.steps[0].rejected);
  CHECK_FALSE(c.certified);
  CHECK(c.fallback);
  CHECK_FALSE(c.certified_step.has_value());
  REQUIRE(c.fallback_record.has_value());
  const cur::FallbackRecord& f = *c.fallback_record;
  CHECK(f.labels == 14);
  CHECK(f.safe_labels == 8);
  // P[Bin(14, L) >= 8] = 0.1, by bisection on the exact tail.
  auto upper_tail = [](double p) {
    double t = 0;
    for (int i = 8; i <= 14; ++i)
      t += static_cast<double>(binomial(14, i)) * std::pow(p, i) * std::pow(1 - p, 14 - i);
    return t;
  };
  double lo = 0, hi = 1;
  for (int it = 0; it < 100; ++it) (upper_tail((lo + hi) / 2) < 0.1 ? lo : hi) = (lo + hi) / 2;
  CHECK(f.safe_mass_lower == doctest::Approx(lo).epsilon(1e-9));
  CHECK(f.safe_mass_lower == doctest::Approx(0.36913).epsilon(1e-4));
  CHECK(f.minimum_selection == 5);
  CHECK(f.count == 11);
  CHECK(c.threshold == 19.0);  // the 11th largest score, rank 19
  CHECK(c.quantile == doctest::Approx(1.0 - 11.0 / 30));
  CHECK(c.selection_size == 11);
  CHECK(result.selected == pool.ranks_at_least(19));

  // The minimum selection wins when L N is smaller, and is capped at the pool size.
  options.minimum_selection = 12;
  CHECK(cur::calibrated_selection(pool.score, pool.calibration(), options)
            .certificate.selection_size == 12);
  options.minimum_selection = 50;  // the paper's default, above N = 30
  const auto capped = cur::calibrated_selection(pool.score, pool.calibration(), options);
  CHECK(capped.certificate.fallback_record->count == 30);
  CHECK(capped.selected.size() == 30);

  // A count that lands inside a tie keeps the whole tie. With every label unsafe, L = 0 and
  // K = the minimum, 9; the 9th largest score is 20 (ranks 20 and 21 tie), so 10 are kept.
  Positions labeled = pool.calibration().index;
  const cur::Calibration all_unsafe{labeled, std::vector<std::uint8_t>(labeled.size(), 1)};
  options.minimum_selection = 9;
  const auto tied = cur::calibrated_selection(pool.score, all_unsafe, options);
  CHECK_FALSE(tied.certificate.certified);
  CHECK(tied.certificate.steps[0].p == 1.0);
  CHECK(tied.certificate.fallback_record->safe_mass_lower == 0.0);
  CHECK(tied.certificate.fallback_record->count == 9);
  CHECK(tied.certificate.threshold == 20.0);
  CHECK(tied.certificate.threshold_set_size == 10);
  CHECK(tied.selected == pool.ranks_at_least(20));
}

TEST_CASE("uncertified_fallback: floor(L N), the minimum, and the cap") {
  const double L = ltt::clopper_pearson_lower(180, 200, 0.1);
  const auto f = cur::uncertified_fallback(1000, 180, 200, 0.1, 50);
  CHECK(f.safe_mass_lower == L);
  CHECK(f.count == static_cast<std::int64_t>(std::floor(L * 1000)));
  CHECK(cur::uncertified_fallback(1000, 0, 200, 0.1, 50).count == 50);
  CHECK(cur::uncertified_fallback(20, 0, 10, 0.1, 50).count == 20);
  CHECK(cur::uncertified_fallback(1000, 0, 200, 0.1, 0).count == 0);
}

TEST_CASE("calibration_counts and composition_walk are the pieces of calibrated_selection") {
  const HandPool pool;
  const auto grid = cur::threshold_grid(pool.score);
  const auto counts = cur::calibration_counts(grid, pool.score, pool.calibration());
  CHECK(counts.m == Positions{5, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11});
  CHECK(counts.k == Positions{0, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3});
  const auto steps = cur::composition_walk(grid, counts, 0.25, 0.2);
  CHECK(steps.size() == 6);
  // At delta = 0.25 the walk also passes 0.55 (p = 0.231), 0.50 and 0.45, and stops at 0.40.
  const auto longer = cur::composition_walk(grid, counts, 0.25, 0.25);
  REQUIRE(longer.size() == 9);
  CHECK(longer[7].rejected);
  CHECK_FALSE(longer[8].rejected);
  CHECK(longer[8].quantile == 0.40);
}

TEST_CASE("calibrated_selection: a calibration sample of the whole pool certifies a clean top") {
  // Proposition "dichotomy" (ii): at n = N, m_1 = N_1 and k_1 = U_1, so p_1 = 0 when U_1 <= alpha
  // N_1.
  std::vector<double> score(100);
  std::iota(score.begin(), score.end(), 0.0);
  std::vector<std::uint8_t> unsafe(100, 0);
  for (int i = 0; i < 50; ++i) unsafe[static_cast<std::size_t>(i)] = 1;  // the bottom half
  Positions all(100);
  std::iota(all.begin(), all.end(), std::int64_t{0});
  const auto r = cur::calibrated_selection(score, cur::label_calibration(all, unsafe));
  CHECK(r.certificate.certified);
  CHECK(r.certificate.steps[0].p == 0.0);
  // Every k_j is then U_j, so p_j is 0 or 1 and the walk certifies exactly while S(lambda_j)
  // holds at most alpha N_j unsafe: through the 0.35 quantile (16 of 66), not 0.30 (21 of 71).
  REQUIRE(r.certificate.certified_step.has_value());
  CHECK(r.certificate.steps[static_cast<std::size_t>(*r.certificate.certified_step)].quantile ==
        0.35);
  for (const auto& s : r.certificate.steps) {
    const double fraction = cur::unsafe_fraction(unsafe, cur::selection_at(score, s.lambda));
    CHECK(s.rejected == (fraction <= 0.25));
  }
}

TEST_CASE("calibrated_selection: invalid input names the parameter") {
  const HandPool pool;
  const cur::Calibration cal = pool.calibration();
  cur::CalibratedSelectionOptions options;

  std::vector<double> nan_score = pool.score;
  nan_score[3] = std::numeric_limits<double>::quiet_NaN();
  check_throws_naming([&] { cur::calibrated_selection(nan_score, cal); }, "scores[3]");
  check_throws_naming([&] { cur::calibrated_selection(std::vector<double>{}, cal); },
                      "scores.size()");

  for (const double bad : {0.0, 1.0, -0.1, 1.5, std::numeric_limits<double>::quiet_NaN()}) {
    options = {};
    options.alpha = bad;
    check_throws_naming([&] { cur::calibrated_selection(pool.score, cal, options); }, "alpha");
    options = {};
    options.delta = bad;
    check_throws_naming([&] { cur::calibrated_selection(pool.score, cal, options); }, "delta");
  }
  options = {};
  options.minimum_selection = -1;
  check_throws_naming([&] { cur::calibrated_selection(pool.score, cal, options); },
                      "minimum_selection");
  options = {};
  options.quantiles = {0.5, 0.6};
  check_throws_naming([&] { cur::calibrated_selection(pool.score, cal, options); }, "quantiles[1]");

  cur::Calibration duplicate = cal;
  duplicate.index[1] = duplicate.index[0];
  check_throws_naming([&] { cur::calibrated_selection(pool.score, duplicate); },
                      "calibration.index");
  cur::Calibration out_of_pool = cal;
  out_of_pool.index[2] = 30;
  check_throws_naming([&] { cur::calibrated_selection(pool.score, out_of_pool); },
                      "calibration.index[2]");
  cur::Calibration not_a_bit = cal;
  not_a_bit.unsafe[4] = 2;
  check_throws_naming([&] { cur::calibrated_selection(pool.score, not_a_bit); },
                      "calibration.unsafe[4]");
  check_throws_naming([&] { cur::calibrated_selection(pool.score, cur::Calibration{}); },
                      "calibration.index.size()");
  Positions all(31);
  std::iota(all.begin(), all.end(), std::int64_t{0});
  const cur::Calibration too_big{all, std::vector<std::uint8_t>(31, 0)};
  check_throws_naming([&] { cur::calibrated_selection(pool.score, too_big); },
                      "calibration.index.size()");
  cur::Calibration mismatched = cal;
  mismatched.unsafe.pop_back();
  check_throws_naming([&] { cur::calibrated_selection(pool.score, mismatched); },
                      "calibration.unsafe.size()");

  const auto grid = cur::threshold_grid(pool.score);
  check_throws_naming([&] { cur::composition_walk(grid, cur::CalibrationCounts{}, 0.25, 0.1); },
                      "counts.m.size()");
  check_throws_naming([&] { cur::calibration_counts(grid, std::vector<double>(29, 0.0), cal); },
                      "scores.size()");
}

namespace {

// Monte Carlo of Proposition "guarantee" through calibrated_selection: draws calibration
// samples uniformly, labels them from the pool's truth, and counts false certifications
// (certified and the delivered selection's true unsafe fraction above alpha).
struct FalseCertification {
  std::int64_t draws = 0, certified = 0, false_certified = 0;
};

FalseCertification simulate(const std::vector<double>& score,
                            const std::vector<std::uint8_t>& unsafe, std::int64_t n,
                            const cur::CalibratedSelectionOptions& options, std::int64_t draws,
                            std::uint64_t seed) {
  FalseCertification f;
  f.draws = draws;
  for (std::int64_t d = 0; d < draws; ++d) {
    const auto index = cur::draw_calibration(static_cast<std::int64_t>(score.size()), n,
                                             seed + static_cast<std::uint64_t>(d));
    const auto r = cur::calibrated_selection(score, cur::label_calibration(index, unsafe), options);
    if (!r.certificate.certified) continue;
    ++f.certified;
    f.false_certified += cur::unsafe_fraction(unsafe, r.selected) > options.alpha;
  }
  return f;
}

}  // namespace

// Verdict: the Clopper-Pearson lower limit at level 1e-3 on the false-certification rate must not
// exceed delta. A correct procedure fails this with probability below 1e-3; the pools are built
// so the rate sits close to delta, where an off-by-one in U* or a walk that skips a failure shows.
TEST_CASE("calibrated_selection: false certification at most delta (Monte Carlo)") {
  constexpr std::int64_t N = 1000, n = 200, full_draws = 6000;
  constexpr std::int64_t draws = ltt_test::monte_carlo_draws(full_draws);
  std::vector<double> score(N);
  for (std::int64_t i = 0; i < N; ++i)
    score[static_cast<std::size_t>(i)] = static_cast<double>((i * 7919) % N);
  cur::CalibratedSelectionOptions options;  // alpha = 0.25, delta = 0.1, the paper's grid

  SUBCASE("every selection a boundary null: U(top t) = floor(t / 4) + 1") {
    // Descending rank t = 1, 2, ... is unsafe when floor(t/4) + 1 steps up (t = 1, 4, 8, ...),
    // so every S(lambda_j) holds exactly U*_j unsafe: any certification is false, and the rate
    // is Pr[p_1 <= delta], as close to delta as the discreteness of the test allows.
    std::vector<std::uint8_t> unsafe(N, 0);
    for (std::int64_t i = 0; i < N; ++i) {
      const std::int64_t t =
          N - static_cast<std::int64_t>(score[static_cast<std::size_t>(i)]);  // 1 = top
      unsafe[static_cast<std::size_t>(i)] = (t == 1 || t % 4 == 0) ? 1 : 0;
    }
    const auto f = simulate(score, unsafe, n, options, draws, 1000);
    MESSAGE("boundary pool: certified " << f.certified << " of " << f.draws << ", false "
                                        << f.false_certified);
    CHECK(f.false_certified == f.certified);
    CHECK(ltt::clopper_pearson_lower(f.false_certified, f.draws, 1e-3) <= options.delta);
    // the pool does reach the boundary: more than one draw in 50 certifies (falsely)
    CHECK(ltt_test::rate_above(f.false_certified, f.draws, full_draws, 1.0 / 50));
  }

  SUBCASE("non-monotone: clean top, a contaminated middle, clean again below") {
    // Top 150 one in ten unsafe, ranks 151..300 one in two, the rest clean: S(lambda_j) holds
    // 10% and 20% unsafe at 0.85 and 0.80, 26%, 30% and 26% at 0.75, 0.70 and 0.65 (true
    // nulls), and 22% and less from 0.60 down. The walk must reject the true nulls to get past
    // them, and each is a chance of at most delta to stop wrongly on one.
    std::vector<std::uint8_t> unsafe(N, 0);
    for (std::int64_t i = 0; i < N; ++i) {
      const std::int64_t t = N - static_cast<std::int64_t>(score[static_cast<std::size_t>(i)]);
      unsafe[static_cast<std::size_t>(i)] =
          (t <= 150 && t % 10 == 0) || (t > 150 && t <= 300 && t % 2 == 0);
    }
    options.drop_unsafe_calibration = false;
    const auto f = simulate(score, unsafe, n, options, draws, 50000);
    MESSAGE("non-monotone pool: certified " << f.certified << " of " << f.draws << ", false "
                                            << f.false_certified);
    CHECK(ltt::clopper_pearson_lower(f.false_certified, f.draws, 1e-3) <= options.delta);
    CHECK(ltt_test::rate_above(f.certified, f.draws, full_draws, 0.5));
  }

  SUBCASE("with drop_unsafe_calibration the delivered selection is no worse") {
    std::vector<std::uint8_t> unsafe(N, 0);
    for (std::int64_t i = 0; i < N; ++i) {
      const std::int64_t t = N - static_cast<std::int64_t>(score[static_cast<std::size_t>(i)]);
      unsafe[static_cast<std::size_t>(i)] = (t == 1 || t % 4 == 0) ? 1 : 0;
    }
    options.drop_unsafe_calibration = true;
    const auto f = simulate(score, unsafe, n, options, draws / 2, 90000);
    MESSAGE("boundary pool, drop on: certified " << f.certified << " of " << f.draws << ", false "
                                                 << f.false_certified);
    CHECK(ltt::clopper_pearson_lower(f.false_certified, f.draws, 1e-3) <= options.delta);
  }
}
