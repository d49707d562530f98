#pragma once
// Sequential calibrated selection (issue 16): the calibrated selection of
// <curation/calibrated_selection.hpp> with labels bought one at a time, stopped as soon as the
// answer is known. The grid, the nested selections S(lambda_j) and the hypotheses
// H_j: U_j >= U*_j = floor(alpha N_j) + 1 are those of the fixed-n walk; only the p-values
// change, to the anytime-valid ones of <ltt/sequential_pvalue.hpp>.
//
// Labels come in a uniformly random order fixed by a seed (draw_label_order: the first
// label_cap positions of a uniform permutation of the pool). Every prefix is then a uniform
// draw without replacement from the pool, and the labels that land in S_j arrive as a uniform
// draw without replacement from S_j, which is what makes each p_j(t) anytime valid.
//
// After every label, each p_j it lands in is updated and the strict fixed-sequence walk is
// rerun on the current p_j(t). The p_j(t) are running minima, so once H_j is rejected it stays
// rejected and the certified depth never decreases; the walk is kept incrementally, which is
// the same walk as ltt::fixed_sequence on the current p-values.
//
// Power: each H_j is tested twice, by the anytime p-value at delta (1 - w) after every label
// and, if the run reaches the cap, by the exact fixed-n composition test of the cap's labels
// (ltt::composition_pvalue on m_j, k_j) at delta w; p_j = min(1, p_anytime/(1-w), p_cap/w).
// The exact test at the fixed time label_cap is valid (given m_j the labels in S_j are a
// uniform draw from it), so Pr[either rejects a true H_j] <= delta (1 - w) + delta w = delta
// (a union bound). w = cap_test_share, 0.2 by default; the prior is sequential_default_prior.
//
// Why a certificate at any stopping time is valid: let H_s be the first true null in grid
// order. A false certification needs H_s rejected at the stopping time T, i.e. p_s(T) <= delta,
// which implies that the anytime p-value of H_s reached delta (1 - w) at some t (probability
// at most delta (1 - w) by Ville's inequality, whatever T is) or the exact test at the cap
// rejected H_s (probability at most delta w, whether or not the run reached the cap). The
// stopping rules, applied after each label:
//  - label_cap: label_cap labels used;
//  - target_certified: step target_step (or a deeper one) is certified;
//  - early_refusal: nothing is certified and even if the labels left under the cap that land
//    in S_1 (as many as land there except with probability refusal_rate) were all safe, H_1
//    would not be rejected: H_1 is still rejected with probability at most refusal_rate;
//  - stalled: every step is certified, or the depth has not grown for stall_labels labels
//    and the closed-form forecast of the next step at the cap is below stall_rate.
// apply_stop_rule sets them from a `--stop` name (cap, target:J, stall:L, early-refusal, auto).
// Each is a stopping time of the label sequence, and the bound above holds at every stopping
// time, so none of them costs validity; they only decide how many labels are bought. (A run
// that early refusal or a stall ends might have certified more later: that loses power, never
// validity.)
//
// A refusal here has no uncertified fallback: the fixed-n fallback's Clopper-Pearson bound
// assumes a fixed sample size, which an optionally stopped sample does not have.

#include <curation/detail/check.hpp>
#include <curation/detail/random.hpp>
#include <curation/threshold_grid.hpp>
#include <ltt/bounds.hpp>
#include <ltt/certification_rate.hpp>
#include <ltt/detail/check.hpp>
#include <ltt/hypergeometric.hpp>
#include <ltt/pvalue.hpp>
#include <ltt/sequential_pvalue.hpp>

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

enum class StoppingReason { label_cap, target_certified, early_refusal, stalled };

inline constexpr StoppingReason stopping_reasons[] = {
    StoppingReason::label_cap, StoppingReason::target_certified, StoppingReason::early_refusal,
    StoppingReason::stalled};

