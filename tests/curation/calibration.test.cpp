// Tests for include/curation/calibration.hpp: the seeded uniform draw (pinned output, every
// subset equally likely), known labels, and user-supplied labels with their checks.

#include <curation/calibration.hpp>
#include <ltt/bounds.hpp>

#include <doctest/doctest.h>

#include "../support/throws.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

namespace cur = ltt::curation;
using Positions = std::vector<std::int64_t>;

using ltt_test::check_throws_naming;

}  // namespace

TEST_CASE("draw_calibration: distinct ascending positions, fixed by the seed") {
  // Pinned: the engine and the draws are specified exactly, so these never change.
  CHECK(cur::draw_calibration(20, 5, 42) == Positions{1, 4, 6, 13, 14});
  CHECK(cur::draw_calibration(1000000, 6, 2026) ==
        Positions{29221, 129461, 178252, 220021, 409668, 982361});
  const auto a = cur::draw_calibration(2000, 200, 7);
  CHECK(a == cur::draw_calibration(2000, 200, 7));
  CHECK(a != cur::draw_calibration(2000, 200, 8));
  REQUIRE(a.size() == 200);
  CHECK(std::is_sorted(a.begin(), a.end()));
  CHECK(std::adjacent_find(a.begin(), a.end()) == a.end());
  CHECK(a.front() >= 0);
  CHECK(a.back() < 2000);
  CHECK(cur::draw_calibration(10, 0, 1).empty());
  CHECK(cur::draw_calibration(10, 10, 1) == Positions{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
}

TEST_CASE("draw_calibration: every 2-subset of 5 equally likely") {
  // 10 subsets, probability 1/10 each; each count must sit inside its two-sided
  // Clopper-Pearson interval at level 1e-4 per subset.
  constexpr std::int64_t draws = 20000;
  std::map<Positions, std::int64_t> count;
  for (std::int64_t d = 0; d < draws; ++d)
    ++count[cur::draw_calibration(5, 2, static_cast<std::uint64_t>(d))];
  REQUIRE(count.size() == 10);
  for (const auto& [subset, c] : count) {
    CAPTURE(c);
    CHECK(ltt::clopper_pearson_lower(c, draws, 5e-5) <= 0.1);
    CHECK(ltt::clopper_pearson_upper(c, draws, 5e-5) >= 0.1);
  }
}

TEST_CASE("draw_calibration: invalid input names the parameter") {
  check_throws_naming([] { cur::draw_calibration(10, 11, 1); }, "n");
  check_throws_naming([] { cur::draw_calibration(10, -1, 1); }, "n");
  check_throws_naming([] { cur::draw_calibration(-5, 1, 1); }, "pool_size");
}

TEST_CASE("label_calibration: labels from a pool whose truth is known") {
  const std::vector<std::uint8_t> u{0, 1, 1, 0, 1};
  const auto c = cur::label_calibration(Positions{0, 2, 3}, u);
  CHECK(c.index == Positions{0, 2, 3});
  CHECK(c.unsafe == std::vector<std::uint8_t>{0, 1, 0});
  CHECK(c.size() == 3);
  CHECK(c.unsafe_count() == 1);
  check_throws_naming([&] { cur::label_calibration(Positions{0, 5}, u); }, "index[1]");
  const std::vector<std::uint8_t> bad{0, 3};
  check_throws_naming([&] { cur::label_calibration(Positions{1}, bad); }, "pool_unsafe[1]");
}

TEST_CASE("calibration_from_labels: ids mapped to pool positions, in position order") {
  const Positions pool_ids{500, 300, 900, 100, 700};
  const auto c =
      cur::calibration_from_labels(pool_ids, Positions{100, 500, 900}, Positions{1, 0, 1});
  CHECK(c.index == Positions{0, 2, 3});
  CHECK(c.unsafe == std::vector<std::uint8_t>{0, 1, 1});
  // The whole pool may be labeled.
  CHECK(cur::calibration_from_labels(pool_ids, pool_ids, Positions{0, 0, 0, 0, 0}).size() == 5);
}

TEST_CASE("calibration_from_labels: invalid input names the parameter") {
  const Positions pool_ids{500, 300, 900, 100, 700};
  check_throws_naming(
      [&] {
        cur::calibration_from_labels(pool_ids, Positions{100, 400}, Positions{0, 1});
      },
      "label_ids[1]");
  check_throws_naming(
      [&] {
        cur::calibration_from_labels(pool_ids, Positions{100, 300, 100}, Positions{0, 1, 0});
      },
      "label_ids[2]");
  check_throws_naming(
      [&] {
        cur::calibration_from_labels(pool_ids, Positions{100, 300}, Positions{0, 2});
      },
      "label_unsafe[1]");
  check_throws_naming(
      [&] {
        cur::calibration_from_labels(pool_ids, Positions{100, 300}, Positions{-1, 0});
      },
      "label_unsafe[0]");
  check_throws_naming(
      [&] {
        cur::calibration_from_labels(pool_ids, Positions{100}, Positions{0, 1});
      },
      "label_unsafe.size()");
  check_throws_naming([&] { cur::calibration_from_labels(Positions{}, Positions{}, Positions{}); },
                      "pool_ids.size()");
  check_throws_naming(
      [&] {
        cur::calibration_from_labels(Positions{1, 2}, Positions{1, 2, 3}, Positions{0, 0, 0});
      },
      "label_ids.size()");
  // A duplicated pool id is an error when a label refers to it.
  check_throws_naming(
      [&] {
        cur::calibration_from_labels(Positions{1, 2, 1}, Positions{1}, Positions{0});
      },
      "pool_ids[2]");
}
