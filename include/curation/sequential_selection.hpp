#pragma once
// Sequential calibrated selection (issue 16): the calibrated selection of
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
// The fixed tail (options.fixed_tail, set by `auto`; stratified order; docs/sequential.md,
// "The fixed tail"): the deeper H_j's anytime tests run at delta (1 - w), w = tail_share; once
// something is certified and the depth stalls while the next step looks certifiable by an
// exact test but not by the anytime one within the cap (switches_to_tail), the labels left
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

#include <curation/detail/check.hpp>
#include <curation/label_order.hpp>
#include <curation/selection.hpp>
#include <curation/sequential_options.hpp>
#include <curation/threshold_grid.hpp>
#include <ltt/bounds.hpp>
#include <ltt/certification_rate.hpp>
#include <ltt/detail/check.hpp>
#include <ltt/detail/level_split.hpp>
#include <ltt/hypergeometric.hpp>
#include <ltt/pvalue.hpp>
#include <ltt/sequential_pvalue.hpp>
#include <ltt/stratified_sequential_pvalue.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
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

  bool certified = false;
  std::optional<std::int64_t> certified_step;  // deepest certified grid step
  bool fallback = false;                       // == !certified
  std::optional<SequentialFallback> fallback_record;
  double threshold = 0.0;           // certified lambda_j, or the fallback's K-th score
  double quantile = 0.0;            // certified: q_j; fallback: 1 - K / N
  std::int64_t selection_size = 0;  // |S(threshold)|, ties included
};

namespace detail::sequential {

// Whether at most `safe` more safe labels take an anytime test to `level`, by running a copy
// of it on them. The refusal rule asks after every label, and a safe label that then arrives is
// exactly the first step of the run simulated before it (the same update on the same state), so
// the run is kept and continued rather than started over; an unsafe label (or another test, or
// level) starts a new one. The answer is the one a fresh run gives, bit for bit.
class SafeRunToLevel {
 public:
  bool within(const ltt::SequentialCompositionPvalue& p, std::int64_t safe, double level) {
    const bool continues = run_ && level == level_ && p.N_sel() == run_->N_sel() &&
                           p.null_boundary() == run_->null_boundary() &&
                           p.unsafe() == run_->unsafe() && p.labels() >= from_ &&
                           p.labels() <= run_->labels();
    if (!continues) {
      run_ = p;
      from_ = p.labels();
      level_ = level;
    }
    // the run is p after `ahead` more safe labels; p has taken only safe ones since from_
    std::int64_t ahead = run_->labels() - p.labels();
    for (; ahead < safe && run_->pvalue() > level; ++ahead) run_->update(false);
    return ahead <= safe && run_->pvalue() <= level;
  }

