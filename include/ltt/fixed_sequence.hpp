#pragma once
// Multiple testing over the ordered threshold grid: the strict fixed-sequence walk that
// Learn-then-Test uses (paper, section 4.3 and Proposition "guarantee"), and Bonferroni and
// Holm, the two procedures the paper's appendix ("Multiple-testing procedures over the
// grid") compares it with.
//
// Hypothesis j is H_j: "selection S_j holds more than alpha * N_j unsafe trajectories",
// tested with a super-uniform p-value p_j (Lemma "super-uniformity"); rejecting H_j
// certifies S_j. Indices are 0-based positions in the grid, shallowest threshold first.
// Every procedure here rejects H_j when p_j <= its level, the direction in which
// super-uniformity, Pr[p_j <= c] <= c, bounds the error.

#include <ltt/detail/check.hpp>
#include <ltt/detail/level_split.hpp>

#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace ltt {

// Outcome of the strict fixed-sequence walk.
struct FixedSequenceResult {
  std::int64_t tested = 0;                    // hypotheses reached, = pvalues.size()
  std::optional<std::int64_t> last_rejected;  // nullopt when the first test fails (or J = 0)
  std::vector<double> pvalues;                // p_0 .. p_{tested-1}, the ones computed
};

enum class Procedure { fixed_sequence, bonferroni, holm };

// Outcome of any of the three procedures, so a validation harness can switch between them.
struct MultipleTestingResult {
  Procedure procedure = Procedure::fixed_sequence;
  std::int64_t hypotheses = 0;                   // J, the grid length
  std::int64_t tested = 0;                       // p-values consulted (J except for the walk)
  std::vector<std::int64_t> rejected;            // rejected indices, ascending
  std::optional<std::int64_t> deepest_rejected;  // largest rejected index: the threshold
                                                 // returned; nullopt means no certificate
};

constexpr std::string_view procedure_name(Procedure procedure) {
  switch (procedure) {
    case Procedure::fixed_sequence:
      return "fixed_sequence";
    case Procedure::bonferroni:
      return "bonferroni";
    case Procedure::holm:
      return "holm";
  }
  return "unknown";
}

namespace detail::multiple_testing {

// A p-value outside [0, 1] or NaN is a bug upstream; the message names the grid index.
inline void require_pvalue(std::string_view function, std::string_view name, std::int64_t j,
                           std::string_view close, double p) {
  if (!(p >= 0.0 && p <= 1.0))
    invalid(function, std::string(name) + std::to_string(j) + std::string(close), show(p),
            "must be a probability in [0, 1]");
}

inline void require_pvalues(std::string_view function, std::span<const double> pvalues) {
  for (std::size_t j = 0; j < pvalues.size(); ++j)
    require_pvalue(function, "pvalues[", static_cast<std::int64_t>(j), "]", pvalues[j]);
}

inline MultipleTestingResult from_walk(const FixedSequenceResult& walk, std::int64_t hypotheses) {
  MultipleTestingResult result;
  result.procedure = Procedure::fixed_sequence;
  result.hypotheses = hypotheses;
  result.tested = walk.tested;
  if (walk.last_rejected) {
    result.rejected.resize(static_cast<std::size_t>(*walk.last_rejected) + 1);
    std::iota(result.rejected.begin(), result.rejected.end(), std::int64_t{0});
  }
  result.deepest_rejected = walk.last_rejected;
  return result;
}

}  // namespace detail::multiple_testing

// Strict fixed-sequence testing, lazy form: p_value_at(j) is called for j = 0, 1, ... in
// order, and only for hypotheses the walk reaches. Each is tested at the full level delta;
// the walk stops at the first failure to reject and returns the last rejection.
//
// Why the full delta at every step is valid (proof of Proposition "guarantee"): let t be the
// first true null in the grid order. Reaching H_t requires rejecting H_0 .. H_{t-1}, all false
// nulls, and any false certification returns an index >= t, so it must have rejected H_t on
// the way; hence Pr[false certification] <= Pr[p_t <= delta] <= delta. No monotonicity of the
// unsafe fraction along the grid is assumed: the walk cannot skip a true null, so the first
// one it meets is the only chance to err. Monotonicity only decides how deep the walk gets,
// i.e. power. The strict stopping rule is what makes this work: a walk that went on past a
// failure could return a deeper threshold with a true null skipped over.
template <class PValueAt>
requires std::invocable<PValueAt&, std::int64_t> &&
    std::convertible_to < std::invoke_result_t<PValueAt&, std::int64_t>,
