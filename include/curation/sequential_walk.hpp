#pragma once
// The sequential walk as a state that takes one label at a time (SequentialWalk): the label
// order, the anytime p-values, the strict fixed-sequence walk on them, the stopping rules and
// the fixed tail. What it computes and why a certificate at any stopping time is valid:
// <curation/sequential_selection.hpp>, which runs it to a stop; docs/sequential.md.

#include <curation/detail/check.hpp>
#include <curation/detail/fixed_walk.hpp>
#include <curation/detail/stop_rule_bounds.hpp>
#include <curation/detail/tail_forecast.hpp>
#include <curation/label_order.hpp>
#include <curation/selection.hpp>
#include <curation/sequential_certificate.hpp>
#include <curation/sequential_options.hpp>
#include <curation/threshold_grid.hpp>
#include <ltt/certification_rate.hpp>
#include <ltt/detail/check.hpp>
#include <ltt/detail/level_split.hpp>
#include <ltt/hypergeometric.hpp>
#include <ltt/pvalue.hpp>
#include <ltt/sequential_pvalue.hpp>
#include <ltt/stratified_sequential_pvalue.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

namespace ltt::curation {

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
    if (options_.fixed_walk) open_fixed_walk();
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
    if (queue_->stratum_of(position) == 0) first_stratum_.push_back(unsafe);
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
    const bool decided_fixed = options_.fixed_walk && depth_ == upper_depth_;
    if (c_.labels_used == 0)  // the fixed walk may be decided by its draw alone
      return decided_fixed ? std::optional(StoppingReason::decided) : std::nullopt;
    if (options_.target_step && depth_ > *options_.target_step)
      return StoppingReason::target_certified;
    if (c_.labels_used == options_.label_cap) return StoppingReason::label_cap;
    if (options_.early_refusal && depth_ == 0 && refusal_is_clear())
      return StoppingReason::early_refusal;
    if (options_.stall_labels && stalled()) return StoppingReason::stalled;
    if (stratified() && (depth_ == c_.grid_size || !next_position()))
      return StoppingReason::decided;
    if (decided_fixed) return StoppingReason::decided;
    return std::nullopt;
  }

  // The fixed walk: the most steps it may still certify (depth_: certified whatever is left).
  std::int64_t upper_depth() const { return upper_depth_; }

  // The certificate after the labels so far, with `reason` as its stopping reason.
  SequentialCertificate certificate(StoppingReason reason = StoppingReason::label_cap) const {
    SequentialCertificate c = c_;
    c.reason = reason;
    if (options_.fixed_walk) {
      c.fixed_walk = true;
      c.depth_upper = upper_depth_;
      fixed_->state_pvalues(c.steps);
    }
    c.certified = depth_ > 0;
    if (c.certified) {
      c.certified_step = depth_ - 1;
      const SequentialStep& step = c.steps[static_cast<std::size_t>(depth_ - 1)];
      c.threshold = step.lambda;
      c.quantile = step.quantile;
      c.selection_size = step.N;
    } else {
      // Nothing certified: in the stratified order every label so far came from S_1; the fixed
      // walk's labels of S_1 are a uniform draw from it (it never passes S_1's members over).
      c.fallback = true;
      c.fallback_record = sequential_fallback(
          c.pool_size, stratified() || options_.fixed_walk ? c.steps[0].N : c.pool_size,
          options_.fixed_walk ? first_stratum_ : sequence_, options_.delta,
          options_.minimum_selection);
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
  // Every grid step's counts and p-values after the labels so far, without the certificate's
  // fallback (<curation/several_budgets_sequential.hpp> reads them after every label).
  std::span<const SequentialStep> steps() const { return c_.steps; }
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
  // all, labels left, and the rule of options_.tail_switch: forecast, the plug-in forecast of
  // the depth at the cap of switching now at least that of going on (tail_forecast, plus
  // switch_margin); stall, where the stall rule would look (the depth unchanged for
  // stall_labels labels) the forecast still at least stall_rate: the next step looks
  // certifiable by an exact test, but not by the anytime one within the cap
  // (anytime_out_of_reach). At depth 0 there is no switch: the labels stay in S_1, where H_1's
  // own exact test at the cap uses them. Each rule reads only the labels so far.
  bool switches_to_tail() const {
    if (!options_.fixed_tail || !stratified() || c_.tail_from) return false;
    if (depth_ < 1 || depth_ == c_.grid_size || c_.labels_used >= options_.label_cap) return false;
    if (options_.tail_switch == TailSwitch::first_certificate) return true;
    if (options_.tail_switch == TailSwitch::forecast) {
      const detail::sequential::TailForecast f = tail_forecast();
      return f.switch_now >= f.go_on + options_.switch_margin;
    }
    return depth_unchanged(options_.stall_labels.value_or(auto_stall_labels)) &&
           forecast() >= options_.stall_rate &&
           (anytime_out_of_reach() || last_step_out_of_reach());
  }

  // <curation/detail/tail_forecast.hpp> on the strata's counts now.
  detail::sequential::TailForecast tail_forecast() const {
    detail::sequential::TailForecastInput in;
    for (std::size_t k = 0; k < strata_->strata(); ++k) {
      in.stratum_size.push_back(strata_->size(k));
      in.stratum_labels.push_back(strata_->labels(k));
      in.stratum_unsafe.push_back(strata_->unsafe(k));
    }
    for (const SequentialStep& step : c_.steps) in.null_boundary.push_back(step.null_boundary);
    in.depth = depth_;
    in.labels_left = options_.label_cap - c_.labels_used;
    in.alpha = options_.alpha;
    in.delta = options_.delta;
    in.tail_share = options_.tail_share;
    return detail::sequential::tail_forecast(in);
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
      // the stratified order tests H_1 alone with the one-selection p-value (the fixed walk: none)
      if (!options_.fixed_walk && (j == 0 || !stratified()))
        p_.emplace_back(step.N, step.null_boundary, prior());
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
    if (c_.labels_used == options_.label_cap && options_.cap_test_share > 0.0 &&
        !options_.fixed_walk) {
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
    if (options_.fixed_walk) return advance_fixed_walk();
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

  // The fixed walk: its draw's counts, then the depths before any label.
  void open_fixed_walk() {
    std::vector<std::int64_t> strata;
    for (const std::int64_t position :
         queue_->permutation().first(static_cast<std::size_t>(options_.label_cap)))
      strata.push_back(queue_->stratum_of(position));
    fixed_.emplace(strata, c_.steps, options_.alpha, options_.delta);
    queue_->restrict_to_sample(options_.label_cap, c_.grid_size);
    advance_fixed_walk();
    c_.depth_trace.clear();  // one entry per label, as the other walks keep it
  }

  // depth_: the steps certified whatever the labels left; upper_depth_: the most the draw can
  // still certify. Steps from upper_depth_ on are refused whatever the labels left, so their
  // strata need no more labels.
  void advance_fixed_walk() {
    const detail::sequential::FixedWalkDepths d = fixed_->depths(c_.steps);
    upper_depth_ = d.upper;
    for (; depth_ < d.lower; ++depth_) {
      SequentialStep& step = c_.steps[static_cast<std::size_t>(depth_)];
      step.rejected = true;
      step.certified_after = c_.labels_used;
    }
    queue_->set_relevant_strata(upper_depth_);
    c_.depth_trace.push_back(depth_);
  }

  SequentialSelectionOptions options_;
  std::uint64_t seed_ = 0;
  std::vector<double> scores_;          // for the fallback's K-th score
  std::vector<std::uint8_t> sequence_;  // every label so far, in order (the fallback's)
  std::vector<std::uint8_t> first_stratum_;  // those of S_1's members (the fixed walk's fallback)
  // the fixed walk: its draw's counts and the depth if every label left is safe
  std::optional<detail::sequential::FixedWalkCounts> fixed_;
  std::int64_t upper_depth_ = 0;
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

}  // namespace ltt::curation