 private:
  std::optional<ltt::SequentialCompositionPvalue> run_;
  std::int64_t from_ = 0;  // the test's label count when the run was copied from it
  double level_ = 0.0;
};

// Would H_1 (anytime test p) be rejected if the next labels in S_1 were `safe` safe ones and
// then `unsafe` unsafe ones (safe first: the order that raises the running maximum most): the
// anytime test at `level`, or (cap_level > 0: the run would reach the cap with them) the exact
// test at cap_level?
inline bool can_still_certify(SafeRunToLevel& run, const ltt::SequentialCompositionPvalue& p,
                              const SequentialStep& s1, std::int64_t safe, std::int64_t unsafe,
                              double alpha, double level, double cap_level) {
  if (run.within(p, safe, level)) return true;
  return cap_level > 0.0 &&
         ltt::composition_pvalue(s1.k + unsafe, s1.m + safe + unsafe, s1.N, alpha) <= cap_level;
}

// The fewest unsafe among `draws` uniform draws from `left` trajectories of which `bad` are
// unsafe, except with probability at most `rate`: the largest x with Pr[X < x] <= rate.
inline std::int64_t unsafe_lower_bound(std::int64_t left, std::int64_t bad, std::int64_t draws,
                                       double rate) {
  const std::int64_t least = std::max<std::int64_t>(0, draws - (left - bad));
  std::int64_t x = least;
  while (x < std::min(bad, draws) && ltt::hypergeometric_cdf(x, left, bad, draws) <= rate) ++x;
  return x;
}

// ltt::clopper_pearson_lower(k, m, 0.1), remembered per thread. The stall and refusal rules ask
// for it after every label (a beta quantile, a third of a stratified walk's time when computed
// each time), and walks on the same pool (a validation harness, the label budget's Monte Carlo)
// ask for the same (k, m) again and again. A direct-mapped table of 16384 entries (384 KiB) on the
// heap; a miss computes the bound and takes the entry, so the value is the function's, bit for bit.
inline double optimistic_fraction(std::int64_t k, std::int64_t m) {
  struct Entry {
    std::int64_t k = -1, m = -1;
    double value = 0.0;
  };
  thread_local std::vector<Entry> table(16384);
  const std::uint64_t key =
      (static_cast<std::uint64_t>(m) * 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(k)) *
      0xBF58476D1CE4E5B9ull;
  Entry& e = table[static_cast<std::size_t>(key >> 50)];
  if (e.k != k || e.m != m) e = {k, m, ltt::clopper_pearson_lower(k, m, 0.1)};
  return e.value;
}

// How many of the `draws` labels left under the cap land in S_1 (s1_left of its trajectories
// among the pool_left unlabeled), except with probability at most `rate`: the upper quantile of
// Hyp(pool_left, s1_left, draws). rate = 0 gives the most that can land.
inline std::int64_t landing_bound(std::int64_t pool_left, std::int64_t s1_left, std::int64_t draws,
                                  double rate) {
  const std::int64_t most = std::min(s1_left, draws);
  if (rate == 0.0 || most == 0) return most;
  const auto mean = static_cast<std::int64_t>(
      static_cast<double>(draws) * static_cast<double>(s1_left) / static_cast<double>(pool_left));
  for (std::int64_t x = mean; x < most; ++x)
    if (ltt::hypergeometric_sf(x, pool_left, s1_left, draws) <= rate) return x;
  return most;
}

// Each pool position's stratum: the first grid step whose selection holds it (D_k =
// S_k \ S_{k-1}), or J (outside every selection).
inline std::vector<std::int64_t> strata_of(std::span<const double> scores,
                                           const ThresholdGrid& grid) {
  std::vector<std::int64_t> out;
  out.reserve(scores.size());
  for (const double g : scores)
    out.push_back(static_cast<std::int64_t>(
        std::lower_bound(grid.lambda.begin(), grid.lambda.end(), g, std::greater<>()) -
        grid.lambda.begin()));
  return out;
}

}  // namespace detail::sequential

// The walk as a state that takes one label at a time, in the seeded label order of
// <curation/label_order.hpp>: next_position() says which pool position to label, add_label
// takes its label and updates the p-values and the certified depth, stopping_reason says which
// rule, if any, fires after the labels so far, and certificate() is the certificate if the
// walk stopped now.
class SequentialWalk {
 public:
  SequentialWalk(std::span<const double> scores, SequentialSelectionOptions options,
                 std::uint64_t seed)
      : options_(std::move(options)), seed_(seed) {
    constexpr std::string_view fn = "ltt::curation::sequential_selection";
    detail::require_nonempty(fn, "scores", scores.size());
    detail::require_finite(fn, "scores", scores);
    const std::int64_t N = detail::ssize(scores.size());
    detail::sequential::check_options(fn, N, options_);
    grid_ = threshold_grid(scores, options_.quantiles);
    const std::int64_t J = grid_.size();
    if (options_.target_step && (*options_.target_step < 0 || *options_.target_step >= J))
      detail::invalid(fn, "target_step", detail::show(*options_.target_step),
                      "must be a grid step in [0, " + detail::show(J) + ")");
    open_certificate(N, J);
    scores_.assign(scores.begin(), scores.end());
    queue_.emplace(detail::sequential::strata_of(scores, grid_), J, options_.order, seed);
    if (stratified()) {
      std::vector<std::int64_t> sizes;
      for (std::int64_t j = 0; j < J; ++j)
        sizes.push_back(grid_.selection_size[static_cast<std::size_t>(j)] -
                        (j == 0 ? 0 : grid_.selection_size[static_cast<std::size_t>(j - 1)]));
      strata_.emplace(std::move(sizes), prior());
      log_max_.assign(static_cast<std::size_t>(J), 0.0L);
    }
  }