double >
    FixedSequenceResult fixed_sequence(std::int64_t count, PValueAt&& p_value_at, double delta) {
  constexpr std::string_view fn = "ltt::fixed_sequence";
  detail::require_count(fn, "count", count);
  detail::require_open_unit(fn, "delta", delta);
  FixedSequenceResult result;
  for (std::int64_t j = 0; j < count; ++j) {
    const double p = static_cast<double>(p_value_at(j));
    detail::multiple_testing::require_pvalue(fn, "p_value_at(", j, ")", p);
    result.pvalues.push_back(p);
    result.tested = j + 1;
    if (!(p <= delta)) break;
    result.last_rejected = j;
  }
  return result;
}

// Eager form over precomputed p-values; every entry is validated, reached or not.
inline FixedSequenceResult fixed_sequence(std::span<const double> pvalues, double delta) {
  constexpr std::string_view fn = "ltt::fixed_sequence";
  detail::require_open_unit(fn, "delta", delta);
  detail::multiple_testing::require_pvalues(fn, pvalues);
  return fixed_sequence(
      static_cast<std::int64_t>(pvalues.size()),
      [pvalues](std::int64_t j) { return pvalues[static_cast<std::size_t>(j)]; }, delta);
}

// Bonferroni: each of the J hypotheses at level delta / J. The union bound controls the
// family-wise error at delta in any order and under any dependence, so the largest rejected
// index is a true null with probability at most delta. It pays for that freedom (it may
// certify a deep threshold past a shallow one it could not) with a J-fold smaller level.
inline MultipleTestingResult bonferroni(std::span<const double> pvalues, double delta) {
  constexpr std::string_view fn = "ltt::bonferroni";
  detail::require_open_unit(fn, "delta", delta);
  detail::multiple_testing::require_pvalues(fn, pvalues);
  MultipleTestingResult result;
  result.procedure = Procedure::bonferroni;
  result.hypotheses = static_cast<std::int64_t>(pvalues.size());
  result.tested = result.hypotheses;
  if (pvalues.empty()) return result;
  const double level = detail::level_share(delta, result.hypotheses);
  for (std::size_t j = 0; j < pvalues.size(); ++j)
    if (pvalues[j] <= level) result.rejected.push_back(static_cast<std::int64_t>(j));
  if (!result.rejected.empty()) result.deepest_rejected = result.rejected.back();
  return result;
}

// Holm's step-down procedure: sort the p-values ascending, reject the i-th smallest (i from
// 0) while it is <= delta / (J - i), and stop at the first that is not. Same family-wise
// error control as Bonferroni (Holm 1979) and never fewer rejections. The levels grow with i,
// so tied p-values are all rejected or all kept, whichever way the tie is ordered.
inline MultipleTestingResult holm(std::span<const double> pvalues, double delta) {
  constexpr std::string_view fn = "ltt::holm";
  detail::require_open_unit(fn, "delta", delta);
  detail::multiple_testing::require_pvalues(fn, pvalues);
  MultipleTestingResult result;
  result.procedure = Procedure::holm;
  result.hypotheses = static_cast<std::int64_t>(pvalues.size());
  result.tested = result.hypotheses;
  std::vector<std::int64_t> order(pvalues.size());
  std::iota(order.begin(), order.end(), std::int64_t{0});
  std::stable_sort(order.begin(), order.end(), [pvalues](std::int64_t a, std::int64_t b) {
    return pvalues[static_cast<std::size_t>(a)] < pvalues[static_cast<std::size_t>(b)];
  });
  const std::int64_t J = result.hypotheses;
  for (std::int64_t i = 0; i < J; ++i) {
    const std::int64_t j = order[static_cast<std::size_t>(i)];
    const double level = detail::level_share(delta, J - i);
    if (!(pvalues[static_cast<std::size_t>(j)] <= level)) break;
    result.rejected.push_back(j);
  }
  std::sort(result.rejected.begin(), result.rejected.end());
  if (!result.rejected.empty()) result.deepest_rejected = result.rejected.back();
  return result;
}

// One entry point for all three, so callers (the validation harness) can switch procedure.
inline MultipleTestingResult test_hypotheses(Procedure procedure, std::span<const double> pvalues,
                                             double delta) {
  switch (procedure) {
    case Procedure::fixed_sequence:
      return detail::multiple_testing::from_walk(fixed_sequence(pvalues, delta),
                                                 static_cast<std::int64_t>(pvalues.size()));
    case Procedure::bonferroni:
      return bonferroni(pvalues, delta);
    case Procedure::holm:
      return holm(pvalues, delta);
  }
  detail::invalid("ltt::test_hypotheses", "procedure", std::to_string(static_cast<int>(procedure)),
                  "is not a known Procedure");
}

}  // namespace ltt
