#pragma once
// The sequential walk at several budgets b_1 < ... < b_K (docs/several-budgets.md, "Sequential:
// several budgets"): labels bought one at a time, each a cost band (<curation/cost_bands.hpp>:
// the number of budgets the episode's cost exceeds), in the uniform label order of
// <curation/label_order.hpp>, so every prefix is a uniform draw from the pool and the labels
// that land in S_j a uniform draw without replacement from S_j, at every budget at once.
//
// At grid step j and budget k the hypothesis is the fixed procedure's
//     H_jk: S(lambda_j) holds more than alpha_k N_j trajectories with cost > b_k,
// and its p-value p_jk(t) is the single-budget uniform walk's on budget k's one-bit labels
// (band > k): the anytime p-value (ltt::SequentialCompositionPvalue) at delta (1 - w) and, at
// the cap, the exact composition test at delta w, p_jk = min(1, p_anytime/(1-w), p_cap/w). Each
// budget's p-values are a SequentialWalk in the uniform order (<curation/sequential_walk.hpp>)
// fed that budget's bits: the K walks read the same seeded permutation, so they ask for the
// same position, and with one budget this walk is that walk.
//
// The procedures mirror the fixed ones (<ltt/several_budgets.hpp>):
//  - one threshold for all budgets: the strict fixed sequence on p_j(t) = max_k p_jk(t) at the
//    full delta. Under H_j = OR_k H_jk some H_jk* holds, and p_j(t) <= delta implies
//    p_jk*(t) <= delta: budget k*'s anytime test crossed its level by t or its cap test
//    rejected, probability at most delta(1 - w) + delta w = delta over the whole run. So with
//    the first true H_s of the grid, Pr[at the stopping time T some budget is violated at the
//    certified step] <= Pr[p_s(T) <= delta] <= delta, whatever T is.
//  - one threshold per budget: budget k's own strict walk on p_jk at delta_k =
//    ltt::budget_levels (sum_k delta_k <= delta); a union bound over the K walks.
// The p_jk(t) are nonincreasing in t, so the certified depths never decrease; they are kept
// incrementally after every label.
//
// Stopping rules, after each label, in this order: target_certified (every budget's certified
// depth past target_step), label_cap, decided (every budget certifies every grid step: no
// label left can change the certificate). Each is a stopping time of the label sequence, and
// the bound above holds at every stopping time.
//
// A budget with nothing certified gets the uncertified fallback of the uniform walk
// (sequential_fallback on its own bits, the pool as the population, at its level): the
// fallbacks are nested, the tightest budget's the smallest.

#include <curation/cost_bands.hpp>
#include <curation/detail/check.hpp>
#include <curation/selection.hpp>
#include <curation/sequential_certificate.hpp>
#include <curation/sequential_options.hpp>
#include <curation/sequential_walk.hpp>
#include <curation/threshold_grid.hpp>
#include <ltt/detail/check.hpp>
#include <ltt/several_budgets.hpp>

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