constexpr std::string_view stopping_reason_name(StoppingReason reason) {
  switch (reason) {
    case StoppingReason::label_cap:
      return "label_cap";
    case StoppingReason::target_certified:
      return "target_certified";
    case StoppingReason::early_refusal:
      return "early_refusal";
    case StoppingReason::stalled:
      return "stalled";
  }
  return "unknown";
}

struct SequentialSelectionOptions {
  double alpha = 0.25;
  double delta = 0.1;
  std::vector<double> quantiles{paper_grid_quantiles.begin(), paper_grid_quantiles.end()};
  std::int64_t label_cap = 200;             // n_max, at most the pool size
  std::optional<std::int64_t> target_step;  // stop once this grid step (0-based) is certified
  bool early_refusal = true;
  // Early refusal fires once the probability that H_1 is still rejected is at most this.
  double refusal_rate = 0.05;
  // stall:L: stop once the certified depth has not grown for this many labels and the
  // closed-form forecast rate of the next step at the cap is below stall_rate.
  std::optional<std::int64_t> stall_labels;
  double stall_rate = 0.5;
  // Of every p_j; unset: ltt::sequential_default_prior(alpha).
  std::optional<ltt::BetaMixturePrior> prior;
  // w: the share of delta spent on one exact composition test at the cap (see "Power" above);
  // the anytime tests run at delta (1 - w). 0 <= w < 1; 0 is the anytime test alone.
  double cap_test_share = 0.2;
};

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
};

struct SequentialCertificate {
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
  StoppingReason reason = StoppingReason::label_cap;
  std::vector<std::int64_t> depth_trace;  // certified steps after each label, nondecreasing

  bool certified = false;
  std::optional<std::int64_t> certified_step;  // deepest certified grid step
  double threshold = 0.0;                      // its lambda (0 when refused)
  double quantile = 0.0;                       // its q
  std::int64_t selection_size = 0;             // its N_j (0 when refused)
};

// `--stop auto`: the stall rule with this many labels, plus early refusal.
inline constexpr std::int64_t auto_stall_labels = 20;

// The stopping rule named on the command line (`--stop RULE`) or in Python, set in `options`
// (label_cap, the rates, the prior and the levels are left as they are):
//   cap            only the label cap
//   target:J       also stop once grid step J (0-based, as certified_step) is certified
//   stall:L        also the stall rule with L labels
//   early-refusal  also early refusal
//   auto           stall:20 and early refusal (the default)
inline void apply_stop_rule(std::string_view rule, SequentialSelectionOptions& options) {
  constexpr std::string_view fn = "ltt::curation::apply_stop_rule";
  const auto count_after = [&](std::string_view prefix) -> std::optional<std::int64_t> {
    if (!rule.starts_with(prefix)) return std::nullopt;
    const std::string_view digits = rule.substr(prefix.size());
    std::int64_t value = -1;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (digits.empty() || ec != std::errc{} || end != digits.data() + digits.size() || value < 0)
      detail::invalid(fn, "stop", std::string(rule),
                      "must give a nonnegative integer after '" + std::string(prefix) + "'");
    return value;
  };
  options.target_step.reset();
  options.stall_labels.reset();
  options.early_refusal = false;
  if (rule == "cap") return;
  if (rule == "early-refusal") {
    options.early_refusal = true;
  } else if (rule == "auto") {
    options.early_refusal = true;
    options.stall_labels = auto_stall_labels;
  } else if (const auto J = count_after("target:")) {
    options.target_step = *J;
  } else if (const auto L = count_after("stall:")) {
    options.stall_labels = *L;
  } else {
    detail::invalid(fn, "stop", std::string(rule),
                    "must be cap, target:J, stall:L, early-refusal or auto");
  }
}

