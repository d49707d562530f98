#pragma once
// Trajectory scores from state values that arrive a block of rows at a time (paper, section
// 4.2): what `ltt score` needs on a file whose values do not fit in memory at once. The result
// is trajectory_scores (score_aggregation.hpp) of the concatenated values, byte for byte,
// whatever the blocks: every aggregator performs the same floating-point operations in the same
// order, only spread over several add() calls.
//
//   mean        the Neumaier sum of compensated_mean (ltt/detail/compensated_sum.hpp), carried
//               from one block to the next in trajectory order. Its rescue path (a sum of
//               finite values that overflows: the terms scaled by 2^-e, e = ilogb(L) + 1, and
//               summed again) needs the values a second time; here L is known from the offsets
//               before the first value arrives, so the scaled sum is carried alongside and used
//               only when the plain one ends non-finite.
//   minimum     the running minimum (exact, order-free).
//   percentile  the values of the open trajectory are kept until its last row arrives, then
//               percentile_of as trajectory_scores calls it: memory of one trajectory.
//
// Rows past offsets.back() (a DSRL file's dropped tail) are accepted and belong to no
// trajectory, as in `ltt score`'s state_values.npy.

#include <curation/detail/check.hpp>
#include <curation/detail/sum.hpp>
#include <curation/score_aggregation.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ltt::curation {

class TrajectoryScoreStream {
 public:
  // offsets: N + 1 entries from 0, trajectory i owning rows [offsets[i], offsets[i + 1]), each
  // with at least one row (as trajectory_scores asks).
  explicit TrajectoryScoreStream(std::vector<std::int64_t> offsets,
                                 const Aggregator& aggregator = {})
      : offsets_(std::move(offsets)), aggregator_(aggregator) {
    detail::check_aggregator(fn, aggregator_);
    if (offsets_.size() < 2)
      detail::invalid(fn, "offsets.size()", detail::show(detail::ssize(offsets_.size())),
                      "must be at least 2 (N + 1 offsets for N >= 1 trajectories)");
    if (offsets_.front() != 0)
      detail::invalid(fn, "offsets[0]", detail::show(offsets_.front()), "must be 0");
    for (std::size_t i = 1; i < offsets_.size(); ++i)
      if (offsets_[i] <= offsets_[i - 1])
        detail::invalid(fn, detail::at("offsets", i), detail::show(offsets_[i]),
                        "must exceed offsets[" + std::to_string(i - 1) + "] = " +
                            detail::show(offsets_[i - 1]) + " (every trajectory has a state)");
    scores_.reserve(offsets_.size() - 1);
    open();
  }

  // The values of the next rows, in row order.
  void add(std::span<const double> values) {
    const std::int64_t end = offsets_.back();
    for (const double v : values) {
      const std::int64_t row = rows_++;
      if (row >= end) continue;
      if (!std::isfinite(v))
        detail::invalid(fn, detail::at("state_values", static_cast<std::size_t>(row)),
                        detail::show(v), "must be a finite number");
      switch (aggregator_.kind) {
        case Aggregation::mean:
          sum_.add(v);
          scaled_.add(std::ldexp(v, -exponent_));
          break;
        case Aggregation::minimum:
          minimum_ = std::min(minimum_, v);
          break;
        case Aggregation::percentile:
          open_values_.push_back(v);
          break;
      }
      if (row + 1 == offsets_[scores_.size() + 1]) close();
    }
  }

  std::int64_t rows() const { return rows_; }

  // One score per trajectory, once every row up to offsets.back() has been added.
  const std::vector<double>& scores() const {
    if (rows_ < offsets_.back())
      detail::invalid(fn, "rows added", detail::show(rows_),
                      "must reach offsets.back() = " + detail::show(offsets_.back()) +
                          " before the scores are read");
    return scores_;
  }

 private:
  static constexpr std::string_view fn = "ltt::curation::TrajectoryScoreStream";

  // Starts the next trajectory, if any.
  void open() {
    sum_ = {};
    scaled_ = {};
    minimum_ = 0.0;
    open_values_.clear();
    const std::size_t i = scores_.size();
    if (i + 1 >= offsets_.size()) return;
    const std::int64_t length = offsets_[i + 1] - offsets_[i];
    exponent_ = std::ilogb(static_cast<double>(length)) + 1;  // compensated_mean's e
    minimum_ = std::numeric_limits<double>::infinity();
  }

  // The score of the trajectory whose last row just arrived.
  void close() {
    const std::size_t i = scores_.size();
    const double n = static_cast<double>(offsets_[i + 1] - offsets_[i]);
    double score = 0.0;
    switch (aggregator_.kind) {
      case Aggregation::mean: {
        // compensated_mean: the plain sum unless it overflowed (the terms are all finite).
        const double sum = sum_.value();
        score = std::isfinite(sum) ? sum / n : std::ldexp(scaled_.value() / n, exponent_);
        break;
      }
      case Aggregation::minimum:
        score = minimum_;
        break;
      case Aggregation::percentile:
        score = detail::percentile_of(open_values_, aggregator_.percentile);
        break;
    }
    scores_.push_back(score);
    open();
  }

  std::vector<std::int64_t> offsets_;
  Aggregator aggregator_;
  std::vector<double> scores_;
  std::int64_t rows_ = 0;
  ltt::detail::CompensatedSum sum_, scaled_;
  int exponent_ = 0;
  double minimum_ = 0.0;
  std::vector<double> open_values_;
};

}  // namespace ltt::curation