  // The pool position to label next; none when no position is left to ask for.
  std::optional<std::int64_t> next_position() const { return queue_->next(depth_); }

  // The next `count` positions to label if the certified depth stays what it is now (all of
  // them in the uniform order; in the stratified one until a step is certified).
  std::vector<std::int64_t> planned(std::int64_t count) const {
    return queue_->planned(depth_, count);
  }

  // The label of `position`, which must be next_position().
  void add_label(std::int64_t position, bool unsafe) {
    constexpr std::string_view fn = "ltt::curation::sequential_selection";
    const std::optional<std::int64_t> next = next_position();
    if (!next)
      detail::invalid(fn, "position", detail::show(position),
                      "cannot be labeled: no position is left to label");
    if (position != *next)
      detail::invalid(fn, "position", detail::show(position),
                      "must be the next position of the label order, " + detail::show(*next) +
                          " (the order is fixed before labeling for the guarantee)");
    queue_->take(position);
    sequence_.push_back(unsafe);
    c_.labels_used += 1;
    c_.unsafe_labels += unsafe;
    update_pvalues(queue_->stratum_of(position), unsafe);
    if (c_.tail_from && c_.labels_used == *c_.tail_from + c_.tail_size) test_tail();
    advance_walk();
    if (switches_to_tail()) begin_tail();
  }

  // The first stopping rule that fires after the labels so far, in the order of the table in
  // docs/sequential.md; none before the first label.
  std::optional<StoppingReason> stopping_reason() const {
    if (c_.labels_used == 0) return std::nullopt;
    if (options_.target_step && depth_ > *options_.target_step)
      return StoppingReason::target_certified;
    if (c_.labels_used == options_.label_cap) return StoppingReason::label_cap;
    if (options_.early_refusal && depth_ == 0 && refusal_is_clear())
      return StoppingReason::early_refusal;
    if (options_.stall_labels && stalled()) return StoppingReason::stalled;
    if (stratified() && (depth_ == c_.grid_size || !next_position()))
      return StoppingReason::decided;
    return std::nullopt;
  }

  // The certificate after the labels so far, with `reason` as its stopping reason.
  SequentialCertificate certificate(StoppingReason reason = StoppingReason::label_cap) const {
    SequentialCertificate c = c_;
    c.reason = reason;
    c.certified = depth_ > 0;
    if (c.certified) {
      c.certified_step = depth_ - 1;
      const SequentialStep& step = c.steps[static_cast<std::size_t>(depth_ - 1)];
      c.threshold = step.lambda;
      c.quantile = step.quantile;
      c.selection_size = step.N;
    } else {
      // Nothing certified: in the stratified order every label so far came from S_1.
      c.fallback = true;
      c.fallback_record =
          sequential_fallback(c.pool_size, stratified() ? c.steps[0].N : c.pool_size, sequence_,
                              options_.delta, options_.minimum_selection);
      const std::int64_t K = c.fallback_record->count;
      c.threshold = top_count_threshold(scores_, K);
      c.quantile = 1.0 - static_cast<double>(K) / static_cast<double>(c.pool_size);
      c.selection_size =
          std::count_if(scores_.begin(), scores_.end(), [&](double g) { return g >= c.threshold; });
    }
    return c;
  }

