// report.md of `ltt pipeline` (report.hpp): the setting, the methods and the claims checked on
// the run, fidelity, score quality, each seed's certificate walk and the policy certificates.
#include "pipeline/report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <sstream>
#include <vector>

#include <data/text.hpp>

namespace ltt::pipeline {

namespace {

using data::cat;

// "0.0455 [0.0368, 0.0556]": a resampled rate and its 95% Clopper-Pearson interval.
std::string proportion(const curation::ProportionEstimate& p) {
  return cat(p.rate ? fixed(*p.rate, 4) : std::string("n/a"), " [", fixed(p.lower, 4), ", ",
             fixed(p.upper, 4), "]");
}

std::string seeds_text(const PipelineResult& r) {
  const std::size_t s = r.seeds.size();
  return cat(std::to_string(s), s == 1 ? " seed" : " seeds");
}

// "12 unsafe of 451, averaging 1.34 B (mean episodic cost 6.70, budget B = 5)" (oracle).
std::string unsafe_members_line(const PipelineResult& r, const SeedResult& s) {
  const double budget = r.task.budget;
  const auto size = static_cast<std::int64_t>(s.calibrated.selected.size());
  std::int64_t unsafe = 0;
  for (const std::int64_t i : s.calibrated.selected)
    unsafe += r.pool_unsafe_bits[static_cast<std::size_t>(i)] != 0;
  if (!s.unsafe_member_cost) return cat("no unsafe member among its ", std::to_string(size));
  return cat(std::to_string(unsafe), " unsafe of ", std::to_string(size), ", averaging ",
             budget > 0 ? cat(fixed(*s.unsafe_member_cost / budget, 2), " B") : "n/a B",
             " (mean episodic cost ", fixed(*s.unsafe_member_cost, 2),
             ", budget B = ", fixed(budget, 0), ")");
}

// Title, the task, the pool and the settings of the run.
std::string setting_section(const PipelineResult& r) {
  const PipelineOptions& o = r.options;
  std::ostringstream md;
  md << "# ltt pipeline: " << r.task.name << "\n\n"
     << r.task.summary << ". Preset `" << o.preset << "`, " << seeds_text(r) << ", "
     << fixed(r.seconds, 0) << " s.\n\n"
     << "Pool: " << r.pool_episodes << " episodes (" << r.pool_transitions << " transitions"
     << (o.dataset ? cat(", read from ", r.pool_source)
                   : cat(", pool seed ", std::to_string(o.pool_seed)))
     << "), " << r.pool_unsafe << " over the budget " << fixed(r.task.budget, 0) << " ("
     << fixed(100.0 * static_cast<double>(r.pool_unsafe) / static_cast<double>(r.pool_episodes), 1)
     << "%); behavior mean return " << fixed(r.pool_mean_return, 2) << ", mean cost "
     << fixed(r.pool_mean_cost, 2) << ".\n\n"
     << "Settings: " << o.pairs.pairs << " preference pairs of H = " << o.pairs.segment_length
     << "; value ensemble K = " << o.value.members << ", " << o.value.epochs << " epochs; "
     << "behavior cloning " << o.policy.epochs << " epochs; observations "
     << (o.normalize_observations
             ? "z-scored per column for the value, the clones and the labels-only classifier "
               "(standard practice; the paper does not state a normalization)"
             : "raw (--raw-observations: no normalization anywhere)")
     << "; return-weighted kappa = " << fixed(o.return_weight_kappa, 1)
     << "; n = " << o.calibration_size
     << " calibration labels; alpha = " << fixed(o.calibration.alpha, 2)
     << ", delta = " << fixed(o.calibration.delta, 2) << "; " << o.eval_episodes
     << " evaluation episodes per policy; backend " << o.backend->name() << ".\n\n";
  return md.str();
}

// The methods table, and the paper's claims checked on this run.
std::string methods_section(const PipelineResult& r) {
  std::ostringstream md;
  md << "## Methods\n\nReward and cost per evaluation episode, mean over seeds"
     << (r.seeds.size() > 1 ? " with a 95% percentile-bootstrap interval" : "")
     << "; within budget means mean cost at most the budget. Data cost is the mean episodic "
        "cost of the trajectories a method cloned (repeats counted), the cloning gap the clone's "
        "cost minus it. Random, Return and Bottom-return select as many trajectories as BC-Safe "
        "(the pool's ground-truth safe count). Return-weighted resamples only a certified "
        "selection and is refused otherwise; Labels-only trains a classifier on the n "
        "calibration labels alone.\n\n"
     << summary_table(r) << "\n![reward and cost per method](methods.svg)\n\n";
  md << "## What the paper claims, on this run\n\n";
  for (const Claim& c : check_claims(r))
    md << "- " << (c.verdict == Verdict::fails ? "**does not hold**" : verdict_text(c.verdict))
       << ": " << c.statement << " (" << c.evidence << ")\n";
  md << "\n";
  return md.str();
}

std::string fidelity_section(const PipelineResult& r) {
  std::ostringstream md;
  md << "## Fidelity: the data, the cloning, the certificate\n\n"
     << "Which link fails when a claim does: the data (a selection's own cost over the budget), "
        "the cloning (a clone far above the data it was trained on: the cloning gap in the "
        "table above), or the certificate (a certified selection more than alpha unsafe, an "
        "event of probability at most delta).\n\n"
     << "Pool: " << r.pool_unsafe << " of " << r.pool_episodes << " episodes over the budget "
     << fixed(r.task.budget, 0) << ", mean episodic cost " << fixed(r.pool_mean_cost, 2)
     << ".\n\n![the pool's episodic costs](cost_histogram.svg)\n\n";
  if (const std::string split = cost_split_table(r); !split.empty())
    md << "Where each clone's cost comes from. Every episode knows the behavior checkpoint that "
          "produced it; each checkpoint ran " << r.options.behavior_cost_episodes
       << " fresh episodes, and a selection's policy data cost is the mean of its checkpoints' "
          "costs. The cloning gap (clone cost minus data cost) is then the selection's luck "
          "(policy data cost minus data cost: how much cheaper the selected episodes were than "
          "their checkpoints usually are) plus the cloner's share (clone cost minus policy data "
          "cost).\n\n"
       << split << "\n";
  for (const SeedResult& s : r.seeds)
    md << "- seed " << s.seed << ": the calibrated selection ("
       << (s.calibrated.certificate.certified ? "certified" : "uncertified fallback") << ") holds "
       << unsafe_members_line(r, s) << "; realized unsafe fraction "
       << fixed(s.realized_unsafe_fraction, 3) << " against alpha "
       << fixed(r.options.calibration.alpha, 2) << " (oracle).\n";
  md << "\n";
  return md.str();
}

// The walk of one seed, step by step, with each step's oracle unsafe fraction.
std::string walk_table(const SeedResult& s) {
  const curation::Certificate& c = s.calibrated.certificate;
  std::ostringstream md;
  md << "| j | quantile | lambda | N_j | m_j | k_j | U*_j | p_j | rejected | U_j / N_j (oracle) |\n"
     << "|---:|---:|---:|---:|---:|---:|---:|---:|:---:|---:|\n";
  for (std::size_t j = 0; j < c.steps.size(); ++j) {
    const curation::CertificateStep& st = c.steps[j];
    double oracle = NAN;
    for (const curation::ValidationStep& g : s.grid)
      if (g.quantile == st.quantile) oracle = static_cast<double>(g.U) / static_cast<double>(g.N);
    md << "| " << j + 1 << " | " << fixed(st.quantile, 2) << " | " << fixed(st.lambda, 4) << " | "
       << st.N << " | " << st.m << " | " << st.k << " | " << st.null_boundary << " | "
       << probability(st.p) << " | " << (st.rejected ? "yes" : "no") << " | " << fixed(oracle, 3)
       << " |\n";
  }
  md << "\n";
  return md.str();
}

// What the walk returned, the gate on it, and the seed's oracle diagnostics.
std::string returned_and_diagnostics(const SeedResult& s) {
  const curation::Certificate& c = s.calibrated.certificate;
  std::ostringstream md;
  if (c.certified) {
    md << "Returned: S(lambda) at quantile " << fixed(c.quantile, 2) << ", " << c.selection_size
       << " trajectories, certified to hold at most alpha unsafe with probability at least 1 - "
          "delta; realized unsafe fraction (oracle) "
       << fixed(s.realized_unsafe_fraction, 3) << ".";
  } else {
    const auto& f = *c.fallback_record;
    md << "Returned: no threshold certified; the uncertified fallback keeps the top " << f.count
       << " trajectories (Clopper-Pearson lower bound " << fixed(f.safe_mass_lower, 3)
       << " on the pool's safe mass from " << f.safe_labels << " safe of " << f.labels
       << " labels); realized unsafe fraction (oracle) " << fixed(s.realized_unsafe_fraction, 3)
       << ".";
  }
  md << " Gate: " << curation::gate_outcome_name(s.gated.outcome)
     << (s.gated.outcome == curation::GateOutcome::refused
             ? " (the reward-aware sub-selection runs only on a certified selection)"
             : cat(", top ", fixed(100 * s.gated.fraction, 0),
                   "% by return kept: ", std::to_string(s.gated.selected.size()), " trajectories"))
     << ".\n\n"
     << "Guarantee check (oracle): on " << s.resampled_certification.trials
     << " fresh calibration draws of n = " << c.calibration_size
     << " on this pool and score, the walk certified " << proportion(s.resampled_certification)
     << " of the time (closed form " << fixed(s.first_step_rate, 3)
     << ") and certified a selection more than alpha unsafe "
     << proportion(s.resampled_false_certification)
     << " of the time (at most delta = " << fixed(c.delta, 2) << " by the guarantee).\n\n"
     << "Oracle diagnostics: purity margin alpha - min_j U_j/N_j = " << fixed(s.purity_margin, 3)
     << "; closed-form certification rate at n = " << c.calibration_size << ": "
     << fixed(s.first_step_rate, 3) << "; Spearman(score, cost) over the pool "
     << fixed(s.score_cost_spearman, 3) << "; V-bar orders " << fixed(100 * s.pair_accuracy, 1)
     << "% of the training pairs correctly.\n\n";
  return md.str();
}

// "0.241 (0.220 to 0.270)": the mean over seeds and the range, or the value every seed has.
std::string over_seeds(const std::vector<double>& values, int digits, bool sign = false) {
  if (values.empty()) return "n/a";
  const auto show = [&](double x) { return sign ? signed_fixed(x, digits) : fixed(x, digits); };
  const double mean =
      std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  if (*lo == *hi) return show(*lo);
  return cat(show(mean), " (", show(*lo), " to ", show(*hi), ")");
}

// One scorer's row: its numbers over the seeds.
std::string scorer_row(const PipelineResult& r, Scorer scorer) {
  std::vector<double> first, margin, rate, at_v_filter;
  for (const SeedResult& s : r.seeds) {
    const ScorerQuality& q = s.score_quality.scorers[static_cast<std::size_t>(scorer)];
    first.push_back(q.curve.first_step_unsafe_fraction);
    margin.push_back(q.curve.purity_margin);
    rate.push_back(q.certification_rate);
    if (q.unsafe_fraction_at_v_filter_fraction)
      at_v_filter.push_back(*q.unsafe_fraction_at_v_filter_fraction);
  }
  std::string v_filter = over_seeds(at_v_filter, 3);
  if (!at_v_filter.empty() && at_v_filter.size() < r.seeds.size())
    v_filter += cat(" on ", std::to_string(at_v_filter.size()), " seeds with a safe label");
  return cat("| ", scorer_name(scorer), " | ", over_seeds(first, 3), " | ",
             over_seeds(margin, 3, true), " | ", over_seeds(rate, 3), " | ", v_filter, " |\n");
}

// The Spearman lines, the pairs' statistics and each seed's stage line.
std::string score_quality_lines(const PipelineResult& r) {
  std::vector<double> score_cost, score_return, ties, disagree;
  std::int64_t parents_tied = 0;
  for (const SeedResult& s : r.seeds) {
    const ScoreQuality& q = s.score_quality;
    score_cost.push_back(q.spearman_score_cost);
    score_return.push_back(q.spearman_score_return);
    if (q.pairs.tie_fraction) ties.push_back(*q.pairs.tie_fraction);
    if (q.pairs.disagreement_fraction) disagree.push_back(*q.pairs.disagreement_fraction);
    parents_tied += q.pairs.parents_tied;
  }
  std::ostringstream md;
  md << "- Spearman's rho over the pool: g with episodic cost " << over_seeds(score_cost, 2, true)
     << ", g with episodic return " << over_seeds(score_return, 2, true)
     << "; episodic cost with return "
     << signed_fixed(r.seeds.front().score_quality.spearman_cost_return, 2)
     << " (the pool's, the same on every seed).\n"
     << "- Preference pairs: tie fraction " << over_seeds(ties, 3)
     << ", the drawn segment pairs of equal cost (skipped); disagreement fraction "
     << over_seeds(disagree, 3)
     << ", the labeled pairs whose segment label rates the cheaper parent's segment the less "
        "safe, of those whose parents differ in episodic cost";
  if (parents_tied > 0)
    md << "; " << parents_tied << " labeled pairs with parents of equal cost are left out";
  md << ".\n";
  for (const SeedResult& s : r.seeds)
    md << "- seed " << s.seed << ": " << s.score_quality.stage.text << ".\n";
  return md.str();
}

// Five rankings of the same pool on the walk's grid, and which stage each seed's outcome is.
std::string score_quality_section(const PipelineResult& r) {
  const PipelineOptions& o = r.options;
  const double q1 = o.calibration.quantiles.front();
  std::ostringstream md;
  md << "## Score quality: which stage a refusal is\n\n"
     << "Five rankings of the same pool, each cut on the walk's own grid (oracle: every label "
        "read, never fed to the procedure): the preference score g, the labels-only classifier's "
        "scores, the oracle (minus episodic cost), the episodic return and minus the return. A "
        "refusal is the data's when no ranking reaches alpha (not even the oracle's purity margin "
        "is positive), the scorer's when the oracle or labels-only does and the preference score "
        "does not, the certificate's when the preference score does and the n labels did not "
        "certify (a power limit). Columns: the first grid selection's unsafe fraction, the purity "
        "margin alpha - min_j U_j / N_j, the closed-form certification rate, and the unsafe "
        "fraction of the top floor(f N) at the V-filter's fraction f"
     << (r.seeds.size() > 1 ? "; mean over seeds, the range in parentheses" : "") << ".\n\n"
     << "| scorer | top " << fixed(100 * (1 - q1), 0) << "% (q = " << fixed(q1, 2)
     << ") unsafe | purity margin | certification rate at n = " << o.calibration_size
     << " | unsafe at the V-filter's fraction |\n|---|---:|---:|---:|---:|\n";
  for (std::size_t k = 0; k < scorer_count; ++k) md << scorer_row(r, static_cast<Scorer>(k));
  md << "\n"
     << score_quality_lines(r)
     << "\n![purity curves](purity_curves.svg)\n\nThe figure: U_j / N_j of each scorer against "
        "the grid quantile on seed "
     << r.seeds.front().seed << ", with the alpha line.\n\n";
  return md.str();
}

std::string certificate_section(const PipelineResult& r) {
  std::ostringstream md;
  md << "## Certificate\n\n";
  for (const SeedResult& s : r.seeds) {
    const curation::Certificate& c = s.calibrated.certificate;
    md << "### Seed " << s.seed << ": "
       << (c.certified ? cat("certified at quantile ", fixed(c.quantile, 2))
                       : std::string("refused (uncertified fallback)"))
       << "\n\n"
       << "n = " << c.calibration_size << " labels, " << c.calibration_unsafe
       << " unsafe. The walk tests H_j: the selection S(lambda_j) holds more than alpha N_j "
          "unsafe trajectories, p_j = F_hyp(k_j; N_j, U*_j, m_j), in order, stopping at the first "
          "p_j > delta. U_j (oracle) is the selection's true unsafe count, never read by the "
          "procedure.\n\n"
       << walk_table(s) << returned_and_diagnostics(s);
  }
  md << "![score against episodic cost](score_vs_cost.svg)\n\n"
     << "![certification rate against n](certification_rate.svg)\n\n";
  return md.str();
}

// The deployed-policy bounds of the first seed's clones.
std::string seed_policy_section(const PipelineResult& r) {
  const PipelineOptions& o = r.options;
  const SeedResult& first = r.seeds.front();
  std::ostringstream md;
  md << "## Policy certificates (seed " << first.seed << ")\n\n"
     << "From the " << o.eval_episodes << " evaluation episodes of each policy, one-sided at "
     << "confidence 1 - " << fixed(o.certificate_delta, 2) << ": a Clopper-Pearson upper bound on "
     << "Pr[episodic cost > budget] and a Maurer-Pontil upper bound on E[episodic cost] (range "
     << fixed(r.task.cost_range, 0) << ", the horizon times the largest cost of a step, fixed a priori). These bound the policy "
     << "actually deployed; the training-set certificate above is a different statement.\n\n"
     << "| method | selection unsafe (oracle) | episodes over budget | Pr[cost > budget] <= | "
        "E[cost] <= |\n|---|---:|---:|---:|---:|\n";
  for (const MethodResult& m : first.methods) {
    if (m.selection_size == 0) {
      md << "| " << m.name << " | " << (m.refused ? "refused" : "empty selection") << " | | | |\n";
      continue;
    }
    const Evaluation& e = m.evaluation;
    md << "| " << m.name << " | " << fixed(m.selection_unsafe_fraction, 3) << " | " << e.over_budget
       << " / " << e.costs.size() << " | " << fixed(e.over_budget_upper, 3) << " | "
       << fixed(e.cost_upper, 2) << " |\n";
  }
  return md.str();
}

// The same bounds on every seed's episodes pooled.
std::string pooled_policy_section(const PipelineResult& r) {
  std::ostringstream md;
  md << "\n## Policy certificates, seeds pooled\n\n"
     << "The same two bounds on the evaluation episodes of every seed of a method taken "
        "together (paper, appendix \"Certificates on the deployed policy\"): they bound the "
        "policy that deploys one of the seeds' clones at random, each seed contributing "
     << r.options.eval_episodes
     << " episodes. Range of the Maurer-Pontil bound: " << fixed(r.task.cost_range, 0)
     << " (horizon x the largest per-step cost, a priori).\n\n"
     << "| method | seeds | episodes over budget | Pr[cost > budget] <= | E[cost] <= |\n"
        "|---|---:|---:|---:|---:|\n";
  for (const MethodSummary& m : r.summary) {
    if (m.cost.samples == 0) {
      md << "| " << m.name << " | 0 | " << (m.refused_seeds > 0 ? "refused" : "not cloned")
         << " | | |\n";
      continue;
    }
    const Evaluation& e = m.pooled;
    md << "| " << m.name << " | " << m.cost.samples << " | " << e.over_budget << " / "
       << e.costs.size() << " | " << fixed(e.over_budget_upper, 3) << " | "
       << fixed(e.cost_upper, 2) << " |\n";
  }
  md << "\n";
  return md.str();
}

}  // namespace

std::string report_markdown(const PipelineResult& r) {
  return setting_section(r) + methods_section(r) + fidelity_section(r) + score_quality_section(r) +
         certificate_section(r) + several_budgets_section(r) + seed_policy_section(r) +
         pooled_policy_section(r);
}

}  // namespace ltt::pipeline
