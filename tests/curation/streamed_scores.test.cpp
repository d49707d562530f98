// Tests for include/curation/streamed_scores.hpp: the streamed scores are trajectory_scores of
// the same values, compared bit for bit, for every aggregator and for blocks of 1 row, of
// random sizes, and of the whole table at once; the overflow rescue of the mean across block
// boundaries; a dropped tail; argument checks.

#include <curation/score_aggregation.hpp>
#include <curation/streamed_scores.hpp>

#include <doctest/doctest.h>

#include "../support/throws.hpp"

#include <bit>
#include <cstdint>
#include <limits>
#include <random>
#include <span>
#include <stdexcept>
#include <vector>

namespace {

namespace cur = ltt::curation;
using ltt_test::check_throws_naming;

// Feeds `values` in blocks drawn by `block` (a size in [1, ...]) and returns the scores.
template <class Block>
std::vector<double> streamed(const std::vector<double>& values,
                             const std::vector<std::int64_t>& offsets, const cur::Aggregator& a,
                             Block block) {
  cur::TrajectoryScoreStream stream(offsets, a);
  std::size_t at = 0;
  while (at < values.size()) {
    const std::size_t n = std::min<std::size_t>(block(), values.size() - at);
    stream.add(std::span<const double>(values).subspan(at, n));
    at += n;
  }
  return stream.scores();
}

// The count of scores whose bits differ from the reference.
int differing_bits(const std::vector<double>& a, const std::vector<double>& b) {
  REQUIRE(a.size() == b.size());
  int differ = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    differ += std::bit_cast<std::uint64_t>(a[i]) != std::bit_cast<std::uint64_t>(b[i]);
  return differ;
}

}  // namespace

TEST_CASE("TrajectoryScoreStream: trajectory_scores bit for bit, for any blocks") {
  std::mt19937_64 rng(25);
  std::uniform_int_distribution<std::int64_t> length(1, 300);
  std::normal_distribution<double> value(0.0, 3.0);
  std::vector<std::int64_t> offsets{0};
  for (int i = 0; i < 200; ++i) offsets.push_back(offsets.back() + length(rng));
  std::vector<double> values(static_cast<std::size_t>(offsets.back()));
  // Magnitudes spread over many binades, so a different summation order would show.
  for (double& v : values) v = std::ldexp(value(rng), static_cast<int>(rng() % 40) - 20);
  const cur::Aggregator aggregators[] = {{cur::Aggregation::mean},
                                         {cur::Aggregation::minimum},
                                         {cur::Aggregation::percentile, 10.0},
                                         {cur::Aggregation::percentile, 50.0}};
  for (const cur::Aggregator& a : aggregators) {
    CAPTURE(cur::aggregation_name(a.kind));
    CAPTURE(a.percentile);
    const std::vector<double> reference = cur::trajectory_scores(values, offsets, a);
    std::uniform_int_distribution<std::size_t> random_block(1, 1000);
    CHECK(differing_bits(streamed(values, offsets, a, [] { return 1; }), reference) == 0);
    CHECK(differing_bits(streamed(values, offsets, a, [&] { return random_block(rng); }),
                         reference) == 0);
    CHECK(differing_bits(streamed(values, offsets, a, [&] { return values.size(); }), reference) ==
          0);
  }
}

TEST_CASE("TrajectoryScoreStream: the mean's overflow rescue across block boundaries") {
  const double big = std::numeric_limits<double>::max();
  const std::vector<double> values{big, big, big, 1.5e308, 1.7e308, -0.2e308, 1.0, 2.0, 1e-300};
  const std::vector<std::int64_t> offsets{0, 3, 7, 9};
  const std::vector<double> reference = cur::trajectory_scores(values, offsets);
  CHECK(reference[0] == big);
  for (std::size_t block = 1; block <= values.size(); ++block) {
    CAPTURE(block);
    CHECK(differing_bits(streamed(values, offsets, {}, [&] { return block; }), reference) == 0);
  }
}

TEST_CASE("TrajectoryScoreStream: rows past the last trajectory belong to none") {
  const std::vector<double> values{1, 2, 3, 4, 5, 6};
  cur::TrajectoryScoreStream stream({0, 2, 4});
  stream.add(std::span<const double>(values).first(3));
  CHECK_THROWS_AS((void)stream.scores(), std::invalid_argument);  // row 3 still missing
  stream.add(std::span<const double>(values).subspan(3));
  CHECK(stream.rows() == 6);
  CHECK(stream.scores() == std::vector<double>{1.5, 3.5});
  // A non-finite value in the tail is no trajectory's, so it is no error either.
  const std::vector<double> tail{std::numeric_limits<double>::quiet_NaN()};
  stream.add(tail);
  CHECK(stream.scores().size() == 2);
}

TEST_CASE("TrajectoryScoreStream: argument checks name the parameter") {
  check_throws_naming([] { cur::TrajectoryScoreStream({0}); }, "offsets.size()");
  check_throws_naming([] { cur::TrajectoryScoreStream({1, 2}); }, "offsets[0]");
  check_throws_naming([] { cur::TrajectoryScoreStream({0, 2, 2}); }, "offsets[2]");
  check_throws_naming(
      [] {
        cur::TrajectoryScoreStream({0, 2}, {cur::Aggregation::percentile, 101.0});
      },
      "aggregator.percentile");
  check_throws_naming(
      [] {
        cur::TrajectoryScoreStream stream({0, 2, 4});
        const std::vector<double> v{1.0, 2.0, 3.0, std::numeric_limits<double>::infinity()};
        stream.add(v);
      },
      "state_values[3]");
}