// The first `count` positions of a uniform random permutation of {0, ..., pool_size - 1}, in
// draw order (partial Fisher-Yates on the seeded std::mt19937_64 of draw_calibration). Every
// prefix is a uniform draw without replacement.
inline std::vector<std::int64_t> draw_label_order(std::int64_t pool_size, std::int64_t count,
                                                  std::uint64_t seed) {
  constexpr std::string_view fn = "ltt::curation::draw_label_order";
  ltt::detail::require_count(fn, "pool_size", pool_size);
  ltt::detail::require_count(fn, "count", count);
  ltt::detail::require_at_most(fn, "count", count, "pool_size", pool_size);
  std::mt19937_64 rng(seed);
  std::vector<std::int64_t> perm(static_cast<std::size_t>(pool_size));
  for (std::int64_t i = 0; i < pool_size; ++i) perm[static_cast<std::size_t>(i)] = i;
  for (std::int64_t i = 0; i < count; ++i) {
    const std::int64_t j = i + detail::uniform_below(rng, pool_size - i);
    std::swap(perm[static_cast<std::size_t>(i)], perm[static_cast<std::size_t>(j)]);
  }
  perm.resize(static_cast<std::size_t>(count));
  return perm;
}

namespace detail::sequential {

// Would H_1 be rejected if the next `more` labels all landed in S_1 and were safe: the
// anytime test at delta (1 - w), or (w > 0, the cap reached) the exact test at delta w?
inline bool can_still_certify(ltt::SequentialCompositionPvalue p, const SequentialStep& s1,
                              std::int64_t more, double alpha, double delta, double w) {
  const double level = delta * (1.0 - w);
  for (std::int64_t i = 0; i < more && p.pvalue() > level; ++i) p.update(false);
  if (p.pvalue() <= level) return true;
  return w > 0.0 && ltt::composition_pvalue(s1.k, s1.m + more, s1.N, alpha) <= delta * w;
}

inline void check_options(std::string_view fn, std::int64_t N,
                          const SequentialSelectionOptions& o) {
  ltt::detail::require_open_unit(fn, "alpha", o.alpha);
  ltt::detail::require_open_unit(fn, "delta", o.delta);
  if (o.label_cap < 1 || o.label_cap > N)
    detail::invalid(fn, "label_cap", detail::show(o.label_cap),
                    "must lie in [1, pool size = " + detail::show(N) + "]");
  if (!(o.cap_test_share >= 0.0 && o.cap_test_share < 1.0))
    detail::invalid(fn, "cap_test_share", detail::show(o.cap_test_share), "must lie in [0, 1)");
  detail::require_closed_unit(fn, "refusal_rate", o.refusal_rate);
  detail::require_closed_unit(fn, "stall_rate", o.stall_rate);
  if (o.stall_labels && *o.stall_labels < 1)
    detail::invalid(fn, "stall_labels", detail::show(*o.stall_labels), "must be at least 1");
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

}  // namespace detail::sequential

// The walk as a state that takes one label at a time (the order is the caller's: a uniformly
// random one, draw_label_order). add_label updates every p_j the label lands in and the
// certified depth; stopping_reason says which rule, if any, fires after the labels so far;
// certificate() is the certificate if the walk stopped now.
class SequentialWalk {
 public:
  SequentialWalk(std::span<const double> scores, SequentialSelectionOptions options)
      : options_(std::move(options)) {
    constexpr std::string_view fn = "ltt::curation::sequential_selection";
    detail::require_nonempty(fn, "scores", scores.size());
    detail::require_finite(fn, "scores", scores);
    scores_.assign(scores.begin(), scores.end());
    const std::int64_t N = detail::ssize(scores.size());
    detail::sequential::check_options(fn, N, options_);
    grid_ = threshold_grid(scores, options_.quantiles);
    const std::int64_t J = grid_.size();
    if (options_.target_step && (*options_.target_step < 0 || *options_.target_step >= J))
      detail::invalid(fn, "target_step", detail::show(*options_.target_step),
                      "must be a grid step in [0, " + detail::show(J) + ")");
    open_certificate(N, J);
    seen_.assign(static_cast<std::size_t>(N), false);
  }

