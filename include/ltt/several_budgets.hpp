#pragma once
// Several budgets b_1 < ... < b_K certified from one calibration sample: the two procedures'
// levels and p-values. At grid step j and budget k the hypothesis is
//     H_jk: S(lambda_j) holds more than alpha_k N_j trajectories with cost > b_k,
// tested by the composition p-value p_jk = F_hyp(k_jk; N_j, floor(alpha_k N_j) + 1, m_j)
// (pvalue.hpp), where k_jk counts the calibration draws in S(lambda_j) over b_k.
//
// One threshold for all budgets. The hypothesis of step j is the union H_j = OR_k H_jk ("some
// budget is violated at S(lambda_j)"), tested by p_j = max_k p_jk (intersection_union_pvalue).
// Under H_j some H_jk holds, and p_j >= p_jk, so Pr[p_j <= c] <= Pr[p_jk <= c] <= c: p_j is
// super-uniform under H_j (the intersection-union principle, Berger 1982, Technometrics 24,
// "Multiparameter hypothesis testing and acceptance sampling"). The strict fixed-sequence
// walk on p_j at the full delta is then valid by the argument in fixed_sequence.hpp: no split.
//
// One threshold per budget. Each budget runs its own walk on p_jk at level delta_k; all K
// certificates hold at once with probability >= 1 - sum_k delta_k (union bound over the K
// walks' first true nulls), so per_budget_levels splits delta evenly, each share rounded down
// so that the K shares sum to at most delta in exact arithmetic (detail/level_split.hpp).
// The nesting of the unsafe sets does not let the split be smaller in general: pools exist on
// which the K walks' errors fall on disjoint trajectories, and the simultaneous error then
// approaches 1 - prod (1 - delta_k). docs/several-budgets.md gives both proofs, the
// construction, and where the nesting does help (every budget's error at one step collapses
// to one event when the alphas are equal).

#include <ltt/detail/check.hpp>
#include <ltt/detail/level_split.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ltt {

enum class BudgetProcedure {
  one_threshold,             // one threshold for all budgets: the walk on max_k p_jk at delta
  one_threshold_per_budget,  // a walk per budget at delta_k, sum_k delta_k <= delta
};

constexpr std::string_view budget_procedure_name(BudgetProcedure procedure) {
  switch (procedure) {
    case BudgetProcedure::one_threshold:
      return "one_threshold";
    case BudgetProcedure::one_threshold_per_budget:
      return "one_threshold_per_budget";
  }
  return "unknown";
}

// p_j = max_k p_jk, the intersection-union p-value of "some budget is violated at step j".
inline double intersection_union_pvalue(std::span<const double> pvalues) {
  constexpr std::string_view fn = "ltt::intersection_union_pvalue";
  if (pvalues.empty()) detail::invalid(fn, "pvalues.size()", "0", "must be >= 1");
  double p = 0.0;
  for (std::size_t k = 0; k < pvalues.size(); ++k) {
    if (!(pvalues[k] >= 0.0 && pvalues[k] <= 1.0))
      detail::invalid(fn, "pvalues[" + std::to_string(k) + "]", detail::show(pvalues[k]),
                      "must be a probability in [0, 1]");
    p = pvalues[k] > p ? pvalues[k] : p;
  }
  return p;
}

// The level each budget's walk runs at: delta for every budget under one threshold; under one
// threshold per budget, the largest double t with K t <= delta exactly. With K = 1 both are
// delta itself, so a one-budget certificate is the single-budget one.
inline std::vector<double> budget_levels(BudgetProcedure procedure, double delta,
                                         std::int64_t budgets) {
  constexpr std::string_view fn = "ltt::budget_levels";
  detail::require_open_unit(fn, "delta", delta);
  if (budgets < 1) detail::invalid(fn, "budgets", detail::show(budgets), "must be >= 1");
  const double level = procedure == BudgetProcedure::one_threshold
                           ? delta
                           : detail::level_share(delta, budgets);
  return std::vector<double>(static_cast<std::size_t>(budgets), level);
}

}  // namespace ltt
