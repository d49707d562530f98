// Tests for include/curation/preference_pairs.hpp: parents from the cost quartiles, segments
// inside their parents, labels from segment costs, ties skipped, the two labeler models, the
// seed, and argument checking.

#include <curation/preference_pairs.hpp>
#include <ltt/bounds.hpp>

#include <doctest/doctest.h>

#include "../support/throws.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

namespace cur = ltt::curation;

using ltt_test::check_throws_naming;

// Trajectories back to back: per-step cost c_i(t) = level_i * (t % 3 == 0), length len_i.
struct Steps {
  std::vector<double> cost;
  std::vector<std::int64_t> offsets{0};
  void add(std::int64_t length, double level) {
    for (std::int64_t t = 0; t < length; ++t) cost.push_back(t % 3 == 0 ? level : 0.0);
    offsets.push_back(static_cast<std::int64_t>(cost.size()));
  }
  double segment_cost(const cur::Segment& s) const {
    const auto first =
        static_cast<std::size_t>(offsets[static_cast<std::size_t>(s.trajectory)] + s.offset);
    return std::accumulate(cost.begin() + static_cast<std::ptrdiff_t>(first),
                           cost.begin() + static_cast<std::ptrdiff_t>(first) + 30, 0.0);
  }
};

// 20 trajectories with levels 0..19 (episodic cost grows with the level), lengths 40..97, plus
// two too short to be parents (level 100, length 29).
Steps twenty() {
  Steps s;
  for (std::int64_t i = 0; i < 20; ++i) s.add(40 + 3 * i, static_cast<double>(i));
  s.add(29, 100.0);
  s.add(10, 100.0);
  return s;
}

}  // namespace

TEST_CASE("sample_preference_pairs: quartile parents, segments inside, labels by segment cost") {
  const Steps s = twenty();
  cur::PreferencePairOptions o;
  o.pairs = 500;
  o.seed = 3;
  const auto r = cur::sample_preference_pairs(s.cost, s.offsets, o);
  CHECK(r.eligible == 20);
  CHECK(r.quartile_size == 5);
  REQUIRE(r.pairs.size() == 500);
  CHECK(r.label_errors == 0);
  CHECK(r.attempts == 500 + r.ties_skipped);
  std::int64_t low_first = 0;
  for (const auto& p : r.pairs) {
    const auto a = p.first.trajectory, b = p.second.trajectory;
    // Episodic cost orders trajectories by level here: bottom quartile 0..4, top 15..19.
    const bool a_low = a <= 4, b_low = b <= 4;
    CHECK(a_low != b_low);
    CHECK((a_low ? b : a) >= 15);
    CHECK((a_low ? b : a) <= 19);
    low_first += a_low;
    for (const cur::Segment& seg : {p.first, p.second}) {
      CHECK(seg.offset >= 0);
      CHECK(seg.offset + 30 <= s.offsets[static_cast<std::size_t>(seg.trajectory) + 1] -
                                   s.offsets[static_cast<std::size_t>(seg.trajectory)]);
      CHECK(seg.cost == s.segment_cost(seg));
    }
    CHECK(p.first.cost != p.second.cost);
    CHECK(p.first_preferred == (p.first.cost < p.second.cost));
    CHECK_FALSE(p.label_error);
  }
  // The side of the low-cost parent is a fair coin.
  CHECK(ltt::clopper_pearson_lower(low_first, 500, 1e-4) <= 0.5);
  CHECK(ltt::clopper_pearson_upper(low_first, 500, 1e-4) >= 0.5);
  // Same seed, same pairs.
  const auto again = cur::sample_preference_pairs(s.cost, s.offsets, o);
  REQUIRE(again.pairs.size() == r.pairs.size());
  for (std::size_t i = 0; i < r.pairs.size(); ++i) {
    CHECK(again.pairs[i].first.trajectory == r.pairs[i].first.trajectory);
    CHECK(again.pairs[i].first.offset == r.pairs[i].first.offset);
    CHECK(again.pairs[i].second.offset == r.pairs[i].second.offset);
  }
}

