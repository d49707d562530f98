// Tests for the behavior layer's small estimators against hand-worked values: GAE with a
// timeout (bootstrapped) and a terminal (not), the PID Lagrange multiplier over a sequence that
// exercises every clamp, DSRL's cost-limit schedule at its endpoints in fractions of the run,
// the minibatch split of tianshou's Batch.split, the running statistics against a two-pass
// computation, and the advantage normalization.

#include <behavior/advantages.hpp>
#include <behavior/pid_lagrangian.hpp>
#include <behavior/ppo_update.hpp>
#include <behavior/running_statistics.hpp>
#include <behavior/surrogate.hpp>
#include <tasks/training_run.hpp>

#include <doctest/doctest.h>

#include "../support/throws.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace estimators_test {

namespace bhv = ltt::behavior;
using ltt_test::check_throws_naming;

TEST_CASE("GAE: hand-worked episodes, a timeout bootstrapped and a terminal not") {
  // gamma 0.9, lambda 0.5 (gamma lambda = 0.45). Episode 1, rows 0-2, cut by the time limit:
  // its last delta bootstraps from V(final) = 2. Episode 2, rows 3-4, ends in a terminal: the
  // 7 given as its next value is not used, and nothing flows from episode 2 into episode 1.
  const std::vector<double> r{1, 2, 3, -1, 4}, v{0.5, 1.0, 1.5, 2.0, 0.25},
      next{1.0, 1.5, 2.0, 0.25, 7.0};
  const std::vector<std::uint8_t> terminal{0, 0, 0, 0, 1}, timeout{0, 0, 1, 0, 0};
  const std::vector<double> a =
      bhv::generalized_advantages(r, v, next, terminal, timeout, 0.9, 0.5);
  // delta = 1.4, 2.35, 3.3 | -2.775, 3.75
  const std::vector<double> expected{1.4 + 0.45 * (2.35 + 0.45 * 3.3), 2.35 + 0.45 * 3.3, 3.3,
                                     -2.775 + 0.45 * 3.75, 3.75};
  REQUIRE(a.size() == expected.size());
  for (std::size_t t = 0; t < a.size(); ++t) {
    CAPTURE(t);
    CHECK(a[t] == doctest::Approx(expected[t]).epsilon(1e-14));
  }
  CHECK(a[0] == doctest::Approx(3.12575).epsilon(1e-14));
  CHECK(a[3] == doctest::Approx(-1.0875).epsilon(1e-14));

  // A terminal that is also the time limit is a terminal; lambda = 1 and gamma = 1 sum the
  // rewards to go minus the value.
  const std::vector<std::uint8_t> both{0, 1}, cut{0, 1};
  const std::vector<double> b =
      bhv::generalized_advantages(std::vector<double>{1, 1}, std::vector<double>{0, 0},
                                  std::vector<double>{0, 5}, both, cut, 1.0, 1.0);
  CHECK(b == std::vector<double>{2, 1});

  check_throws_naming([&] { bhv::generalized_advantages(r, v, next, terminal, timeout, 1.5, 0.5); },
                      "gamma");
  check_throws_naming([&] { bhv::generalized_advantages(r, v, next, terminal, timeout, 0.9, -1); },
                      "lambda");
  check_throws_naming(
      [&] {
        bhv::generalized_advantages(r, std::vector<double>(4), next, terminal, timeout, 0.9, 0.5);
      },
      "values.size()");
  const std::vector<std::uint8_t> open{0, 0, 0, 0, 0};
  check_throws_naming([&] { bhv::generalized_advantages(r, v, next, open, open, 0.9, 0.5); },
                      "terminal");
}

TEST_CASE("PID Lagrangian: FSRL's update over a hand-worked sequence") {
  // gains (0.05, 0.0005, 0.1), limit 20. e = J - 20; D = max(0, e - e_prev); I = max(0, I + e);
  // lambda = max(0, 0.05 e + 0.0005 I + 0.1 D).
  struct Row {
    double cost, integral, multiplier;
  };
  const Row rows[] = {
      {30, 10, 0.5 + 0.005 + 1.0},        // e 10, D 10
      {45, 35, 1.25 + 0.0175 + 1.5},      // e 25, D 15
      {25, 40, 0.25 + 0.02},              // e 5, D 0 (a fall)
      {10, 30, 0},                        // e -10: -0.5 + 0.015 < 0, clamped
      {10, 20, 0},                        // e -10, D 0
      {40, 40, 1.0 + 0.02 + 3.0},         // e 20, D 30
      {0, 20, 0},                         // e -20
      {0, 0, 0},                          // e -20: I 0
      {0, 0, 0},                          // e -20: I clamped at 0, not -20
      {21, 1, 0.05 + 0.0005 + 0.1 * 21},  // e 1, D 21
  };
  bhv::PidLagrangian pid;
  CHECK(pid.multiplier() == 0);
  for (const Row& row : rows) {
    CAPTURE(row.cost);
    const double lambda = pid.update(row.cost, 20);
    CHECK(pid.integral() == doctest::Approx(row.integral).epsilon(1e-15));
    CHECK(lambda == doctest::Approx(row.multiplier).epsilon(1e-14));
    CHECK(pid.multiplier() == lambda);
    CHECK(pid.previous_error() == row.cost - 20);
  }
  check_throws_naming([] { bhv::PidLagrangian(bhv::PidGains{-1, 0, 0}); }, "gains.proportional");
  check_throws_naming([&] { pid.update(std::nan(""), 1); }, "value");
}

