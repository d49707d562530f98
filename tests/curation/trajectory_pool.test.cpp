// Tests for include/curation/trajectory_pool.hpp: pool validation, the unsafe bit, and the
// realized unsafe fraction.

#include <curation/trajectory_pool.hpp>

#include <doctest/doctest.h>

#include "../support/throws.hpp"

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

namespace cur = ltt::curation;

using ltt_test::check_throws_naming;

cur::TrajectoryPool small_pool() {
  cur::TrajectoryPool p;
  p.id = {10, 11, 12};
  p.score = {0.1, 0.5, 0.3};
  p.length = {100, 200, 300};
  p.episodic_return = {1.0, 2.0, 3.0};
  p.episodic_cost = {0.0, 25.0, 30.0};
  return p;
}

}  // namespace

TEST_CASE("validate_pool: a good pool, optional columns may be left empty") {
  CHECK_NOTHROW(cur::validate_pool(small_pool()));
  cur::TrajectoryPool p = small_pool();
  p.length.clear();
  p.episodic_return.clear();
  p.episodic_cost.clear();
  CHECK_NOTHROW(cur::validate_pool(p));
  CHECK(p.size() == 3);
}

TEST_CASE("validate_pool: invalid input names the parameter") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  check_throws_naming([] { cur::validate_pool(cur::TrajectoryPool{}); }, "score.size()");
  cur::TrajectoryPool p = small_pool();
  p.score[1] = nan;
  check_throws_naming([&] { cur::validate_pool(p); }, "score[1]");
  p = small_pool();
  p.id[2] = 10;
  check_throws_naming([&] { cur::validate_pool(p); }, "id");
  try {
    cur::validate_pool(p);
  } catch (const std::invalid_argument& e) {
    CHECK(std::string(e.what()).find("id 10 occurs twice") != std::string::npos);
  }
  p = small_pool();
  p.id.pop_back();
  check_throws_naming([&] { cur::validate_pool(p); }, "id.size()");
  p = small_pool();
  p.episodic_cost = {1.0, 2.0};
  check_throws_naming([&] { cur::validate_pool(p); }, "episodic_cost.size()");
  p = small_pool();
  p.episodic_return[0] = -std::numeric_limits<double>::infinity();
  check_throws_naming([&] { cur::validate_pool(p); }, "episodic_return[0]");
  p = small_pool();
  p.length[2] = -1;
  check_throws_naming([&] { cur::validate_pool(p); }, "length[2]");
}

TEST_CASE("unsafe_bits: cost above the budget; equal to it is within budget") {
  const std::vector<double> cost{0.0, 25.0, 25.000001, 100.0};
  CHECK(cur::unsafe_bits(cost, 25.0) == std::vector<std::uint8_t>{0, 0, 1, 1});
  check_throws_naming([&] { cur::unsafe_bits(cost, std::numeric_limits<double>::quiet_NaN()); },
                      "budget");
  const std::vector<double> bad{1.0, std::numeric_limits<double>::quiet_NaN()};
  check_throws_naming([&] { cur::unsafe_bits(bad, 25.0); }, "episodic_cost[1]");
}

TEST_CASE("unsafe_fraction: the realized unsafe fraction of a selection") {
  const std::vector<std::uint8_t> u{1, 0, 0, 1, 0};
  CHECK(cur::unsafe_fraction(u, std::vector<std::int64_t>{0, 1, 2, 3}) == 0.5);
  CHECK(cur::unsafe_fraction(u, std::vector<std::int64_t>{1, 2}) == 0.0);
  CHECK(cur::unsafe_fraction(u, std::vector<std::int64_t>{}) == 0.0);
  check_throws_naming(
      [&] {
        cur::unsafe_fraction(u, std::vector<std::int64_t>{1, 5});
      },
      "selection[1]");
}