  const SequentialSelectionOptions& options() const { return options_; }
  std::int64_t labels_used() const { return c_.labels_used; }
  std::int64_t pool_size() const { return c_.pool_size; }
  // The seeded permutation the label order reads (`ltt draw --sequential` prints it).
  std::span<const std::int64_t> permutation() const { return queue_->permutation(); }

 private:
  bool stratified() const { return options_.order == LabelOrder::stratified; }
  ltt::BetaMixturePrior prior() const {
    return options_.prior ? *options_.prior : ltt::sequential_default_prior(options_.alpha);
  }

  // Nothing certified, and H_1 would not be rejected even by a lucky rest of the labels under
  // the cap, safe ones first. Uniform order: as many land in S_1 as do except with
  // probability refusal_rate (landing_bound), all safe. Stratified: every one goes to S_1 (up
  // to its unlabeled size), as few of them unsafe as there are except with probability
  // refusal_rate if S_1 holds the optimistic U_1 of the stall rule; the cap test counts only
  // if they reach the cap. Either way H_1 is still rejected with probability at most
  // refusal_rate (at that U_1).
  bool refusal_is_clear() const {
    const SequentialStep& s0 = c_.steps[0];
    const std::int64_t left = options_.label_cap - c_.labels_used;
    const double w = options_.cap_test_share;
    std::int64_t safe = 0, unsafe = 0;
    if (stratified()) {
      const std::int64_t draws = std::min(left, s0.N - s0.m);
      const std::int64_t bad =
          std::clamp(optimistic_unsafe(s0) - s0.k, std::int64_t{0}, s0.N - s0.m);
      unsafe =
          detail::sequential::unsafe_lower_bound(s0.N - s0.m, bad, draws, options_.refusal_rate);
      safe = draws - unsafe;
    } else {
      safe = detail::sequential::landing_bound(c_.pool_size - c_.labels_used, s0.N - s0.m, left,
                                               options_.refusal_rate);
    }
    const bool reaches_cap = !stratified() || s0.m + safe + unsafe == options_.label_cap;
    const double cap_level = reaches_cap ? options_.delta * w : 0.0;
    return !detail::sequential::can_still_certify(
        safe_run_, p_[0], s0, safe, unsafe, options_.alpha,
        options_.delta * ltt::detail::complement_share(w), cap_level);
  }

  // An optimistic unsafe count of S_j: N_j times the 90% Clopper-Pearson lower bound of
  // k_j / m_j (0 before any label lands there).
  static std::int64_t optimistic_unsafe(const SequentialStep& step) {
    if (step.m == 0) return 0;
    return static_cast<std::int64_t>(std::floor(
        static_cast<double>(step.N) * detail::sequential::optimistic_fraction(step.k, step.m)));
  }

  // The depth has not grown for stall_labels labels and the next step's closed-form forecast
  // (ltt::certification_rate of the fixed-n test at an optimistic U_d: N_d times the 90%
  // Clopper-Pearson lower bound of k_d / m_d) is below stall_rate; or every step is certified.
  // The forecast's sample: the cap's labels from the pool (uniform order), or the labels S_d
  // holds plus every label left (stratified: they all go there). A walk on its fixed tail
  // never stalls: the tail's size was fixed at the switch.
  bool stalled() const {
    if (depth_ == c_.grid_size) return true;
    if (c_.tail_from) return false;
    return depth_unchanged(*options_.stall_labels) && forecast() < options_.stall_rate;
  }

  // The depth has not grown for `labels` labels (and the next step has some).
  bool depth_unchanged(std::int64_t labels) const {
    const std::int64_t grown_at =
        depth_ == 0 ? 0 : *c_.steps[static_cast<std::size_t>(depth_ - 1)].certified_after;
    return c_.labels_used - grown_at >= labels && c_.steps[static_cast<std::size_t>(depth_)].m > 0;
  }

