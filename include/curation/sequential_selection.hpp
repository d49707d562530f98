#pragma once
// Sequential calibrated selection: the calibrated selection of
// <curation/calibrated_selection.hpp> with labels bought one at a time, stopped as soon as the
// answer is known. The grid, the nested selections S(lambda_j) and the hypotheses
// H_j: U_j >= U*_j = floor(alpha N_j) + 1 are those of the fixed-n walk; only the p-values
// change, to anytime-valid ones.
//
// Labels come in the seeded label order of <curation/label_order.hpp>:
//  - uniform: a uniform permutation of the pool from the top; the labels that land in S_j are
//    a uniform draw without replacement from S_j, and H_j is tested with the one-selection
//    p-value of <ltt/sequential_pvalue.hpp> on them;
//  - stratified (the default): labels only from the first uncertified selection S_d, stratum
//    by stratum (D_k = S_k \ S_{k-1}); each stratum's labels are a uniform draw from it, H_1
//    is tested as above (all its labels are D_0's), and the first uncertified H_j (j >= 2)
//    across strata D_0..D_j with <ltt/stratified_sequential_pvalue.hpp>.
//
// After every label the p-values it moves are updated and the strict fixed-sequence walk is
// rerun on the current p_j(t). The p_j(t) are running minima, so once H_j is rejected it stays
// rejected and the certified depth never decreases; the walk is kept incrementally, which is
// the same walk as ltt::fixed_sequence on the current p-values.
//
// Power: a hypothesis is tested twice, by the anytime p-value at delta (1 - w) after every
// label and, if the run reaches the cap, by the exact fixed-n composition test of the cap's
// labels (ltt::composition_pvalue on m_j, k_j) at delta w; p_j = min(1, p_anytime/(1-w),
// p_cap/w). The exact test is on a sample of fixed size at a fixed time (uniform order: the
// cap's labels in S_j, given m_j a uniform draw from it; stratified order: H_1 only, in a run
// that reaches the cap with nothing certified, all label_cap labels drawn from S_1), so
// Pr[either rejects a true H_j] <= delta (1 - w) + delta w = delta (a union bound). The
// stratified order's deeper H_j have no cap test and spend all of delta on the anytime one
// (with the fixed tail below: delta (1 - tail_share)).
// w = cap_test_share, 0.2 by default; the prior is sequential_default_prior. In floating point
// 1 - w is the largest double c with c + w <= 1 exactly, and the tail's level share below is
// rounded down (ltt/detail/level_split.hpp): the shares sum to at most delta, not delta (1 +
// 5.6e-17) as fl(1 - 0.2) + 0.2 would.
//
// The fixed tail (options.fixed_tail, set by `auto`, `depth` and `labels`; stratified order;
// docs/sequential.md, "The fixed tail"): the deeper H_j's anytime tests run at delta (1 - w),
// w = tail_share; once something is certified and the switch rule says so (switches_to_tail:
// by default the forecast of the depth at the cap, TailSwitch::forecast), the labels left
// under the cap are drawn from a second seeded permutation over the unlabeled part of the
// grid's largest selection, the anytime evidence is frozen, and at the tail's end each H_j
// uncertified at the switch T is tested by the exact test of its tail labels conditional on
// the labels before, at level delta (w + (1 - w) E_j(T)) (E_j(T): its anytime evidence then).
// Valid because w + (1 - w) M_t, M_t the true counts' test supermartingale, continued at T by
// the factor 1{p_tail <= level} / level (conditional mean at most 1), is a test
// supermartingale that either rejection takes to 1/delta.
//
// Why a certificate at any stopping time is valid: let H_s be the first true null in grid
// order. A false certification needs H_s rejected at the stopping time T, i.e. p_s(T) <= delta,
// which implies that the anytime test of H_s crossed its level at some t (Ville's inequality,
// whatever T is) or the exact test at the cap rejected H_s: probability at most delta. The
// stopping rules, applied after each label, in this order:
//  - target_certified: step target_step (or a deeper one) is certified;
//  - label_cap: label_cap labels used;
//  - early_refusal: nothing is certified and H_1 would not be rejected even by a lucky rest of
//    the labels under the cap (refusal_is_clear): H_1 is still rejected with probability at
//    most refusal_rate;
//  - stalled: every step is certified, or the depth has not grown for stall_labels labels
//    and the closed-form forecast of the next step at the cap is below stall_rate;
//  - decided (stratified order): every step is certified, or the first uncertified selection
//    is labeled in full, so no label left can change the certificate.
// apply_stop_rule sets them from a `--stop` name (cap, target:J, stall:L, early-refusal, auto).
// Each is a stopping time of the label sequence, and the bound above holds at every stopping
// time, so none of them costs validity; they only decide how many labels are bought. (A run
// that early refusal or a stall ends might have certified more later: that loses power, never
// validity.)
//
// A refusal returns an uncertified fallback (sequential_fallback), the fixed-n walk's kind: the
// top K of the pool by score, K a lower confidence bound on the number of safe trajectories.
// The fixed-n fallback's Clopper-Pearson bound assumes a sample size fixed in advance, so here
// K comes from the anytime upper confidence bound on the unsafe count
// (ltt::anytime_unsafe_upper_bound, uniform prior) of the trajectories the labels were drawn
// from: S_1 in the stratified order (while nothing is certified every label lands there), the
// pool in the uniform order. It holds with probability at least 1 - delta at any stopping time.
//
// The parts: the certificate and the fallback (<curation/sequential_certificate.hpp>), the walk
// that takes one label at a time (<curation/sequential_walk.hpp>), the bounds its stopping
// rules ask for (<curation/detail/stop_rule_bounds.hpp>); here, the walk run to a stop.

#include <curation/detail/check.hpp>
#include <curation/sequential_certificate.hpp>
#include <curation/sequential_options.hpp>
#include <curation/sequential_walk.hpp>

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace ltt::curation {

// The walk on finite scores with the label order of `seed`, asking unsafe_of(position) for
// the label of each position it needs until a stopping rule fires.
template <class UnsafeOf>
requires std::invocable<UnsafeOf&, std::int64_t> SequentialCertificate
sequential_selection(std::span<const double> scores, std::uint64_t seed, UnsafeOf&& unsafe_of,
                     const SequentialSelectionOptions& options = {}) {
  SequentialWalk walk(scores, options, seed);
  for (;;) {
    const std::int64_t position = *walk.next_position();
    walk.add_label(position, static_cast<bool>(unsafe_of(position)));
    if (const auto reason = walk.stopping_reason()) return walk.certificate(*reason);
  }
}

// Simulation and validation on a pool whose labels are all known (pool_unsafe).
inline SequentialCertificate sequential_selection(std::span<const double> scores,
                                                  std::span<const std::uint8_t> pool_unsafe,
                                                  std::uint64_t seed,
                                                  const SequentialSelectionOptions& options = {}) {
  constexpr std::string_view fn = "ltt::curation::sequential_selection";
  detail::require_same_size(fn, "pool_unsafe", pool_unsafe.size(), "scores", scores.size());
  for (std::size_t i = 0; i < pool_unsafe.size(); ++i)
    if (pool_unsafe[i] > 1)
      detail::invalid(fn, detail::at("pool_unsafe", i), detail::show(std::int64_t{pool_unsafe[i]}),
                      "must be 0 or 1");
  return sequential_selection(
      scores, seed,
      [&](std::int64_t position) { return pool_unsafe[static_cast<std::size_t>(position)] != 0; },
      options);
}

}  // namespace ltt::curation
