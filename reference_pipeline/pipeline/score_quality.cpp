#include "pipeline/score_quality.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include <curation/rank_correlation.hpp>
#include <curation/selection.hpp>
#include <curation/threshold_grid.hpp>
#include <curation/trajectory_pool.hpp>
#include <curation/true_composition.hpp>
#include <data/text.hpp>
#include <ltt/certification_rate.hpp>

#include "pipeline/check.hpp"
#include "pipeline/format.hpp"

namespace ltt::pipeline {

namespace {

using data::cat;
using detail::invalid;
using detail::show;

}  // namespace

std::string_view scorer_name(Scorer scorer) {
  switch (scorer) {
    case Scorer::preference:
      return "preference";
    case Scorer::labels_only:
      return "labels-only";
    case Scorer::oracle:
      return "oracle";
    case Scorer::episodic_return:
      return "return";
    case Scorer::minus_return:
      return "minus-return";
  }
  return "preference";
}

std::string_view refusal_stage_name(RefusalStage stage) {
  switch (stage) {
    case RefusalStage::data:
      return "data";
    case RefusalStage::scorer:
      return "scorer";
    case RefusalStage::certificate:
      return "certificate";
    case RefusalStage::certified:
      return "certified";
  }
  return "certified";
}

PurityCurve purity_curve(std::span<const double> scores, std::span<const std::uint8_t> unsafe,
                         double alpha, std::span<const double> quantiles) {
  // The grid and the composition the walk and the guarantee check use, so the preference
  // score's curve is the seed's oracle grid to the bit.
  const curation::ThresholdGrid grid = curation::threshold_grid(scores, quantiles);
  const curation::TrueComposition truth = curation::true_composition(grid, scores, unsafe, alpha);
  PurityCurve c;
  for (const curation::ValidationStep& s : truth.steps)
    c.steps.push_back({s.quantile, s.N, s.U, s.unsafe_fraction});
  c.purity_margin = truth.purity_margin;
  c.first_step_unsafe_fraction = c.steps.front().unsafe_fraction;
  return c;
}

ScorerQuality scorer_quality(Scorer scorer, std::span<const double> scores,
                             std::span<const std::uint8_t> unsafe, std::int64_t v_filter_count,
                             const ScoreQualityOptions& options) {
  ScorerQuality q;
  q.scorer = scorer;
  q.curve = purity_curve(scores, unsafe, options.alpha, options.quantiles);
  const PurityStep& first = q.curve.steps.front();
  // Proposition "certification rate": the strict walk certifies iff it rejects at lambda_1.
  q.certification_rate =
      ltt::certification_rate(static_cast<std::int64_t>(scores.size()), first.N, first.U,
                              options.calibration_size, options.alpha, options.delta);
  if (v_filter_count > 0) {
    const std::vector<std::int64_t> top =
        curation::selection_at(scores, curation::top_count_threshold(scores, v_filter_count));
    q.unsafe_fraction_at_v_filter_fraction = curation::unsafe_fraction(unsafe, top);
  }
  return q;
}

PairStatistics pair_statistics(const curation::PreferencePairs& pairs,
                               std::span<const double> episodic_cost) {
  PairStatistics p;
  p.attempts = pairs.attempts;
  p.ties = pairs.ties_skipped;
  if (p.attempts > 0)
    p.tie_fraction = static_cast<double>(p.ties) / static_cast<double>(p.attempts);
  const auto N = static_cast<std::int64_t>(episodic_cost.size());
  const auto cost = [&](const curation::Segment& s) {
    if (s.trajectory < 0 || s.trajectory >= N)
      invalid("pair_statistics", "pairs", show(s.trajectory),
              cat("names a trajectory outside the pool's ", show(N), " (episodic_cost)"));
    return episodic_cost[static_cast<std::size_t>(s.trajectory)];
  };
  for (const curation::PreferencePair& pair : pairs.pairs) {
    ++p.labeled;
    const double first = cost(pair.first), second = cost(pair.second);
    if (first == second) {
      ++p.parents_tied;
      continue;
    }
    // The label prefers `first` as the safer; the parents' order prefers the cheaper parent.
    p.disagreements += pair.first_preferred != (first < second);
  }
  if (p.labeled > p.parents_tied)
    p.disagreement_fraction =
        static_cast<double>(p.disagreements) / static_cast<double>(p.labeled - p.parents_tied);
  return p;
}

namespace {

// "the oracle and labels-only reach alpha (purity margins +0.211, +0.102)".
std::string reaching_text(const ScorerQuality& oracle, const ScorerQuality& labels_only) {
  const bool o = oracle.curve.purity_margin > 0, l = labels_only.curve.purity_margin > 0;
  if (o && l)
    return cat("the oracle and labels-only reach alpha (purity margins ",
               signed_fixed(oracle.curve.purity_margin), ", ",
               signed_fixed(labels_only.curve.purity_margin), ")");
  const ScorerQuality& reaching = o ? oracle : labels_only;
  const ScorerQuality& other = o ? labels_only : oracle;
  return cat("the ", scorer_name(reaching.scorer), " reaches alpha (purity margin ",
             signed_fixed(reaching.curve.purity_margin), "; ", scorer_name(other.scorer), " ",
             signed_fixed(other.curve.purity_margin), ")");
}

// "rate 0.5 needs n = 412, rate 0.8 n = 655" or why no n does.
std::string budgets_text(std::span<const LabelBudget> budgets, const PurityStep& first,
                         double alpha) {
  std::string text;
  for (const LabelBudget& b : budgets)
    text += cat(text.empty() ? "rate " : ", rate ", fixed(b.target_rate, 1),
                b.n ? cat(text.empty() ? " needs n = " : " n = ", show(*b.n))
                    : std::string(" is out of reach at every n"));
  if (!budgets.empty() && !budgets.front().n && first.unsafe_fraction >= alpha)
    text += cat(" (the first step is ", fixed(first.unsafe_fraction, 3),
                " unsafe, not below alpha, and the strict walk stops there)");
  return text;
}

}  // namespace

StageAttribution attribute_stage(std::span<const ScorerQuality> scorers, bool certified,
                                 std::int64_t pool_size, const ScoreQualityOptions& options) {
  if (scorers.size() != scorer_count)
    invalid("attribute_stage", "scorers", show(scorers.size()),
            cat("must hold the ", show(scorer_count), " scorers in Scorer order"));
  for (std::size_t s = 0; s < scorers.size(); ++s)
    if (scorers[s].scorer != static_cast<Scorer>(s))
      invalid("attribute_stage", "scorers",
              cat("must be in Scorer order (", scorer_name(static_cast<Scorer>(s)), " at position ",
                  show(s), ")"));
  const ScorerQuality& preference = scorers[static_cast<std::size_t>(Scorer::preference)];
  const ScorerQuality& labels_only = scorers[static_cast<std::size_t>(Scorer::labels_only)];
  const ScorerQuality& oracle = scorers[static_cast<std::size_t>(Scorer::oracle)];
  const double margin = preference.curve.purity_margin;
  const std::string rate_at_n =
      cat("closed-form certification rate ", fixed(preference.certification_rate, 3),
          " at n = ", show(options.calibration_size));
  StageAttribution a;
  if (certified) {
    a.stage = RefusalStage::certified;
    a.text = cat("certified: the preference score's purity margin is ", signed_fixed(margin), ", ",
                 rate_at_n);
    if (margin < 0)
      a.text +=
          "; every grid selection is more than alpha unsafe, so this certificate is the "
          "false certification the guarantee bounds by delta";
  } else if (margin > 0) {
    a.stage = RefusalStage::certificate;
    const PurityStep& first = preference.curve.steps.front();
    for (const double target : {0.5, 0.8})
      a.label_budgets.push_back({target, ltt::label_budget(pool_size, first.N, first.U,
                                                           options.alpha, options.delta, target)});
    a.text = cat("the certificate's: the preference score reaches alpha (purity margin ",
                 signed_fixed(margin), ") but the n = ", show(options.calibration_size),
                 " labels did not certify; ", rate_at_n, ", a power limit (",
                 budgets_text(a.label_budgets, first, options.alpha), ")");
  } else if (oracle.curve.purity_margin > 0 || labels_only.curve.purity_margin > 0) {
    a.stage = RefusalStage::scorer;
    a.text = cat("the scorer's: ", reaching_text(oracle, labels_only),
                 " and the preference score does not (", signed_fixed(margin), ")");
  } else {
    a.stage = RefusalStage::data;
    a.text = cat("the data's: no scorer reaches alpha on this pool (purity margins: oracle ",
                 signed_fixed(oracle.curve.purity_margin), ", labels-only ",
                 signed_fixed(labels_only.curve.purity_margin), ", preference ",
                 signed_fixed(margin), ")");
  }
  return a;
}

ScoreQuality score_quality(const ScoreQualityInputs& in, const ScoreQualityOptions& options) {
  constexpr std::string_view fn = "score_quality";
  if (!in.pairs) invalid(fn, "inputs.pairs", "must point to the preference pairs");
  const std::size_t N = in.preference_scores.size();
  for (const auto& [name, size] : std::array<std::pair<std::string_view, std::size_t>, 4>{
           {{"inputs.labels_only_scores", in.labels_only_scores.size()},
            {"inputs.episodic_cost", in.episodic_cost.size()},
            {"inputs.episodic_return", in.episodic_return.size()},
            {"inputs.unsafe", in.unsafe.size()}}})
    if (size != N)
      invalid(
          fn, name, show(size),
          cat("must hold one value per trajectory of inputs.preference_scores (", show(N), ")"));
  ScoreQuality q;
  q.spearman_score_cost = curation::spearman(in.preference_scores, in.episodic_cost);
  q.spearman_score_return = curation::spearman(in.preference_scores, in.episodic_return);
  q.spearman_cost_return = curation::spearman(in.episodic_cost, in.episodic_return);
  q.pairs = pair_statistics(*in.pairs, in.episodic_cost);
  q.v_filter_fraction = in.v_filter_fraction;
  q.v_filter_count = in.v_filter_count;
  std::vector<double> minus_cost(N), minus_return(N);
  for (std::size_t i = 0; i < N; ++i) {
    minus_cost[i] = -in.episodic_cost[i];
    minus_return[i] = -in.episodic_return[i];
  }
  const std::span<const double> by_scorer[scorer_count] = {
      in.preference_scores, in.labels_only_scores, minus_cost, in.episodic_return, minus_return};
  for (std::size_t s = 0; s < scorer_count; ++s)
    q.scorers.push_back(scorer_quality(static_cast<Scorer>(s), by_scorer[s], in.unsafe,
                                       in.v_filter_count, options));
  q.stage = attribute_stage(q.scorers, in.certified, static_cast<std::int64_t>(N), options);
  return q;
}

}  // namespace ltt::pipeline