namespace ltt::curation {

struct SeveralBudgetsSequentialOptions {
  std::vector<double> alphas;  // alpha_k, one per budget (tightest budget first)
  double delta = 0.1;
  ltt::BudgetProcedure procedure = ltt::BudgetProcedure::one_threshold;
  std::vector<double> quantiles{paper_grid_quantiles.begin(), paper_grid_quantiles.end()};
  std::int64_t label_cap = 200;             // n_max, at most the pool size
  std::optional<std::int64_t> target_step;  // stop once every budget certifies this step
  // Of every p_jk; unset: ltt::sequential_default_prior(alpha_k) for budget k.
  std::optional<ltt::BetaMixturePrior> prior;
  double cap_test_share = 0.2;  // w, as SequentialSelectionOptions::cap_test_share
  std::int64_t minimum_selection = 50;
};

struct SeveralBudgetsSequentialCertificate {
  ltt::BudgetProcedure procedure = ltt::BudgetProcedure::one_threshold;
  double delta = 0.0;
  std::vector<double> levels;         // delta_k each budget's walk runs at
  std::vector<double> joint_pvalues;  // one threshold: max_k p_jk at every grid step
  std::int64_t labels_used = 0;
  std::vector<std::int64_t> band_labels;  // labels of band 0, 1, ..., K
  StoppingReason reason = StoppingReason::label_cap;
  bool certified = false;  // every budget certified
  // One per budget, tightest first: its steps (p_jk and counts), its decisions (under one
  // threshold the joint walk's), its depth after every label, its threshold or fallback.
  std::vector<SequentialCertificate> budgets;
};

class SeveralBudgetsSequentialWalk {
 public:
  SeveralBudgetsSequentialWalk(std::span<const double> scores,
                               SeveralBudgetsSequentialOptions options, std::uint64_t seed)
      : options_(std::move(options)) {
    constexpr std::string_view fn = "ltt::curation::several_budgets_sequential";
    detail::require_nonempty(fn, "scores", scores.size());
    detail::require_finite(fn, "scores", scores);
    const std::int64_t N = detail::ssize(scores.size());
    const std::int64_t K = detail::ssize(options_.alphas.size());
    if (K < 1 || K > max_budgets)
      detail::invalid(fn, "alphas.size()", detail::show(K),
                      "must lie in [1, " + detail::show(max_budgets) + "] (one alpha per budget)");
    for (std::size_t k = 0; k < options_.alphas.size(); ++k)
      ltt::detail::require_open_unit(fn, detail::at("alphas", k), options_.alphas[k]);
    ltt::detail::require_open_unit(fn, "delta", options_.delta);
    if (options_.label_cap < 1 || options_.label_cap > N)
      detail::invalid(fn, "label_cap", detail::show(options_.label_cap),
                      "must lie in [1, pool size = " + detail::show(N) + "]");
    if (!(options_.cap_test_share >= 0.0 && options_.cap_test_share < 1.0))
      detail::invalid(fn, "cap_test_share", detail::show(options_.cap_test_share),
                      "must lie in [0, 1)");
    ltt::detail::require_count(fn, "minimum_selection", options_.minimum_selection);
    grid_ = threshold_grid(scores, options_.quantiles);
    const std::int64_t J = grid_.size();
    if (options_.target_step && (*options_.target_step < 0 || *options_.target_step >= J))
      detail::invalid(fn, "target_step", detail::show(*options_.target_step),
                      "must be a grid step in [0, " + detail::show(J) + ")");
    levels_ = ltt::budget_levels(options_.procedure, options_.delta, K);
    for (std::int64_t k = 0; k < K; ++k) walks_.emplace_back(scores, budget_options(k), seed);
    scores_.assign(scores.begin(), scores.end());
    depth_.assign(static_cast<std::size_t>(K), 0);
    certified_after_.assign(static_cast<std::size_t>(K),
                            std::vector<std::optional<std::int64_t>>(static_cast<std::size_t>(J)));
    traces_.resize(static_cast<std::size_t>(K));
    bits_.resize(static_cast<std::size_t>(K));
    band_labels_.assign(static_cast<std::size_t>(K + 1), 0);
  }

  // The pool position to label next (the same for every budget: one permutation); none when
  // the pool is labeled in full.
  std::optional<std::int64_t> next_position() const { return walks_.front().next_position(); }
  // The next `count` positions: the uniform order does not depend on the labels.
  std::vector<std::int64_t> planned(std::int64_t count) const {
    return walks_.front().planned(count);
  }

  // The band of `position` (the number of budgets its cost exceeds, 0..K), which must be
  // next_position().
  void add_label(std::int64_t position, std::int64_t band) {
    constexpr std::string_view fn = "ltt::curation::several_budgets_sequential";
    const std::int64_t K = budgets();
    if (band < 0 || band > K)
      detail::invalid(fn, "band", detail::show(band),
                      "must lie in [0, " + detail::show(K) + "] (the number of budgets exceeded)");
    const std::optional<std::int64_t> next = next_position();
    if (!next)
      detail::invalid(fn, "position", detail::show(position),
                      "cannot be labeled: no position is left to label");
    if (position != *next)
      detail::invalid(fn, "position", detail::show(position),
                      "must be the next position of the label order, " + detail::show(*next) +
                          " (the order is fixed before labeling for the guarantee)");
    for (std::int64_t k = 0; k < K; ++k) {
      walks_[static_cast<std::size_t>(k)].add_label(position, band > k);
      bits_[static_cast<std::size_t>(k)].push_back(band > k ? 1 : 0);
    }
    band_labels_[static_cast<std::size_t>(band)] += 1;
    labels_used_ += 1;
    advance_walks();
  }