TEST_CASE("the cost limit's schedule: DSRL's cost_limit_scheduler in fractions of the run") {
  // DSRL scripts/train_trpol_expert.py: the limit set after epoch k (from 1) is
  //   cost_start - min(max(0, k - epoch_start), epoch_end - epoch_start)
  //                * (cost_start - cost_end) / (epoch_end - epoch_start),
  // and it rules epoch k + 1; the first epoch runs at cost_start. The trainer's epoch e uses
  // at((e - 1) / epochs).
  struct Config {
    double start, end;
    int epoch_start, epoch_end, epochs;
  };
  for (const Config c : {Config{250, 10, 800, 2800, 3000}, Config{250, 10, 800, 2500, 3000},
                         Config{200, 10, 800, 2500, 3000}}) {
    const ltt::tasks::ThresholdSchedule s{c.start, c.end,
                                          static_cast<double>(c.epoch_start) / c.epochs,
                                          static_cast<double>(c.epoch_end) / c.epochs};
    const auto dsrl = [&](int k) {
      const int x = std::min(std::max(0, k - c.epoch_start), c.epoch_end - c.epoch_start);
      return c.start - x * (c.start - c.end) / (c.epoch_end - c.epoch_start);
    };
    for (const int e :
         {1, 2, c.epoch_start, c.epoch_start + 1, c.epoch_start + 2,
          (c.epoch_start + c.epoch_end) / 2, c.epoch_end, c.epoch_end + 1, c.epochs}) {
      CAPTURE(e);
      CHECK(s.at(static_cast<double>(e - 1) / c.epochs) ==
            doctest::Approx(dsrl(e - 1)).epsilon(1e-12));
    }
    CHECK(s.at(0.0) == c.start);
    CHECK(s.at(1.0) == c.end);
    // A run of a tenth of the epochs keeps the shape: the same limits at the same fractions.
    for (const int e : {1, c.epoch_start / 10 + 1, c.epoch_end / 10 + 1, c.epochs / 10}) {
      CAPTURE(e);
      CHECK(s.at(static_cast<double>(e - 1) / (c.epochs / 10)) ==
            doctest::Approx(dsrl(10 * (e - 1))).epsilon(1e-12));
    }
  }
}

TEST_CASE("minibatches: tianshou's Batch.split(size, shuffle=True, merge_last=True)") {
  std::vector<std::int64_t> full;
  for (std::int64_t k = 1; k <= 18; ++k) full.push_back(512 * k);
  full.push_back(10000);  // 18 of 512, the last 784
  CHECK(bhv::minibatch_bounds(10000, 512) == full);
  CHECK(bhv::minibatch_bounds(1000, 512) == std::vector<std::int64_t>{1000});
  CHECK(bhv::minibatch_bounds(1024, 512) == std::vector<std::int64_t>{512, 1024});
  CHECK(bhv::minibatch_bounds(1025, 512) == std::vector<std::int64_t>{512, 1025});
  CHECK(bhv::minibatch_bounds(100, 512) == std::vector<std::int64_t>{100});
  CHECK(bhv::minibatch_bounds(7, 1) == std::vector<std::int64_t>{1, 2, 3, 4, 5, 6, 7});
  check_throws_naming([] { bhv::minibatch_bounds(0, 4); }, "rows");
  check_throws_naming([] { bhv::minibatch_bounds(4, 0); }, "size");
}

TEST_CASE("running statistics: batch after batch equals the whole at once") {
  // Three batches of 2-column rows (2, 3 and 3 rows) merged by Chan's update against the mean
  // and population variance of all 8 rows.
  const std::vector<double> a{1, 10, 2, 20}, b{3, 5, 4, 5, 9, 1}, c{-2, 0, 0.5, 7, 8, 8};
  bhv::RunningStatistics s(2);
  CHECK(s.mean()[0] == 0);
  CHECK(s.variance()[1] == 1);
  s.update(a);
  CHECK(s.mean()[0] == 1.5);
  CHECK(s.variance()[0] == 0.25);
  s.update(b);
  s.update(std::vector<float>(c.begin(), c.end()));
  std::vector<double> all = a;
  all.insert(all.end(), b.begin(), b.end());
  all.insert(all.end(), c.begin(), c.end());
  for (std::size_t col = 0; col < 2; ++col) {
    double mean = 0, var = 0;
    for (std::size_t r = 0; r < 8; ++r) mean += all[2 * r + col] / 8;
    for (std::size_t r = 0; r < 8; ++r)
      var += (all[2 * r + col] - mean) * (all[2 * r + col] - mean) / 8;
    CHECK(s.mean()[col] == doctest::Approx(mean).epsilon(1e-14));
    CHECK(s.variance()[col] == doctest::Approx(var).epsilon(1e-14));
  }
  CHECK(s.count() == 8);
  check_throws_naming([&] { s.update(std::vector<double>{1, 2, 3}); }, "values.size()");
  check_throws_naming([] { bhv::RunningStatistics(0); }, "columns");
}

TEST_CASE("advantage normalization: mean 0 and the unbiased standard deviation 1") {
  std::vector<double> x{1, 2, 3, 4};
  bhv::normalize_advantages(x);
  const double s = std::sqrt(5.0 / 3.0);  // sum of squares 5 over n - 1 = 3
  CHECK(x[0] == doctest::Approx(-1.5 / s).epsilon(1e-15));
  CHECK(x[3] == doctest::Approx(1.5 / s).epsilon(1e-15));
  std::vector<double> constant{2, 2, 2}, one{5};
  bhv::normalize_advantages(constant);
  bhv::normalize_advantages(one);
  CHECK(constant == std::vector<double>{0, 0, 0});
  CHECK(one == std::vector<double>{0});
}

}  // namespace estimators_test
