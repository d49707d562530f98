#pragma once
// Score quality: which stage a refusal is (docs/pipeline.md, "Score quality"; the paper's
// tables "scorecorr", "labelcomplexity" and "condviol", and Proposition "certification
// dichotomy"). The certificate can fail for three different reasons, and the report must tell
// them apart:
//
//   the data's         no ranking of this pool keeps at most alpha unsafe in any grid
//                      selection: even the oracle (minus episodic cost) has a negative purity
//                      margin, so no scorer can certify (Proposition "certification dichotomy")
//   the scorer's       a ranking exists (the oracle's or the labels-only classifier's margin is
//                      positive) but the preference score's is not: the learned value ranks
//                      this pool worse than the labels do
//   the certificate's  the preference score reaches alpha (margin > 0) and n labels did not
//                      certify: a power limit, read off the closed-form certification rate at n
//                      and the label budget for a higher rate
//
// To tell them apart, five rankings of the same pool are cut on the same grid exactly as the
// walk cuts (curation::threshold_grid, curation::true_composition: ties at a threshold kept,
// merged quantiles tested once): the preference score g, the labels-only classifier's scores,
// the oracle (minus episodic cost), the episodic return and minus the return. For each: its
// purity curve U_j / N_j, purity margin, first step's unsafe fraction, closed-form
// certification rate at n (ltt::certification_rate on the first step), and the unsafe fraction
// of the top floor(f N) at the V-filter's fraction f (curation::v_filter's cut). Next to them:
// Spearman's rho of g with episodic cost and with return, of cost with return, and the
// preference pairs' ties and disagreements with the episode-level cost order.
//
// Every number here reads every label: an oracle diagnostic, reported next to the procedure's
// outputs and never fed into them. No randomness and no training: a function of the pool, the
// grid and what the seed already computed.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <curation/preference_pairs.hpp>
#include <curation/threshold_grid.hpp>