  // The first stopping rule that fires after the labels so far; none before the first label.
  std::optional<StoppingReason> stopping_reason() const {
    if (labels_used_ == 0) return std::nullopt;
    const std::int64_t shallowest = *std::min_element(depth_.begin(), depth_.end());
    if (options_.target_step && shallowest > *options_.target_step)
      return StoppingReason::target_certified;
    if (labels_used_ == options_.label_cap) return StoppingReason::label_cap;
    if (shallowest == grid_.size()) return StoppingReason::decided;
    return std::nullopt;
  }

  // The certificate after the labels so far, with `reason` as its stopping reason.
  SeveralBudgetsSequentialCertificate certificate(
      StoppingReason reason = StoppingReason::label_cap) const {
    SeveralBudgetsSequentialCertificate c;
    c.procedure = options_.procedure;
    c.delta = options_.delta;
    c.levels = levels_;
    c.labels_used = labels_used_;
    c.band_labels = band_labels_;
    c.reason = reason;
    if (options_.procedure == ltt::BudgetProcedure::one_threshold)
      for (std::int64_t j = 0; j < grid_.size(); ++j) c.joint_pvalues.push_back(joint_pvalue(j));
    c.certified = true;
    for (std::int64_t k = 0; k < budgets(); ++k) {
      c.budgets.push_back(budget_certificate(k, reason));
      c.certified = c.certified && c.budgets.back().certified;
    }
    return c;
  }

  const SeveralBudgetsSequentialOptions& options() const { return options_; }
  std::int64_t budgets() const { return detail::ssize(walks_.size()); }
  std::int64_t labels_used() const { return labels_used_; }
  std::int64_t pool_size() const { return detail::ssize(scores_.size()); }
  std::int64_t grid_size() const { return grid_.size(); }
  std::span<const double> levels() const { return levels_; }
  // Budget k's certified steps now (under one threshold every budget's is the joint depth).
  std::int64_t depth(std::int64_t k) const { return depth_[static_cast<std::size_t>(k)]; }
  // Budget k's p-values and counts now, p_jk at entry j.
  std::span<const SequentialStep> steps(std::int64_t k) const {
    return walks_[static_cast<std::size_t>(k)].steps();
  }
  // The seeded permutation the label order reads (`ltt draw --sequential` prints it).
  std::span<const std::int64_t> permutation() const { return walks_.front().permutation(); }

 private:
  // Budget k's single-budget walk: the uniform order, its alpha and level, only the cap as a
  // stop rule (this walk stops them all).
  SequentialSelectionOptions budget_options(std::int64_t k) const {
    SequentialSelectionOptions o;
    o.order = LabelOrder::uniform;
    o.alpha = options_.alphas[static_cast<std::size_t>(k)];
    o.delta = levels_[static_cast<std::size_t>(k)];
    o.quantiles = options_.quantiles;
    o.label_cap = options_.label_cap;
    apply_stop_rule("cap", o);
    o.prior = options_.prior;
    o.cap_test_share = options_.cap_test_share;
    o.minimum_selection = options_.minimum_selection;
    return o;
  }

  double joint_pvalue(std::int64_t j) const {
    std::vector<double> p;
    for (const SequentialWalk& w : walks_) p.push_back(w.steps()[static_cast<std::size_t>(j)].p);
    return ltt::intersection_union_pvalue(p);
  }

  // The strict fixed sequence on the current p-values: the joint one on max_k p_jk at delta,
  // or each budget's on p_jk at delta_k. The p-values only decrease, so the walks resume where
  // they stood.
  void advance_walks() {
    const std::int64_t J = grid_.size();
    if (options_.procedure == ltt::BudgetProcedure::one_threshold) {
      std::int64_t d = depth_.front();
      while (d < J && joint_pvalue(d) <= options_.delta) {
        for (auto& after : certified_after_) after[static_cast<std::size_t>(d)] = labels_used_;
        ++d;
      }
      std::fill(depth_.begin(), depth_.end(), d);
    } else {
      for (std::size_t k = 0; k < walks_.size(); ++k) {
        std::int64_t& d = depth_[k];
        while (d < J && walks_[k].steps()[static_cast<std::size_t>(d)].p <= levels_[k]) {
          certified_after_[k][static_cast<std::size_t>(d)] = labels_used_;
          ++d;
        }
      }
    }
    for (std::size_t k = 0; k < walks_.size(); ++k) traces_[k].push_back(depth_[k]);
  }