TEST_CASE("sample_preference_pairs: ties are skipped; a pool of equal costs yields none") {
  Steps s;
  for (int i = 0; i < 8; ++i) s.add(60, 0.0);
  cur::PreferencePairOptions o;
  o.pairs = 10;
  o.max_attempts = 200;
  const auto r = cur::sample_preference_pairs(s.cost, s.offsets, o);
  CHECK(r.pairs.empty());
  CHECK(r.attempts == 200);
  CHECK(r.ties_skipped == 200);
}

TEST_CASE("sample_preference_pairs: label-flip noise") {
  const Steps s = twenty();
  cur::PreferencePairOptions o;
  o.pairs = 300;
  o.flip_probability = 1.0;
  const auto all = cur::sample_preference_pairs(s.cost, s.offsets, o);
  CHECK(all.label_errors == 300);
  for (const auto& p : all.pairs) CHECK(p.first_preferred == (p.first.cost > p.second.cost));
  o.flip_probability = 0.3;
  o.pairs = 4000;
  const auto some = cur::sample_preference_pairs(s.cost, s.offsets, o);
  CHECK(ltt::clopper_pearson_lower(some.label_errors, 4000, 1e-5) <= 0.3);
  CHECK(ltt::clopper_pearson_upper(some.label_errors, 4000, 1e-5) >= 0.3);
}

TEST_CASE("sample_preference_pairs: Boltzmann labeler, P(prefer safer) = logistic(gap / T)") {
  // Two parents per quartile side with constant per-step costs 0 and 1: every segment pair has
  // cost gap 30, so with T = 30 the safer one is preferred with probability logistic(1).
  Steps s;
  for (int i = 0; i < 4; ++i) {
    s.add(0, 0.0);
    s.cost.resize(s.cost.size() + 40, i < 2 ? 0.0 : 1.0);
    s.offsets.back() = static_cast<std::int64_t>(s.cost.size());
  }
  cur::PreferencePairOptions o;
  o.pairs = 5000;
  o.boltzmann_temperature = 30.0;
  const auto r = cur::sample_preference_pairs(s.cost, s.offsets, o);
  REQUIRE(r.pairs.size() == 5000);
  CHECK(r.quartile_size == 1);
  const double p_error = 1.0 - 1.0 / (1.0 + std::exp(-1.0));
  CHECK(ltt::clopper_pearson_lower(r.label_errors, 5000, 1e-5) <= p_error);
  CHECK(ltt::clopper_pearson_upper(r.label_errors, 5000, 1e-5) >= p_error);
  // A cold labeler is exact.
  o.boltzmann_temperature = 0.01;
  CHECK(cur::sample_preference_pairs(s.cost, s.offsets, o).label_errors == 0);
}

TEST_CASE("sample_preference_pairs: invalid input names the parameter") {
  const Steps s = twenty();
  cur::PreferencePairOptions o;
  o.segment_length = 0;
  check_throws_naming([&] { cur::sample_preference_pairs(s.cost, s.offsets, o); },
                      "segment_length");
  o = {};
  o.flip_probability = 1.5;
  check_throws_naming([&] { cur::sample_preference_pairs(s.cost, s.offsets, o); },
                      "flip_probability");
  o = {};
  o.boltzmann_temperature = 0.0;
  check_throws_naming([&] { cur::sample_preference_pairs(s.cost, s.offsets, o); },
                      "boltzmann_temperature");
  o = {};
  o.pairs = -1;
  check_throws_naming([&] { cur::sample_preference_pairs(s.cost, s.offsets, o); }, "pairs");
  o = {};
  o.segment_length = 98;  // longer than every trajectory
  check_throws_naming([&] { cur::sample_preference_pairs(s.cost, s.offsets, o); }, "offsets");
  std::vector<double> nan_cost = s.cost;
  nan_cost[7] = std::numeric_limits<double>::quiet_NaN();
  check_throws_naming([&] { cur::sample_preference_pairs(nan_cost, s.offsets, {}); },
                      "step_costs[7]");
  std::vector<std::int64_t> bad = s.offsets;
  bad.back() += 1;
  check_throws_naming([&] { cur::sample_preference_pairs(s.cost, bad, {}); }, "offsets[22]");
}