  double forecast() const {
    const SequentialStep& next = c_.steps[static_cast<std::size_t>(depth_)];
    const std::int64_t U = optimistic_unsafe(next);
    return stratified() ? ltt::certification_rate(
                              next.N, next.N, U,
                              std::min(next.N, next.m + options_.label_cap - c_.labels_used),
                              options_.alpha, options_.delta)
                        : ltt::certification_rate(c_.pool_size, next.N, U, options_.label_cap,
                                                  options_.alpha, options_.delta);
  }

  // The switch to the fixed tail: stratified order with fixed_tail, a step certified but not
  // all, labels left, and where the stall rule would look (the depth unchanged for
  // stall_labels labels) the forecast still at least stall_rate: the next step looks
  // certifiable by an exact test, but not by the anytime one within the cap
  // (anytime_out_of_reach). At depth 0 there is no switch: the labels stay in S_1, where H_1's
  // own exact test at the cap uses them.
  bool switches_to_tail() const {
    if (!options_.fixed_tail || !stratified() || c_.tail_from) return false;
    if (depth_ < 1 || depth_ == c_.grid_size || c_.labels_used >= options_.label_cap) return false;
    return depth_unchanged(options_.stall_labels.value_or(auto_stall_labels)) &&
           forecast() >= options_.stall_rate &&
           (anytime_out_of_reach() || last_step_out_of_reach());
  }

  // The grid's largest selection estimated at or over alpha: its strata up to the newest
  // labeled one at their labeled fractions, the rest at the newest one's (purity falls with
  // depth in a scored pool).
  bool last_step_out_of_reach() const {
    double unsafe = 0.0, rate = 0.0;
    std::int64_t covered = 0;
    for (std::size_t k = 0; k <= static_cast<std::size_t>(depth_); ++k) {
      if (strata_->labels(k) == 0) return false;
      rate = static_cast<double>(strata_->unsafe(k)) / static_cast<double>(strata_->labels(k));
      unsafe += rate * static_cast<double>(strata_->size(k));
      covered += strata_->size(k);
    }
    const std::int64_t last = c_.steps.back().N;
    unsafe += rate * static_cast<double>(last - covered);
    return unsafe >= options_.alpha * static_cast<double>(last);
  }

  // The labels in S_d the anytime test of the next step needs at its estimated unsafe fraction
  // f = k_d / m_d, roughly: log(1 / (delta (1 - w))) plus 2 nats for the prior's spread, over
  // KL(f || alpha) nats per label; more than S_d would hold at the cap. A heuristic, which
  // decides only where labels go, never a test's level.
  bool anytime_out_of_reach() const {
    const SequentialStep& next = c_.steps[static_cast<std::size_t>(depth_)];
    const double f = static_cast<double>(next.k) / static_cast<double>(next.m);
    const double a = options_.alpha;
    if (f >= a) return true;
    const double kl =
        (f > 0.0 ? f * std::log(f / a) : 0.0) + (1.0 - f) * std::log((1.0 - f) / (1.0 - a));
    const double needed =
        (std::log(1.0 / (options_.delta * (1.0 - options_.tail_share))) + 2.0) / kl;
    return needed > static_cast<double>(next.m + options_.label_cap - c_.labels_used);
  }

  // From here on the labels come from the tail permutation, uniformly from the unlabeled part
  // of the grid's largest selection, as many as the cap leaves (fewer if that part is smaller):
  // a sample whose size is fixed now. Each uncertified step keeps m, k and its anytime
  // evidence E_j as they are now (log_minimum: below 1 as well), for the tail's exact test.
  void begin_tail() {
    const std::int64_t J = c_.grid_size;
    queue_->begin_tail(tail_seed(seed_), J);
    c_.tail_from = c_.labels_used;
    c_.tail_size = std::min(options_.label_cap - c_.labels_used, queue_->unlabeled_in(J));
    for (std::int64_t j = depth_; j < J; ++j) {
      SequentialStep& step = c_.steps[static_cast<std::size_t>(j)];
      step.known_m = step.m;
      step.known_k = step.k;
      const long double log_e =
          strata_->log_minimum(static_cast<std::size_t>(j + 1), step.null_boundary);
      // exp and the cast to double may round up: take a hair less (E_j only lowers the level)
      step.switch_evidence =
          static_cast<double>(std::exp(std::min(log_e, 700.0L))) * (1.0 - 0x1p-50);
    }
  }