namespace ltt::pipeline {

// The rankings compared, in report order.
enum class Scorer : std::size_t { preference, labels_only, oracle, episodic_return, minus_return };
inline constexpr std::size_t scorer_count = 5;
// "preference", "labels-only", "oracle", "return", "minus-return"
std::string_view scorer_name(Scorer scorer);

// One grid step of a ranking: its selection's size and true unsafe count.
struct PurityStep {
  double quantile = 0;         // q_j
  std::int64_t N = 0;          // N_j = |S(lambda_j)|
  std::int64_t U = 0;          // unsafe trajectories in S(lambda_j) (oracle)
  double unsafe_fraction = 0;  // U_j / N_j
};

// A ranking's purity curve on the grid, and what Proposition "certification dichotomy" reads
// off it: the margin alpha - min_j U_j / N_j (negative: no n certifies but with probability at
// most delta) and the first step's fraction (below alpha: the rate tends to one as n grows).
struct PurityCurve {
  std::vector<PurityStep> steps;
  double purity_margin = 0;
  double first_step_unsafe_fraction = 0;  // U_1 / N_1 (the top 15% on the paper's grid)
};

// scores: one finite score per trajectory; unsafe: 0 or 1 each. Throws std::invalid_argument
// naming the parameter (the curation layer's checks).
PurityCurve purity_curve(std::span<const double> scores, std::span<const std::uint8_t> unsafe,
                         double alpha, std::span<const double> quantiles);

// The grid and the walk's levels the scorers are compared at.
struct ScoreQualityOptions {
  double alpha = 0.25;
  double delta = 0.1;
  std::vector<double> quantiles{curation::paper_grid_quantiles.begin(),
                                curation::paper_grid_quantiles.end()};
  std::int64_t calibration_size = 200;  // n
};

struct ScorerQuality {
  Scorer scorer = Scorer::preference;
  PurityCurve curve;
  double certification_rate = 0;  // ltt::certification_rate(N, N_1, U_1, n, alpha, delta)
  // The top floor(f N) by this score, cut as curation::v_filter cuts (ties with the K-th score
  // kept); none when K = 0 (no safe calibration label: the V-filter keeps nothing).
  std::optional<double> unsafe_fraction_at_v_filter_fraction;
};

// One scorer on the grid; v_filter_count is K = floor(f N), the V-filter's count.
ScorerQuality scorer_quality(Scorer scorer, std::span<const double> scores,
                             std::span<const std::uint8_t> unsafe, std::int64_t v_filter_count,
                             const ScoreQualityOptions& options);

// The preference pairs against the episode-level cost order. A pair is labeled by its two
// segments' summed costs (curation::sample_preference_pairs); it disagrees with its parents'
// order when the segment of the parent with the lower episodic cost is labeled the less safe.
// Pairs whose parents have equal episodic cost have no order to disagree with and are left out
// of the disagreement fraction's denominator.
struct PairStatistics {
  std::int64_t attempts = 0;                    // segment pairs drawn
  std::int64_t ties = 0;                        // skipped: equal segment costs
  std::optional<double> tie_fraction;           // ties / attempts; none without attempts
  std::int64_t labeled = 0;                     // pairs kept and labeled
  std::int64_t parents_tied = 0;                // labeled pairs whose parents' costs are equal
  std::int64_t disagreements = 0;               // the cheaper parent's segment labeled less safe
  std::optional<double> disagreement_fraction;  // disagreements / (labeled - parents_tied)
};

// episodic_cost: one per pool trajectory (the pairs' parents are positions in it).
PairStatistics pair_statistics(const curation::PreferencePairs& pairs,
                               std::span<const double> episodic_cost);

// Which stage a seed's outcome is. `certified` is not a refusal: the walk certified.
enum class RefusalStage { data, scorer, certificate, certified };
std::string_view refusal_stage_name(RefusalStage stage);  // "data", "scorer", ...

// The label budget (ltt::label_budget on the preference score's first step) for a target rate;
// none: no n up to N reaches it.
struct LabelBudget {
  double target_rate = 0;
  std::optional<std::int64_t> n;
};

struct StageAttribution {
  RefusalStage stage = RefusalStage::certified;
  std::string text;                        // one line for the report
  std::vector<LabelBudget> label_budgets;  // the certificate's stage: rates 0.5 and 0.8
};

// The rule, on the scorers' purity margins (scorers in Scorer order, all five):
//   certified                                    -> certified
//   preference margin > 0                        -> the certificate's (a power limit)
//   oracle or labels-only margin > 0             -> the scorer's
//   otherwise (no margin > 0 among the three)    -> the data's
// pool_size is N. Throws std::invalid_argument naming 'scorers' when one is missing.
StageAttribution attribute_stage(std::span<const ScorerQuality> scorers, bool certified,
                                 std::int64_t pool_size, const ScoreQualityOptions& options);

// What one seed's score quality is computed from: the pool (oracle) and what the seed's stages
// returned.
struct ScoreQualityInputs {
  std::span<const double> preference_scores;   // g, the value's trajectory scores
  std::span<const double> labels_only_scores;  // the labels-only classifier's
  std::span<const double> episodic_cost, episodic_return;
  std::span<const std::uint8_t> unsafe;              // cost > budget
  const curation::PreferencePairs* pairs = nullptr;  // the pairs the value trained on
  double v_filter_fraction = 0;                      // f, the calibration sample's safe fraction
  std::int64_t v_filter_count = 0;                   // K = floor(f N)
  bool certified = false;                            // the seed's walk certified
};

struct ScoreQuality {
  double spearman_score_cost = 0;    // rho(g, episodic cost)
  double spearman_score_return = 0;  // rho(g, episodic return)
  double spearman_cost_return = 0;   // rho(cost, return): the pool's, the same on every seed
  PairStatistics pairs;
  double v_filter_fraction = 0;
  std::int64_t v_filter_count = 0;
  std::vector<ScorerQuality> scorers;  // in Scorer order
  StageAttribution stage;
};

// Throws std::invalid_argument naming the parameter ('inputs.pairs', a size that differs, ...).
ScoreQuality score_quality(const ScoreQualityInputs& inputs, const ScoreQualityOptions& options);

// Field lists (<ltt/fields.hpp>): report.json's "score_quality" object, and `ltt score`'s.
template <class Visit>
void fields(const PurityStep& s, Visit&& visit) {
  visit("quantile", s.quantile);
  visit("N", s.N);
  visit("U", s.U);
  visit("unsafe_fraction", s.unsafe_fraction);
}

template <class Visit>
void fields(const PurityCurve& c, Visit&& visit) {
  visit("purity", c.steps);
  visit("purity_margin", c.purity_margin);
  visit("first_step_unsafe_fraction", c.first_step_unsafe_fraction);
}

template <class Visit>
void fields(const ScorerQuality& q, Visit&& visit) {
  visit("name", scorer_name(q.scorer));
  fields(q.curve, visit);
  visit("certification_rate", q.certification_rate);
  visit("unsafe_fraction_at_v_filter_fraction", q.unsafe_fraction_at_v_filter_fraction);
}

template <class Visit>
void fields(const PairStatistics& p, Visit&& visit) {
  visit("attempts", p.attempts);
  visit("ties", p.ties);
  visit("tie_fraction", p.tie_fraction);
  visit("labeled", p.labeled);
  visit("parents_tied", p.parents_tied);
  visit("disagreements", p.disagreements);
  visit("disagreement_fraction", p.disagreement_fraction);
}

template <class Visit>
void fields(const LabelBudget& b, Visit&& visit) {
  visit("target_rate", b.target_rate);
  visit("n", b.n);
}

template <class Visit>
void fields(const ScoreQuality& q, Visit&& visit) {
  visit("spearman_score_cost", q.spearman_score_cost);
  visit("spearman_score_return", q.spearman_score_return);
  visit("spearman_cost_return", q.spearman_cost_return);
  visit("pairs", q.pairs);
  visit("v_filter_fraction", q.v_filter_fraction);
  visit("v_filter_count", q.v_filter_count);
  visit("scorers", q.scorers);
  visit("stage", refusal_stage_name(q.stage.stage));
  visit("stage_text", std::string_view(q.stage.text));
  visit("label_budgets", q.stage.label_budgets);
}

}  // namespace ltt::pipeline