  // The label of pool position `position` (not labeled before); `t` names it in errors.
  void add_label(std::int64_t position, bool unsafe) {
    constexpr std::string_view fn = "ltt::curation::sequential_selection";
    const std::int64_t N = c_.pool_size;
    const auto t = static_cast<std::size_t>(c_.labels_used);
    if (position < 0 || position >= N)
      detail::invalid(fn, detail::at("order", t), detail::show(position),
                      "must be a pool position in [0, " + detail::show(N) + ")");
    if (seen_[static_cast<std::size_t>(position)])
      detail::invalid(fn, detail::at("order", t), detail::show(position),
                      "repeats a pool position (labels are drawn without replacement)");
    seen_[static_cast<std::size_t>(position)] = true;
    c_.labels_used += 1;
    c_.unsafe_labels += unsafe;
    update_pvalues(scores_[static_cast<std::size_t>(position)], unsafe);
    advance_walk();
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
    }
    return c;
  }

  const SequentialSelectionOptions& options() const { return options_; }
  std::int64_t labels_used() const { return c_.labels_used; }
  std::int64_t pool_size() const { return c_.pool_size; }
  bool labeled(std::int64_t position) const { return seen_[static_cast<std::size_t>(position)]; }

 private:
  // Nothing certified, and even if the labels left that land in S_1 (at most landing_bound of
  // them, except with probability refusal_rate) were all safe, H_1 would not be rejected.
  bool refusal_is_clear() const {
    const SequentialStep& s0 = c_.steps[0];
    const std::int64_t more = detail::sequential::landing_bound(
        c_.pool_size - c_.labels_used, s0.N - s0.m, options_.label_cap - c_.labels_used,
        options_.refusal_rate);
    return !detail::sequential::can_still_certify(p_[0], s0, more, options_.alpha, options_.delta,
                                                  options_.cap_test_share);
  }

  // The depth has not grown for stall_labels labels and the next step's closed-form forecast
  // (ltt::certification_rate of the fixed-n test at the cap, at an optimistic U_d: N_d times
  // the 90% Clopper-Pearson lower bound of k_d / m_d) is below stall_rate; or every step is
  // certified.
  bool stalled() const {
    if (depth_ == c_.grid_size) return true;
    const std::int64_t grown_at =
        depth_ == 0 ? 0 : *c_.steps[static_cast<std::size_t>(depth_ - 1)].certified_after;
    if (c_.labels_used - grown_at < *options_.stall_labels) return false;
    const SequentialStep& next = c_.steps[static_cast<std::size_t>(depth_)];
    if (next.m == 0) return false;
    const auto U = static_cast<std::int64_t>(
        std::floor(static_cast<double>(next.N) * ltt::clopper_pearson_lower(next.k, next.m, 0.1)));
    return ltt::certification_rate(c_.pool_size, next.N, U, options_.label_cap, options_.alpha,
                                   options_.delta) < options_.stall_rate;
  }

  void open_certificate(std::int64_t N, std::int64_t J) {
    c_.alpha = options_.alpha;
    c_.delta = options_.delta;
    c_.pool_size = N;
    c_.label_cap = options_.label_cap;
    c_.target_step = options_.target_step;
    c_.grid_size = J;
    c_.merged_quantiles = grid_.merged_quantiles;
    p_.reserve(static_cast<std::size_t>(J));
    for (std::int64_t j = 0; j < J; ++j) {
      const auto s = static_cast<std::size_t>(j);
      SequentialStep step;
      step.quantile = grid_.quantile[s];
      step.lambda = grid_.lambda[s];
      step.N = grid_.selection_size[s];
      step.null_boundary = ltt::null_boundary(step.N, options_.alpha);
      c_.steps.push_back(step);
      p_.emplace_back(
          step.N, step.null_boundary,
          options_.prior ? *options_.prior : ltt::sequential_default_prior(options_.alpha));
    }
  }