  // The tail's end: for each step uncertified at the switch, the exact composition test of its
  // tail labels, conditional on the labels before: given them, the m - known_m tail labels in
  // S_j are a uniform draw from its N - known_m unlabeled trajectories, which hold at least
  // U* - known_k unsafe under H_j. Its level is delta (w + (1 - w) E_j): p_tail is the p-value
  // over w + (1 - w) E_j (rounded up), so p_j = min(p_anytime / (1 - w), p_tail) <= delta iff
  // one of the two rejects (docs/sequential.md, "The fixed tail").
  void test_tail() {
    const double w = options_.tail_share;
    for (SequentialStep& step : c_.steps) {
      if (!step.known_m) continue;
      const std::int64_t left = step.N - *step.known_m, bad = step.null_boundary - *step.known_k;
      const std::int64_t drawn = step.m - *step.known_m, seen = step.k - *step.known_k;
      double p = 1.0;
      if (bad > left)
        p = 0.0;  // the labels before leave too few trajectories for U* unsafe
      else if (bad > 0)
        p = ltt::detail::round_up_pvalue(ltt::hypergeometric_cdf(seen, left, bad, drawn));
      // E_j may exceed 1 (evidence short of the anytime level); the level stays at most 1
      const double share = std::min(
          1.0 / options_.delta,
          ltt::detail::share_sum_down(w, ltt::detail::complement_share(w), *step.switch_evidence));
      step.p_tail = share > 0.0 ? ltt::detail::round_up_pvalue(p / share) : 1.0;
      step.p = std::min(step.p, *step.p_tail);
    }
  }

  void open_certificate(std::int64_t N, std::int64_t J) {
    c_.order = options_.order;
    c_.alpha = options_.alpha;
    c_.delta = options_.delta;
    c_.pool_size = N;
    c_.label_cap = options_.label_cap;
    c_.target_step = options_.target_step;
    c_.grid_size = J;
    c_.merged_quantiles = grid_.merged_quantiles;
    for (std::int64_t j = 0; j < J; ++j) {
      const auto s = static_cast<std::size_t>(j);
      SequentialStep step;
      step.quantile = grid_.quantile[s];
      step.lambda = grid_.lambda[s];
      step.N = grid_.selection_size[s];
      step.null_boundary = ltt::null_boundary(step.N, options_.alpha);
      c_.steps.push_back(step);
      // the stratified order tests H_1 alone with the one-selection p-value
      if (j == 0 || !stratified()) p_.emplace_back(step.N, step.null_boundary, prior());
    }
  }

  // A label from stratum `first` lands in S(lambda_j) for every j >= first. Uniform order:
  // every p_j it lands in moves. Stratified: the strata's evidence and H_1's p-value move; the
  // deeper H_j are evaluated by advance_walk while they are the first uncertified.
  void update_pvalues(std::int64_t first, bool unsafe) {
    const std::int64_t J = c_.grid_size;
    if (stratified()) strata_->update(static_cast<std::size_t>(first), unsafe);
    for (std::int64_t j = first; j < J; ++j) {
      auto& step = c_.steps[static_cast<std::size_t>(j)];
      step.m += 1;
      step.k += unsafe;
      if (j >= static_cast<std::int64_t>(p_.size())) continue;
      p_[static_cast<std::size_t>(j)].update(unsafe);
      step.p_anytime = p_[static_cast<std::size_t>(j)].pvalue();
      step.p = combined_pvalue(step);
    }
    // The exact test at the cap: a fixed-size uniform sample of S_j in the uniform order; in
    // the stratified one, of S_1 only while nothing is certified (every label went there).
    if (c_.labels_used == options_.label_cap && options_.cap_test_share > 0.0) {
      const std::size_t tested = stratified() ? (depth_ == 0 ? 1 : 0) : c_.steps.size();
      for (std::size_t j = 0; j < tested; ++j) {
        SequentialStep& step = c_.steps[j];
        step.p_cap = ltt::composition_pvalue(step.k, step.m, step.N, options_.alpha);
        step.p = combined_pvalue(step);
      }
    }
  }

