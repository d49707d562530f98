#pragma once
// The fields of curation's result structs, named and in order, for any serializer: the
// protocol of <ltt/fields.hpp>. The certificate's list is the object `ltt certify --json`
// prints and `ltt.certify` returns (docs/cli.md); each program adds its own fields around it.

#include <curation/calibrated_selection.hpp>
#include <curation/mean_cost_certificate.hpp>
#include <curation/preference_pairs.hpp>
#include <curation/reward_curation.hpp>
#include <curation/sequential_selection.hpp>
#include <curation/sequential_validation.hpp>
#include <curation/several_budgets_validation.hpp>
#include <curation/threshold_grid.hpp>
#include <curation/v_filter.hpp>
#include <curation/validation.hpp>
#include <ltt/fields.hpp>

#include <cmath>
#include <cstdint>
#include <optional>
#include <string_view>

namespace ltt::curation {

template <class Visit>
void fields(const CertificateStep& s, Visit&& visit) {
  visit("quantile", s.quantile);
  visit("lambda", s.lambda);
  visit("N", s.N);
  visit("m", s.m);
  visit("k", s.k);
  visit("null_boundary", s.null_boundary);
  visit("p", s.p);
  visit("rejected", s.rejected);
}

template <class Visit>
void fields(const FallbackRecord& f, Visit&& visit) {
  visit("labels", f.labels);
  visit("safe_labels", f.safe_labels);
  visit("safe_mass_lower", f.safe_mass_lower);
  visit("minimum_selection", f.minimum_selection);
  visit("count", f.count);
}

// The decision first, then what it rests on.
template <class Visit>
void fields(const Certificate& c, Visit&& visit) {
  visit("certified", c.certified);
  // A fallback that keeps nothing has an infinite threshold, which JSON cannot hold: none.
  visit("threshold", std::isfinite(c.threshold) ? std::optional(c.threshold) : std::nullopt);
  visit("quantile", c.quantile);
  visit("selection_size", c.selection_size);
  visit("fallback", c.fallback);
  visit("alpha", c.alpha);
  visit("delta", c.delta);
  visit("pool_size", c.pool_size);
  visit("calibration_size", c.calibration_size);
  visit("calibration_unsafe", c.calibration_unsafe);
  visit("grid_size", c.grid_size);
  visit("merged_quantiles", c.merged_quantiles);
  visit("steps", c.steps);
  visit("certified_step", c.certified_step);
  visit("fallback_record", c.fallback_record);
  visit("threshold_set_size", c.threshold_set_size);
  visit("drop_unsafe_calibration", c.drop_unsafe_calibration);
  visit("dropped", c.dropped);
}

// A certificate with the triple priced on its first selection S_1 (none on a refusal, or
// when not asked for): the object `ltt certify --json` prints before its gate, output and
// inputs, and the one `ltt.certify` returns.
struct PricedCertificate {
  const Certificate* certificate;
  const std::optional<ltt::CertificateTriple>* triple;
};

template <class Visit>
void fields(const PricedCertificate& p, Visit&& visit) {
  fields(*p.certificate, visit);
  visit("triple", *p.triple ? std::optional(ltt::TripleSummary{&**p.triple}) : std::nullopt);
}

template <class Visit>
void fields(const SequentialStep& s, Visit&& visit) {
  visit("quantile", s.quantile);
  visit("lambda", s.lambda);
  visit("N", s.N);
  visit("null_boundary", s.null_boundary);
  visit("m", s.m);
  visit("k", s.k);
  visit("p_anytime", s.p_anytime);
  visit("p_cap", s.p_cap);
  visit("known_m", s.known_m);
  visit("known_k", s.known_k);
  visit("switch_evidence", s.switch_evidence);
  visit("p_tail", s.p_tail);
  visit("sample", s.sample);
  visit("p", s.p);
  visit("rejected", s.rejected);
  visit("certified_after", s.certified_after);
}

// A sequential certificate with its stop rule and whether (and by which reason) the walk has
// stopped: the object `ltt certify --sequential --json` opens with and
// `ltt.SequentialCertifier.certificate`. Before a rule fires the certificate is the one the
// labels so far give, valid if the labeling stops there (docs/sequential.md); `reason` is
// then none. The reason names are the keys of `ltt validate --procedure sequential`'s
// `stopped_by`.
struct StoppedCertificate {
  const SequentialCertificate* certificate;
  std::string_view stop;                 // the `--stop` rule
  std::optional<StoppingReason> reason;  // none: no rule has fired yet
};

template <class Visit>
void fields(const SequentialFallback& f, Visit&& visit) {
  visit("population", f.population);
  visit("labels", f.labels);
  visit("safe_labels", f.safe_labels);
  visit("unsafe_upper", f.unsafe_upper);
  visit("safe_lower", f.safe_lower);
  visit("minimum_selection", f.minimum_selection);
  visit("count", f.count);
}

// The decision first, then the labels and the stop, then what it rests on. Refused, the
// threshold, quantile and selection are the uncertified fallback's (fallback_record).
template <class Visit>
void fields(const StoppedCertificate& s, Visit&& visit) {
  const SequentialCertificate& c = *s.certificate;
  visit("certified", c.certified);
  visit("certified_step", c.certified_step);
  // A fallback that keeps nothing has an infinite threshold, which JSON cannot hold: none.
  visit("threshold", std::isfinite(c.threshold) ? std::optional(c.threshold) : std::nullopt);
  visit("quantile", c.quantile);
  visit("selection_size", c.selection_size);
  visit("fallback", c.fallback);
  visit("fallback_record", c.fallback_record);
  visit("labels_used", c.labels_used);
  visit("unsafe_labels", c.unsafe_labels);
  visit("tail_from", c.tail_from);
  visit("tail_size", c.tail_size);
  visit("stop", s.stop);
  visit("order", label_order_name(c.order));
  visit("stopped", s.reason.has_value());
  visit("reason", s.reason ? std::optional(stopping_reason_name(*s.reason)) : std::nullopt);
  visit("label_cap", c.label_cap);
  visit("alpha", c.alpha);
  visit("delta", c.delta);
  visit("pool_size", c.pool_size);
  visit("grid_size", c.grid_size);
  visit("target_step", c.target_step);
  visit("merged_quantiles", c.merged_quantiles);
  visit("steps", c.steps);
  visit("depth_trace", c.depth_trace);
  visit("fixed_walk", c.fixed_walk);
  visit("depth_upper", c.depth_upper);
}

// The labels a sequential validation bought per run (`ltt validate --procedure sequential`).
template <class Visit>
void fields(const LabelsUsed& l, Visit&& visit) {
  visit("mean", l.mean);
  visit("median", l.median);
  visit("p90", l.p90);
  visit("max", l.max);
}

template <class Visit>
void fields(const ProportionEstimate& p, Visit&& visit) {
  visit("count", p.count);
  visit("trials", p.trials);
  visit("rate", p.rate);
  visit("lower", p.lower);
  visit("upper", p.upper);
}

template <class Visit>
void fields(const ValidationStep& s, Visit&& visit) {
  visit("quantile", s.quantile);
  visit("lambda", s.lambda);
  visit("N", s.N);
  visit("U", s.U);
  visit("null_boundary", s.null_boundary);
  visit("unsafe_fraction", s.unsafe_fraction);
  visit("true_null", s.true_null);
  visit("returned", s.returned);
}

template <class Visit>
void fields(const TripleCoverage& t, Visit&& visit) {
  visit("distinct_counts", t.distinct_counts);
  visit("mean_r_hat", t.mean_r_hat);
  visit("mean_r_hat_certified", t.mean_r_hat_certified);
  visit("mean_r_lo", t.mean_r_lo);
  visit("mean_bound_certified", t.mean_bound_certified);
  visit("mean_bound_covers", t.mean_bound_covers);
  visit("covered", t.covered);
  visit("covered_fraction", t.covered_fraction);
  visit("max_error_bound", t.max_error_bound);
}

// Everything but the per-draw outcomes, which a serializer lays out its own way (Python: as
// columns).
template <class Visit>
void fields(const GuaranteeValidation& v, Visit&& visit) {
  visit("pool_size", v.pool_size);
  visit("pool_unsafe", v.pool_unsafe);
  visit("calibration_size", v.calibration_size);
  visit("draws", v.draws);
  visit("seed", v.seed);
  visit("alpha", v.alpha);
  visit("delta", v.delta);
  visit("confidence", v.confidence);
  visit("procedure", ltt::procedure_name(v.procedure));
  visit("steps", v.steps);
  visit("merged_quantiles", v.merged_quantiles);
  visit("returned_none", v.returned_none);
  visit("purity_margin", v.purity_margin);
  visit("certification", v.certification);
  visit("false_certification", v.false_certification);
  visit("conditional_violation", v.conditional_violation);
  visit("closed_form_rate", v.closed_form_rate);
  visit("triple", v.triple);
}

template <class Visit>
void fields(const BudgetValidation& b, Visit&& visit) {
  visit("budget", b.budget);
  visit("alpha", b.alpha);
  visit("level", b.level);
  visit("pool_unsafe", b.pool_unsafe);
  visit("purity_margin", b.purity_margin);
  visit("certification", b.certification);
  visit("closed_form_rate", b.closed_form_rate);
  visit("false_certification", b.false_certification);
  visit("steps", b.steps);
  visit("returned_none", b.returned_none);
}

// Everything but the per-draw outcomes, as for GuaranteeValidation.
template <class Visit>
void fields(const SeveralBudgetsValidation& v, Visit&& visit) {
  visit("pool_size", v.pool_size);
  visit("calibration_size", v.calibration_size);
  visit("draws", v.draws);
  visit("seed", v.seed);
  visit("delta", v.delta);
  visit("confidence", v.confidence);
  visit("procedure", ltt::budget_procedure_name(v.procedure));
  visit("merged_quantiles", v.merged_quantiles);
  visit("every_certified", v.every_certified);
  visit("closed_form_rate", v.closed_form_rate);
  visit("simultaneous_false_certification", v.simultaneous_false_certification);
  visit("budgets", v.budgets);
}

template <class Visit>
void fields(const MeanCostStep& s, Visit&& visit) {
  visit("lambda", s.lambda);
  visit("quantile", s.quantile);
  visit("N", s.N);
  visit("m", s.m);
  visit("sample_mean_cost", s.sample_mean_cost);
  visit("p_hoeffding_serfling", s.p_hoeffding_serfling);
  visit("p_betting", s.p_betting);
  visit("p", s.p);
  visit("rejected", s.rejected);
}

template <class Visit>
void fields(const MeanCostCertificate& c, Visit&& visit) {
  visit("budget", c.budget);
  visit("range", c.range);
  visit("delta", c.delta);
  visit("bound", mean_cost_bound_name(c.bound));
  visit("order_seed", c.order_seed);
  visit("pool_size", c.pool_size);
  visit("calibration_size", c.calibration_size);
  visit("grid_size", c.grid_size);
  visit("steps", c.steps);
  visit("certified", c.certified);
  visit("certified_step", c.certified_step);
  visit("threshold", c.threshold);
  visit("selection_size", c.selection_size);
}

template <class Visit>
void fields(const ThresholdGrid& g, Visit&& visit) {
  visit("pool_size", g.pool_size);
  visit("quantile", g.quantile);
  visit("lambda", g.lambda);
  visit("rank", g.rank);
  visit("selection_size", g.selection_size);
  visit("merged_quantiles", g.merged_quantiles);
}

template <class Visit>
void fields(const VFilterSelection& v, Visit&& visit) {
  visit("labels", v.labels);
  visit("safe_labels", v.safe_labels);
  visit("safe_fraction", v.safe_fraction);
  visit("count", v.count);
  visit("threshold", v.threshold);
  visit("selected", v.selected);
}

template <class Visit>
void fields(const RewardSubselection& r, Visit&& visit) {
  visit("outcome", gate_outcome_name(r.outcome));
  visit("fraction", r.fraction);
  visit("count", r.count);
  visit("return_threshold", r.return_threshold);
  visit("selected", r.selected);
}

template <class Visit>
void fields(const ReturnWeightedResample& r, Visit&& visit) {
  visit("outcome", gate_outcome_name(r.outcome));
  visit("kappa", r.kappa);
  visit("selection", r.selection);
  visit("probability", r.probability);
  visit("resampled", r.resampled);
  visit("unsafe_mass_bound", r.unsafe_mass_bound);
}

// How the pairs were drawn; the pairs themselves are left out.
template <class Visit>
void fields(const PreferencePairs& p, Visit&& visit) {
  visit("pairs", static_cast<std::int64_t>(p.pairs.size()));
  visit("attempts", p.attempts);
  visit("ties_skipped", p.ties_skipped);
  visit("label_errors", p.label_errors);
  visit("eligible", p.eligible);
  visit("quartile_size", p.quartile_size);
}

}  // namespace ltt::curation
