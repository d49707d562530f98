#pragma once
// The strict fixed-sequence walk over a threshold grid (paper, section 4.3), shared by the
// composition certificate (calibrated_selection.hpp) and the mean-cost certificate
// (mean_cost_certificate.hpp): they differ only in the p-value of a step.

#include <curation/threshold_grid.hpp>
#include <ltt/fixed_sequence.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace ltt::curation::detail {

template <class Step>
struct GridWalk {
  std::vector<Step> steps;                    // the steps reached, in order
  std::optional<std::int64_t> last_rejected;  // the certified step, if any
};

// Step j is built only when the walk reaches it (ltt::fixed_sequence, lazy form): its grid
// fields (quantile, lambda, N) here, the rest and its p-value by test(j, step). The decisions
// are the walk's own: every step up to the last rejection is marked rejected.
template <class Step, class Test>
GridWalk<Step> grid_walk(const ThresholdGrid& grid, double delta, Test&& test) {
  GridWalk<Step> w;
  const ltt::FixedSequenceResult walk = ltt::fixed_sequence(
      grid.size(),
      [&](std::int64_t j) {
        const auto s = static_cast<std::size_t>(j);
        Step step;
        step.quantile = grid.quantile[s];
        step.lambda = grid.lambda[s];
        step.N = grid.selection_size[s];
        test(s, step);
        w.steps.push_back(step);
        return step.p;
      },
      delta);
  w.last_rejected = walk.last_rejected;
  if (walk.last_rejected)
    for (std::int64_t j = 0; j <= *walk.last_rejected; ++j)
      w.steps[static_cast<std::size_t>(j)].rejected = true;
  return w;
}

}  // namespace ltt::curation::detail
