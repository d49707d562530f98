#pragma once
// The fixed walk bought label by label (SequentialSelectionOptions::fixed_walk; docs/
// sequential.md, "The fixed walk, label by label"): what its draw can still certify after the
// labels so far. The draw is the first label_cap positions of the seeded permutation, tested as
// the fixed-n walk tests a draw of that size: p_j = composition_pvalue(k_j, n_j, N_j, alpha) at
// level delta in strict fixed sequence, n_j the draw's members of S_j.

#include <curation/sequential_certificate.hpp>
#include <ltt/pvalue.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace ltt::curation::detail::sequential {

// The depth of the full draw lies in [lower, upper] whatever its unbought labels are.
struct FixedWalkDepths {
  std::int64_t lower = 0;  // every unbought member unsafe: certified whatever they are
  std::int64_t upper = 0;  // every one safe: the most the draw can still certify
};

class FixedWalkCounts {
 public:
  // `strata`: each member of the draw's stratum (the first step whose selection holds it; the
  // grid's size J for none). Per step, n_j and the most unsafe c_j = max {k : p_j(k) <= delta}
  // that still certifies S_j (-1 if none; p_j is nondecreasing in k, so a binary search), so
  // that after each label the walk compares counts, not p-values.
  FixedWalkCounts(std::span<const std::int64_t> strata, std::span<const SequentialStep> steps,
                  double alpha, double delta)
      : alpha_(alpha) {
    const auto J = static_cast<std::int64_t>(steps.size());
    sample_in_.assign(steps.size(), 0);
    for (const std::int64_t first : strata)
      for (std::int64_t j = first; j < J; ++j) ++sample_in_[static_cast<std::size_t>(j)];
    for (std::size_t j = 0; j < steps.size(); ++j) {
      const std::int64_t n = sample_in_[j], N = steps[j].N;
      const auto certifies = [&](std::int64_t k) {
        return ltt::composition_pvalue(k, n, N, alpha) <= delta;
      };
      std::int64_t lo = -1, hi = certifies(0) ? n : -1;  // the answer lies in [lo, hi]
      while (lo < hi) {
        const std::int64_t mid = lo + (hi - lo + 1) / 2;
        if (certifies(mid))
          lo = mid;
        else
          hi = mid - 1;
      }
      critical_.push_back(lo);
    }
  }

  // From the steps' counts m_j, k_j of the labels so far.
  FixedWalkDepths depths(std::span<const SequentialStep> steps) const {
    const auto first_failing = [&](bool rest_unsafe) {
      for (std::size_t j = 0; j < steps.size(); ++j) {
        const std::int64_t unsafe = steps[j].k + (rest_unsafe ? sample_in_[j] - steps[j].m : 0);
        if (unsafe > critical_[j]) return static_cast<std::int64_t>(j);
      }
      return static_cast<std::int64_t>(steps.size());
    };
    return {first_failing(true), first_failing(false)};
  }

  // Each step's p-value as the certificate states it: the exact test of the draw with every
  // unbought member of S_j counted unsafe, so p_j only overstates the full draw's (the
  // certified steps are those with p_j <= delta). p_cap holds it as well; `sample` is n_j.
  void state_pvalues(std::span<SequentialStep> steps) const {
    for (std::size_t j = 0; j < steps.size(); ++j) {
      SequentialStep& step = steps[j];
      step.sample = sample_in_[j];
      step.p_cap = ltt::composition_pvalue(step.k + sample_in_[j] - step.m, sample_in_[j], step.N,
                                           alpha_);
      step.p = *step.p_cap;
    }
  }

 private:
  double alpha_ = 0.0;
  std::vector<std::int64_t> sample_in_, critical_;  // n_j, c_j
};

}  // namespace ltt::curation::detail::sequential