  // Budget k's certificate, as SequentialWalk::certificate builds the uniform order's, with
  // this walk's decisions.
  SequentialCertificate budget_certificate(std::int64_t k, StoppingReason reason) const {
    const auto b = static_cast<std::size_t>(k);
    SequentialCertificate c;
    c.order = LabelOrder::uniform;
    c.alpha = options_.alphas[b];
    c.delta = levels_[b];
    c.pool_size = pool_size();
    c.label_cap = options_.label_cap;
    c.target_step = options_.target_step;
    c.grid_size = grid_.size();
    c.merged_quantiles = grid_.merged_quantiles;
    const std::span<const SequentialStep> steps = walks_[b].steps();
    c.steps.assign(steps.begin(), steps.end());
    for (std::size_t j = 0; j < c.steps.size(); ++j) {
      c.steps[j].certified_after = certified_after_[b][j];
      c.steps[j].rejected = certified_after_[b][j].has_value();
    }
    c.labels_used = labels_used_;
    c.unsafe_labels = std::count(bits_[b].begin(), bits_[b].end(), std::uint8_t{1});
    c.reason = reason;
    c.depth_trace = traces_[b];
    const std::int64_t depth = depth_[b];
    c.certified = depth > 0;
    if (c.certified) {
      c.certified_step = depth - 1;
      const SequentialStep& step = c.steps[static_cast<std::size_t>(depth - 1)];
      c.threshold = step.lambda;
      c.quantile = step.quantile;
      c.selection_size = step.N;
    } else {
      c.fallback = true;
      c.fallback_record = sequential_fallback(c.pool_size, c.pool_size, bits_[b], c.delta,
                                              options_.minimum_selection);
      const std::int64_t count = c.fallback_record->count;
      c.threshold = top_count_threshold(scores_, count);
      c.quantile = 1.0 - static_cast<double>(count) / static_cast<double>(c.pool_size);
      c.selection_size =
          std::count_if(scores_.begin(), scores_.end(), [&](double g) { return g >= c.threshold; });
    }
    return c;
  }

  SeveralBudgetsSequentialOptions options_;
  ThresholdGrid grid_;
  std::vector<double> levels_;
  std::vector<SequentialWalk> walks_;  // one per budget, on its one-bit labels
  std::vector<double> scores_;         // for the fallback's K-th score
  std::int64_t labels_used_ = 0;
  std::vector<std::int64_t> depth_;  // per budget: H_0k .. H_{d-1}k rejected
  std::vector<std::vector<std::optional<std::int64_t>>> certified_after_;  // [k][j]
  std::vector<std::vector<std::int64_t>> traces_;  // per budget, its depth after each label
  std::vector<std::vector<std::uint8_t>> bits_;    // per budget, its labels in order
  std::vector<std::int64_t> band_labels_;
};

// The walk on finite scores with the label order of `seed`, asking band_of(position) for the
// band of each position it needs until a stopping rule fires.
template <class BandOf>
requires std::invocable<BandOf&, std::int64_t> SeveralBudgetsSequentialCertificate
several_budgets_sequential(std::span<const double> scores, std::uint64_t seed, BandOf&& band_of,
                           const SeveralBudgetsSequentialOptions& options) {
  SeveralBudgetsSequentialWalk walk(scores, options, seed);
  for (;;) {
    const std::int64_t position = *walk.next_position();
    walk.add_label(position, static_cast<std::int64_t>(band_of(position)));
    if (const auto reason = walk.stopping_reason()) return walk.certificate(*reason);
  }
}

// Simulation and validation on a pool whose bands are all known (pool_band, 0..K).
inline SeveralBudgetsSequentialCertificate several_budgets_sequential(
    std::span<const double> scores, std::span<const std::uint8_t> pool_band, std::uint64_t seed,
    const SeveralBudgetsSequentialOptions& options) {
  constexpr std::string_view fn = "ltt::curation::several_budgets_sequential";
  detail::require_same_size(fn, "pool_band", pool_band.size(), "scores", scores.size());
  const auto K = detail::ssize(options.alphas.size());
  for (std::size_t i = 0; i < pool_band.size(); ++i)
    if (pool_band[i] > K)
      detail::invalid(fn, detail::at("pool_band", i), detail::show(std::int64_t{pool_band[i]}),
                      "must lie in [0, " + detail::show(K) + "] (the number of budgets exceeded)");
  return several_budgets_sequential(
      scores, seed,
      [&](std::int64_t position) { return pool_band[static_cast<std::size_t>(position)]; },
      options);
}

}  // namespace ltt::curation
