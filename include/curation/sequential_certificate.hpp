#pragma once
// What the sequential walk (<curation/sequential_selection.hpp>) returns: one SequentialStep per
// grid step with every number needed to recompute its p-value, the uncertified fallback of a
// refusal with its anytime bound, and the certificate that carries them.

#include <curation/detail/check.hpp>
#include <curation/sequential_options.hpp>
#include <ltt/detail/check.hpp>
#include <ltt/sequential_pvalue.hpp>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace ltt::curation {

// One grid step at the stop: everything needed to recompute p_j from the label order.
struct SequentialStep {
  double quantile = 0.0;                        // q_j
  double lambda = 0.0;                          // lambda_j
  std::int64_t N = 0;                           // N_j = |S(lambda_j)|
  std::int64_t null_boundary = 0;               // U*_j
  std::int64_t m = 0;                           // labels that landed in S(lambda_j)
  std::int64_t k = 0;                           // of those, unsafe
  double p_anytime = 1.0;                       // anytime p-value at the stop
  std::optional<double> p_cap;                  // exact composition p-value, once at the cap
  double p = 1.0;                               // p_j = min(1, p_anytime/(1-w), p_cap/w)
  bool rejected = false;                        // H_j rejected by the walk: S(lambda_j) certified
  std::optional<std::int64_t> certified_after;  // labels used when it was first rejected
  // The fixed tail (stratified order, options.fixed_tail), for the steps uncertified at the
  // switch: m and k then, the anytime evidence E_j then, and at the tail's end the conditional
  // exact p-value F_hyp(k - known_k; N - known_m, U* - known_k, m - known_m).
  std::optional<std::int64_t> known_m, known_k;
  std::optional<double> switch_evidence;
  std::optional<double> p_tail;
  // The fixed walk (options.fixed_walk): the members of S_j in its sample, n_j; p_cap and p
  // are then the exact test on them with the unbought ones counted unsafe.
  std::optional<std::int64_t> sample;
};

// The uncertified fallback of a sequential refusal: the labels so far were drawn uniformly
// without replacement (in a stopping-time-dependent number) from `population` trajectories;
// unsafe_upper bounds their unsafe count at level delta at any stopping time, so safe_lower
// bounds the pool's safe trajectories (those of S_1 are the pool's), and the fallback keeps
// the top K of the pool by score, as the fixed-n walk's does with its Clopper-Pearson bound.
struct SequentialFallback {
  std::int64_t population = 0;         // S_1's size (stratified order) or the pool's (uniform)
  std::int64_t labels = 0;             // labels drawn from it
  std::int64_t safe_labels = 0;        // of those, safe
  std::int64_t unsafe_upper = 0;       // ltt::anytime_unsafe_upper_bound at level delta
  std::int64_t safe_lower = 0;         // population - unsafe_upper
  std::int64_t minimum_selection = 0;  // as requested
  std::int64_t count = 0;              // K = max(min(minimum_selection, N), safe_lower)
};

// The fallback from the labels drawn from `population` trajectories, in draw order, at level
// delta; K as in uncertified_fallback (<curation/calibrated_selection.hpp>) with the anytime
// bound in place of Clopper-Pearson's.
inline SequentialFallback sequential_fallback(std::int64_t pool_size, std::int64_t population,
                                              std::span<const std::uint8_t> labels, double delta,
                                              std::int64_t minimum_selection) {
  constexpr std::string_view fn = "ltt::curation::sequential_fallback";
  ltt::detail::require_count(fn, "pool_size", pool_size);
  ltt::detail::require_at_most(fn, "population", population, "pool_size", pool_size);
  ltt::detail::require_count(fn, "minimum_selection", minimum_selection);
  SequentialFallback f;
  f.population = population;
  f.labels = detail::ssize(labels.size());
  f.safe_labels = f.labels - std::count(labels.begin(), labels.end(), std::uint8_t{1});
  f.unsafe_upper =
      ltt::anytime_unsafe_upper_bound(labels, population, delta, ltt::BetaBinomialPrior{1.0, 1.0});
  f.safe_lower = population - f.unsafe_upper;
  f.minimum_selection = minimum_selection;
  f.count = std::max(std::min(minimum_selection, pool_size), f.safe_lower);
  return f;
}

struct SequentialCertificate {
  LabelOrder order = LabelOrder::stratified;
  double alpha = 0.0;
  double delta = 0.0;
  std::int64_t pool_size = 0;
  std::int64_t label_cap = 0;
  std::optional<std::int64_t> target_step;
  std::int64_t grid_size = 0;
  std::vector<double> merged_quantiles;
  std::vector<SequentialStep> steps;  // every grid step, in order

  std::int64_t labels_used = 0;
  std::int64_t unsafe_labels = 0;
  std::optional<std::int64_t> tail_from;  // labels used at the switch to the fixed tail
  std::int64_t tail_size = 0;             // the tail's labels, fixed at the switch
  StoppingReason reason = StoppingReason::label_cap;
  std::vector<std::int64_t> depth_trace;  // certified steps after each label, nondecreasing
  // The fixed walk (options.fixed_walk): the most steps its sample can still certify, whatever
  // the labels left (depth_trace's steps are those it certifies whatever they are).
  bool fixed_walk = false;
  std::optional<std::int64_t> depth_upper;

  bool certified = false;
  std::optional<std::int64_t> certified_step;  // deepest certified grid step
  bool fallback = false;                       // == !certified
  std::optional<SequentialFallback> fallback_record;
  double threshold = 0.0;           // certified lambda_j, or the fallback's K-th score
  double quantile = 0.0;            // certified: q_j; fallback: 1 - K / N
  std::int64_t selection_size = 0;  // |S(threshold)|, ties included
};

}  // namespace ltt::curation
