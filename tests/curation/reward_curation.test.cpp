// Tests for include/curation/reward_curation.hpp: the gate (certified, overridden, refused),
// the top half by return with ties, the resampling weights by hand, and the resample itself
// (size, support, seed, frequencies, the corollary's bound).

#include <curation/calibrated_selection.hpp>
#include <curation/reward_curation.hpp>
#include <ltt/bounds.hpp>

#include <doctest/doctest.h>

#include "../support/throws.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

namespace cur = ltt::curation;
using Positions = std::vector<std::int64_t>;

using ltt_test::check_throws_naming;

// A selection of pool positions {1, 3, 4, 6, 8} out of 10, certified or not at alpha = 0.25.
cur::CalibratedSelection selection(bool certified) {
  cur::CalibratedSelection s;
  s.certificate.alpha = 0.25;
  s.certificate.delta = 0.1;
  s.certificate.pool_size = 10;
  s.certificate.certified = certified;
  s.certificate.fallback = !certified;
  s.selected = {1, 3, 4, 6, 8};
  return s;
}

const std::vector<double> returns{9, 50, 0, 10, 40, 0, 30, 0, 20, 0};  // S holds 50, 10, 40, 30, 20

}  // namespace

TEST_CASE("top_return_subselection: the top half of a certified selection") {
  const auto r = cur::top_return_subselection(selection(true), returns);
  CHECK(r.outcome == cur::GateOutcome::certified);
  CHECK(r.count == 3);  // ceil(5 / 2)
  CHECK(r.return_threshold == 30);
  CHECK(r.selected == Positions{1, 4, 6});
}

TEST_CASE("top_return_subselection: ties with the last one kept are kept") {
  std::vector<double> tied = returns;
  tied[8] = 30;  // S now holds 50, 10, 40, 30, 30
  CHECK(cur::top_return_subselection(selection(true), tied).selected == Positions{1, 4, 6, 8});
  CHECK(cur::top_return_subselection(selection(true), returns, 0.2).selected == Positions{1});
  CHECK(cur::top_return_subselection(selection(true), returns, 1.0).selected ==
        selection(true).selected);
}

TEST_CASE("the gate: refused unless certified or explicitly overridden") {
  const auto refused = cur::top_return_subselection(selection(false), returns);
  CHECK(refused.outcome == cur::GateOutcome::refused);
  CHECK(refused.selected == selection(false).selected);
  const auto overridden = cur::top_return_subselection(selection(false), returns, 0.5,
                                                       cur::GateOverride::allow_uncertified);
  CHECK(overridden.outcome == cur::GateOutcome::overridden);
  CHECK(overridden.selected == Positions{1, 4, 6});
  // The override changes nothing on a certified selection.
  CHECK(cur::top_return_subselection(selection(true), returns, 0.5,
                                     cur::GateOverride::allow_uncertified)
            .outcome == cur::GateOutcome::certified);

  const auto r_refused = cur::return_weighted_resample(selection(false), returns, 2.0, 1);
  CHECK(r_refused.outcome == cur::GateOutcome::refused);
  CHECK(r_refused.resampled == selection(false).selected);
  CHECK(r_refused.probability.empty());
  CHECK_FALSE(r_refused.unsafe_mass_bound.has_value());
  const auto r_over = cur::return_weighted_resample(selection(false), returns, 2.0, 1,
                                                    cur::GateOverride::allow_uncertified);
  CHECK(r_over.outcome == cur::GateOutcome::overridden);
  CHECK(r_over.resampled.size() == 5);
  CHECK_FALSE(r_over.unsafe_mass_bound.has_value());  // no certificate, no corollary
}