  // min(1, p_anytime / (1 - w), p_cap / w), each quotient rounded up: p_j <= delta iff one of
  // the two tests rejects at its share of delta. The stratified order's deeper steps have no
  // cap test and spend all of delta on the anytime one, unless the fixed tail is on.
  double combined_pvalue(const SequentialStep& step) const {
    const double w = options_.cap_test_share;
    double p =
        w == 0.0 ? step.p_anytime
                 : ltt::detail::round_up_pvalue(step.p_anytime / ltt::detail::complement_share(w));
    if (step.p_cap) p = std::min(p, ltt::detail::round_up_pvalue(*step.p_cap / w));
    return std::min(1.0, p);
  }

  // A deeper stratified H_j's anytime p-value as the walk compares it with delta: itself, or
  // with the fixed tail on, over 1 - w (its test runs at delta (1 - w)).
  double anytime_share(double p_anytime) const {
    const double w = options_.tail_share;
    if (!options_.fixed_tail || w == 0.0) return p_anytime;
    return std::min(1.0,
                    ltt::detail::round_up_pvalue(p_anytime / ltt::detail::complement_share(w)));
  }

  // The strict fixed sequence on the current p_j, kept incrementally: p_j only decrease. In
  // the stratified order H_j (j >= 2) is evaluated here, across strata D_0..D_j, while it is
  // the first uncertified step; its p-value is the running maximum over those evaluations.
  void advance_walk() {
    const std::int64_t J = c_.grid_size;
    while (depth_ < J) {
      const auto d = static_cast<std::size_t>(depth_);
      SequentialStep& step = c_.steps[d];
      // On the fixed tail the anytime evidence is frozen at the switch (its level was spent
      // up to there; the tail's test continues it).
      if (stratified() && depth_ > 0 && !c_.tail_from) {
        log_max_[d] = std::max(log_max_[d], strata_->log_evidence(d + 1, step.null_boundary));
        step.p_anytime = ltt::anytime_pvalue(log_max_[d]);
        step.p = anytime_share(step.p_anytime);
      }
      if (step.p > options_.delta) break;
      step.rejected = true;
      step.certified_after = c_.labels_used;
      ++depth_;
    }
    c_.depth_trace.push_back(depth_);
  }

  SequentialSelectionOptions options_;
  std::uint64_t seed_ = 0;
  std::vector<double> scores_;          // for the fallback's K-th score
  std::vector<std::uint8_t> sequence_;  // every label so far, in order (the fallback's)
  ThresholdGrid grid_;
  SequentialCertificate c_;
  std::optional<LabelQueue> queue_;
  std::vector<ltt::SequentialCompositionPvalue> p_;  // every H_j (uniform), H_1 (stratified)
  std::optional<ltt::StratifiedCompositionEvidence> strata_;  // stratified
  std::vector<long double> log_max_;  // stratified: running maximum of H_j's log evidence
  std::int64_t depth_ = 0;            // certified steps: H_0 .. H_{depth-1} rejected
  // The refusal rule's simulated run of H_1's test, kept between calls (a cache: the rule is
  // const, and a walk is not shared between threads).
  mutable detail::sequential::SafeRunToLevel safe_run_;
};

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