  // S(lambda_j) holds a trajectory of score g for every j from the first lambda_j <= g on.
  void update_pvalues(double g, bool unsafe) {
    const std::int64_t J = c_.grid_size;
    const auto first = static_cast<std::int64_t>(
        std::lower_bound(grid_.lambda.begin(), grid_.lambda.end(), g, std::greater<>()) -
        grid_.lambda.begin());
    for (std::int64_t j = first; j < J; ++j) {
      auto& step = c_.steps[static_cast<std::size_t>(j)];
      p_[static_cast<std::size_t>(j)].update(unsafe);
      step.m += 1;
      step.k += unsafe;
      step.p_anytime = p_[static_cast<std::size_t>(j)].pvalue();
      step.p = combined_pvalue(step);
    }
    if (c_.labels_used == options_.label_cap && options_.cap_test_share > 0.0)
      for (SequentialStep& step : c_.steps) {
        step.p_cap = ltt::composition_pvalue(step.k, step.m, step.N, options_.alpha);
        step.p = combined_pvalue(step);
      }
  }

  // min(1, p_anytime / (1 - w), p_cap / w), each quotient rounded up: p_j <= delta iff one of
  // the two tests rejects at its share of delta.
  double combined_pvalue(const SequentialStep& step) const {
    const double w = options_.cap_test_share;
    double p = w == 0.0 ? step.p_anytime : ltt::detail::round_up_pvalue(step.p_anytime / (1.0 - w));
    if (step.p_cap) p = std::min(p, ltt::detail::round_up_pvalue(*step.p_cap / w));
    return std::min(1.0, p);
  }

  // The strict fixed sequence on the current p_j, kept incrementally: p_j only decrease.
  void advance_walk() {
    const std::int64_t J = c_.grid_size;
    while (depth_ < J && c_.steps[static_cast<std::size_t>(depth_)].p <= options_.delta) {
      c_.steps[static_cast<std::size_t>(depth_)].rejected = true;
      c_.steps[static_cast<std::size_t>(depth_)].certified_after = c_.labels_used;
      ++depth_;
    }
    c_.depth_trace.push_back(depth_);
  }

  SequentialSelectionOptions options_;
  std::vector<double> scores_;
  ThresholdGrid grid_;
  SequentialCertificate c_;
  std::vector<ltt::SequentialCompositionPvalue> p_;
  std::vector<bool> seen_;
  std::int64_t depth_ = 0;  // certified steps: H_0 .. H_{depth-1} rejected
};

// The walk on finite scores, asking unsafe_of(position) for the label of each position of
// `order` in turn (a uniformly random order: draw_label_order) until a stopping rule fires.
template <class UnsafeOf>
requires std::invocable<UnsafeOf&, std::int64_t> SequentialCertificate
sequential_selection(std::span<const double> scores, std::span<const std::int64_t> order,
                     UnsafeOf&& unsafe_of, const SequentialSelectionOptions& options = {}) {
  constexpr std::string_view fn = "ltt::curation::sequential_selection";
  SequentialWalk walk(scores, options);
  if (detail::ssize(order.size()) < options.label_cap)
    detail::invalid(fn, "order.size()", detail::show(detail::ssize(order.size())),
                    "must be at least label_cap = " + detail::show(options.label_cap));
  for (std::size_t t = 0;; ++t) {
    const std::int64_t position = order[t];
    if (position >= 0 && position < walk.pool_size() && !walk.labeled(position)) {
      walk.add_label(position, static_cast<bool>(unsafe_of(position)));
    } else {
      walk.add_label(position, false);  // throws, naming order[t]
    }
    if (const auto reason = walk.stopping_reason()) return walk.certificate(*reason);
  }
}

// Simulation and validation on a pool whose labels are all known: the order from
// draw_label_order(N, label_cap, seed), the labels from pool_unsafe.
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
  const std::int64_t N = detail::ssize(scores.size());
  if (options.label_cap < 1 || options.label_cap > N)
    detail::invalid(fn, "label_cap", detail::show(options.label_cap),
                    "must lie in [1, pool size = " + detail::show(N) + "]");
  const std::vector<std::int64_t> order = draw_label_order(N, options.label_cap, seed);
  return sequential_selection(
      scores, order,
      [&](std::int64_t position) { return pool_unsafe[static_cast<std::size_t>(position)] != 0; },
      options);
}

}  // namespace ltt::curation