TEST_CASE("return_weights: exp(clip(z, -kappa, kappa)), population sd, by hand") {
  // R = 0, 1, 2: mean 1, population sd sqrt(2/3), z = -1.2247, 0, 1.2247.
  const std::vector<double> R{0, 1, 2};
  const auto w1 = cur::return_weights(R, 1.0);  // clipped to -1, 0, 1
  const double t1 = std::exp(-1.0) + 1.0 + std::exp(1.0);
  CHECK(w1[0] == doctest::Approx(std::exp(-1.0) / t1));
  CHECK(w1[1] == doctest::Approx(1.0 / t1));
  CHECK(w1[2] == doctest::Approx(std::exp(1.0) / t1));
  const double z = std::sqrt(1.5);
  const auto w2 = cur::return_weights(R, 2.0);  // not clipped
  const double t2 = std::exp(-z) + 1.0 + std::exp(z);
  CHECK(w2[0] == doctest::Approx(std::exp(-z) / t2));
  CHECK(w2[2] == doctest::Approx(std::exp(z) / t2));
  // sd = 0 and kappa = 0 are uniform.
  for (const double w : cur::return_weights(std::vector<double>{4, 4, 4, 4}, 2.0)) CHECK(w == 0.25);
  for (const double w : cur::return_weights(R, 0.0)) CHECK(w == doctest::Approx(1.0 / 3));
  CHECK(cur::return_weights(std::vector<double>{7}, 2.0) == std::vector<double>{1.0});
  CHECK(cur::return_weights(std::vector<double>{}, 2.0).empty());
  // Huge returns and kappa: no overflow.
  const auto big = cur::return_weights(std::vector<double>{-1e300, 1e300}, 1000.0);
  CHECK(big[0] + big[1] == doctest::Approx(1.0));
  CHECK(big[1] == doctest::Approx(1.0 / (1.0 + std::exp(-2.0))));  // z = -1, +1
}

TEST_CASE("return_weighted_resample: size, support, seed, frequencies, corollary bound") {
  const auto s = selection(true);
  const auto r = cur::return_weighted_resample(s, returns, 2.0, 77);
  CHECK(r.outcome == cur::GateOutcome::certified);
  CHECK(r.selection == s.selected);
  CHECK(r.resampled.size() == s.selected.size());
  CHECK(std::is_sorted(r.resampled.begin(), r.resampled.end()));
  for (const auto i : r.resampled)
    CHECK(std::binary_search(s.selected.begin(), s.selected.end(), i));
  CHECK(r.resampled == cur::return_weighted_resample(s, returns, 2.0, 77).resampled);
  REQUIRE(r.unsafe_mass_bound.has_value());
  CHECK(*r.unsafe_mass_bound == ltt::resampled_unsafe_bound(0.25, 2.0));
  std::vector<double> R;
  for (const auto i : s.selected) R.push_back(returns[static_cast<std::size_t>(i)]);
  CHECK(r.probability == cur::return_weights(R, 2.0));

  // Frequencies over many seeds match the probabilities (Clopper-Pearson, level 1e-5 each).
  std::vector<std::int64_t> count(s.selected.size(), 0);
  constexpr std::int64_t seeds = 4000;
  for (std::int64_t seed = 0; seed < seeds; ++seed)
    for (const auto i :
         cur::return_weighted_resample(s, returns, 2.0, static_cast<std::uint64_t>(seed)).resampled)
      ++count[static_cast<std::size_t>(std::find(s.selected.begin(), s.selected.end(), i) -
                                       s.selected.begin())];
  const std::int64_t total = seeds * static_cast<std::int64_t>(s.selected.size());
  for (std::size_t i = 0; i < count.size(); ++i) {
    CAPTURE(i);
    CHECK(ltt::clopper_pearson_lower(count[i], total, 1e-5) <= r.probability[i]);
    CHECK(ltt::clopper_pearson_upper(count[i], total, 1e-5) >= r.probability[i]);
  }
}

TEST_CASE("reward curation: invalid input names the parameter") {
  const auto s = selection(true);
  check_throws_naming([&] { cur::return_weighted_resample(s, returns, -1.0, 1); }, "kappa");
  check_throws_naming(
      [&] {
        cur::return_weighted_resample(s, returns, std::numeric_limits<double>::quiet_NaN(), 1);
      },
      "kappa");
  check_throws_naming([&] { cur::top_return_subselection(s, std::vector<double>(9, 0.0)); },
                      "episodic_return.size()");
  std::vector<double> nan_return = returns;
  nan_return[4] = std::numeric_limits<double>::quiet_NaN();
  check_throws_naming([&] { cur::top_return_subselection(s, nan_return); }, "episodic_return[4]");
  nan_return = returns;
  nan_return[5] = std::numeric_limits<double>::quiet_NaN();  // outside the selection: unread
  CHECK_NOTHROW(cur::top_return_subselection(s, nan_return));
  check_throws_naming([&] { cur::top_return_subselection(s, returns, 0.0); }, "fraction");
  check_throws_naming(
      [&] {
        cur::return_weights(std::vector<double>{1, std::numeric_limits<double>::infinity()}, 1.0);
      },
      "returns[1]");
}
