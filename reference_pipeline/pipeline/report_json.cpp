// report.json of `ltt pipeline` (docs/pipeline.md, "The report"): the run's options, the pool,
// the methods' summaries and, per seed, its certificate, selections, oracle diagnostics, value,
// methods and score quality; and the corridor study's. Written next to report.md (report.cpp),
// with the JSON writer and the field lists that `ltt certify --json` uses (data/json_fields.hpp).

#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>

#include <data/json_fields.hpp>
#include <data/json_writer.hpp>
#include <data/text.hpp>

#include "pipeline/corridor_study.hpp"
#include "pipeline/report.hpp"

namespace ltt::pipeline {

SeedArtifacts seed_artifacts(std::uint64_t seed) {
  const std::string dir = data::cat("seed-", std::to_string(seed), "/");
  return {data::cat(dir, "scores.npy"), data::cat(dir, "selection.npy"),
          data::cat(dir, "labels.csv"), data::cat(dir, "model.ltt")};
}

namespace {

using data::JsonFields;
using data::JsonWriter;

void write_interval(JsonWriter& json, std::string_view name, const Interval& i) {
  json.key(name)
      .begin_object()
      .field("mean", i.mean)
      .field("low", i.low)
      .field("high", i.high)
      .field("seeds", i.samples)
      .end_object();
}

// An evaluation's cost and its deployed-policy bounds (the keys both evaluation objects share).
void write_cost_bounds(JsonWriter& json, const Evaluation& e) {
  json.field("mean_cost", e.mean_cost)
      .field("over_budget", e.over_budget)
      .field("delta", e.delta)
      .field("over_budget_probability_upper", e.over_budget_upper)
      .field("cost_upper", e.cost_upper);
}

void write_evaluation(JsonWriter& json, const Evaluation& e) {
  json.key("evaluation")
      .begin_object()
      .field("episodes", static_cast<std::int64_t>(e.costs.size()))
      .field("mean_return", e.mean_return);
  write_cost_bounds(json, e);
  json.end_object();
}

// An interval, or null where the pool does not know its behavior checkpoints.
void write_interval(JsonWriter& json, std::string_view name, const std::optional<Interval>& i) {
  if (i)
    write_interval(json, name, *i);
  else
    json.field(name, std::optional<double>{});
}

// Where a clone's cost comes from: the data it was trained on, and the gap cloning adds, split
// into the selection's luck and the cloner's share where the behavior checkpoints are known.
void write_fidelity(JsonWriter& json, const MethodSummary& m) {
  write_interval(json, "data_cost", m.data_cost);
  write_interval(json, "cloning_gap", m.cloning_gap);
  write_interval(json, "policy_data_cost", m.policy_data_cost);
  write_interval(json, "selection_luck", m.selection_luck);
  write_interval(json, "cloner_share", m.cloner_share);
  json.field("refused_seeds", m.refused_seeds);
  if (m.cost.samples == 0) {
    json.field("pooled", std::optional<double>{});
    return;
  }
  json.key("pooled")
      .begin_object()
      .field("seeds", m.cost.samples)
      .field("episodes", static_cast<std::int64_t>(m.pooled.costs.size()));
  write_cost_bounds(json, m.pooled);
  json.end_object();
}

// The pool and the settings the run used (what --config replays).
void write_pool_and_settings(JsonWriter& json, const PipelineResult& r) {
  const PipelineOptions& o = r.options;
  json.key("pool")
      .begin_object()
      .field("source", o.dataset ? std::optional(r.pool_source) : std::nullopt)
      .field("pool_seed", static_cast<std::int64_t>(o.pool_seed))
      .field("episodes", r.pool_episodes)
      .field("transitions", r.pool_transitions)
      .field("unsafe", r.pool_unsafe)
      .field("mean_return", r.pool_mean_return)
      .field("mean_cost", r.pool_mean_cost)
      .end_object();
  json.key("settings")
      .begin_object()
      .field("pairs", o.pairs.pairs)
      .field("segment_length", o.pairs.segment_length)
      .field("members", o.value.members)
      .field("value_epochs", o.value.epochs)
      .field("policy_epochs", o.policy.epochs)
      .field("normalize_observations", o.normalize_observations)
      .field("observations", o.normalize_observations ? "z-scored" : "raw")
      .field("return_weight_kappa", o.return_weight_kappa)
      .field("cost_range", r.task.cost_range)
      .field("calibration_size", o.calibration_size)
      .field("alpha", o.calibration.alpha)
      .field("delta", o.calibration.delta)
      .field("reward_fraction", o.reward_fraction)
      .field("eval_episodes", o.eval_episodes)
      .field("behavior_cost_episodes", o.behavior_cost_episodes)
      .field("validation_draws", o.validation_draws)
      .field("backend", o.backend->name());
  json.key("value_hidden").begin_array();
  for (const std::int64_t w : o.value.hidden) json.value(w);
  json.end_array();
  json.key("policy_hidden").begin_array();
  for (const std::int64_t w : o.policy.hidden) json.value(w);
  json.end_array().end_object();
}

void write_method_summaries(JsonWriter& json, const PipelineResult& r) {
  json.key("methods").begin_array();
  for (const MethodSummary& m : r.summary) {
    // A method whose selection was empty on every seed was never cloned: no numbers.
    const bool ran = m.cost.samples > 0;
    json.begin_object()
        .field("name", m.name)
        .field("reward", ran ? std::optional(m.reward.mean) : std::nullopt)
        .field("cost", ran ? std::optional(m.cost.mean) : std::nullopt)
        .field("within_budget", m.within_budget);
    write_interval(json, "reward_ci", m.reward);
    write_interval(json, "cost_ci", m.cost);
    write_interval(json, "selection_size", m.selection_size);
    write_fidelity(json, m);
    json.end_object();
  }
  json.end_array();
}

// A seed's certificate, then what the curation stage and the labels-only control selected.
void write_seed_selections(JsonWriter& json, const SeedResult& s) {
  JsonFields{json}("certificate", s.calibrated.certificate);
  json.key("gate")
      .begin_object()
      .field("outcome", curation::gate_outcome_name(s.gated.outcome))
      .field("fraction", s.gated.fraction)
      .field("selection_size", static_cast<std::int64_t>(s.gated.selected.size()))
      .end_object();
  json.key("v_filter")
      .begin_object()
      .field("safe_fraction", s.v_filter.safe_fraction)
      .field("count", s.v_filter.count)
      .field("selection_size", static_cast<std::int64_t>(s.v_filter.selected.size()))
      .end_object();
  json.key("return_weighted")
      .begin_object()
      .field("outcome", curation::gate_outcome_name(s.return_weighted.outcome))
      .field("kappa", s.return_weighted.kappa)
      .field("draws", s.return_weighted.outcome == curation::GateOutcome::refused
                          ? std::int64_t{0}
                          : static_cast<std::int64_t>(s.return_weighted.resampled.size()))
      .field("unsafe_mass_bound", s.return_weighted.unsafe_mass_bound)
      .end_object();
  json.key("labels_only")
      .begin_object()
      .field("training_rows", s.labels_only.training_rows)
      .field("final_loss", s.labels_only.final_loss)
      .field("safe_fraction", s.labels_only.selection.safe_fraction)
      .field("count", s.labels_only.selection.count)
      .field("selection_size", static_cast<std::int64_t>(s.labels_only.selection.selected.size()))
      .end_object();
}

// The files of the seed, and the diagnostics that read every label (stage `diagnose`).
void write_seed_oracle(JsonWriter& json, const SeedResult& s) {
  const SeedArtifacts at = seed_artifacts(s.seed);
  json.key("artifacts")
      .begin_object()
      .field("scores", at.scores)
      .field("selection", at.selection)
      .field("labels", at.labels)
      .field("model", at.model)
      .end_object();
  json.key("oracle").begin_object();
  json.field("unsafe_member_cost", s.unsafe_member_cost);
  json.field("purity_margin", s.purity_margin)
      .field("first_step_rate", s.first_step_rate)
      .field("realized_unsafe_fraction", s.realized_unsafe_fraction)
      .field("score_cost_spearman", s.score_cost_spearman);
  json.key("resampled").begin_object().field("draws", s.resampled_certification.trials);
  JsonFields{json}("certification", s.resampled_certification);
  JsonFields{json}("false_certification", s.resampled_false_certification);
  json.end_object();
  json.key("grid").begin_array();
  for (const curation::ValidationStep& g : s.grid)
    json.begin_object()
        .field("quantile", g.quantile)
        .field("N", g.N)
        .field("unsafe", g.U)
        .end_object();
  json.end_array().end_object();
}

// The seed's labels certified at B, 2B and 4B by each procedure, and each budget alone.
void write_several_budgets(JsonWriter& json, const SeveralBudgetsStage& b) {
  json.key("several_budgets").begin_object();
  JsonFields{json}("budgets", b.budgets);
  for (const auto& [name, entries] :
       {std::pair{"one_threshold", &b.one_threshold}, std::pair{"per_budget", &b.per_budget},
        std::pair{"alone", &b.alone}}) {
    json.key(name).begin_array();
    for (const BudgetCertificate& c : *entries)
      json.begin_object()
          .field("budget", c.budget)
          .field("level", c.level)
          .field("certified", c.certified)
          .field("quantile", c.quantile)
          .field("selection_size", c.selection_size)
          .field("realized_unsafe_fraction", c.realized_unsafe_fraction)
          .end_object();
    json.end_array();
  }
  json.end_object();
}

// The value the seed learned, its methods' clones, and the time each stage took.
void write_seed_value_and_methods(JsonWriter& json, const SeedResult& s) {
  json.key("value")
      .begin_object()
      .field("pairs", s.pairs)
      .field("pair_attempts", s.pair_attempts)
      .field("pair_ties", s.pair_ties)
      .field("pair_accuracy", s.pair_accuracy);
  json.key("final_loss").begin_array();
  for (const double l : s.value_final_loss) json.value(l);
  json.end_array().end_object();
  json.key("methods").begin_array();
  for (const MethodResult& m : s.methods) {
    json.begin_object()
        .field("name", m.name)
        .field("selection_size", m.selection_size)
        .field("transitions", m.transitions)
        .field("selection_unsafe_fraction", m.selection_unsafe_fraction)
        .field("same_as_previous", m.same_as_previous)
        .field("refused", m.refused)
        .field("final_loss", m.final_loss);
    if (m.selection_size > 0) {
      json.field("reward", m.evaluation.mean_return).field("cost", m.evaluation.mean_cost);
      json.field("data_cost", m.data_cost).field("cloning_gap", m.cloning_gap);
      json.field("policy_data_cost", m.policy_data_cost)
          .field("selection_luck", m.selection_luck())
          .field("cloner_share", m.cloner_share());
      write_evaluation(json, m.evaluation);
    }
    json.end_object();
  }
  json.end_array();
  json.key("seconds").begin_object();
  for (const auto& [stage, seconds] : s.seconds) json.field(stage, seconds);
  json.end_object();
}

}  // namespace

std::string report_json(const PipelineResult& r) {
  std::ostringstream text;
  JsonWriter json(text);
  json.begin_object()
      .field("task", r.task.name)
      .field("budget", r.task.budget)
      .field("preset", r.options.preset)
      .field("seconds", r.seconds);
  write_pool_and_settings(json, r);
  json.field("certified_seeds", r.certified_seeds);
  write_method_summaries(json, r);
  // The first seed's certificate at the top level; every seed's below.
  JsonFields{json}("certificate", r.seeds.front().calibrated.certificate);
  json.key("seeds").begin_array();
  for (const SeedResult& s : r.seeds) {
    json.begin_object().field("seed", static_cast<std::int64_t>(s.seed));
    write_seed_selections(json, s);
    write_seed_oracle(json, s);
    write_several_budgets(json, s.several_budgets);
    write_seed_value_and_methods(json, s);
    // Five rankings of the pool on the grid, and the stage a refusal is (oracle).
    JsonFields{json}("score_quality", s.score_quality);
    json.end_object();
  }
  json.end_array().end_object();
  text << '\n';
  return std::move(text).str();
}

std::string corridor_json(const CorridorStudy& study, double seconds) {
  std::ostringstream text;
  JsonWriter json(text);
  const CorridorStudyOptions& o = study.options;
  json.begin_object()
      .field("task", "corridor")
      .field("budget", 0.0)
      .field("seconds", seconds)
      .field("expert_mass", o.expert_mass)
      .field("safe_probability", o.safe_probability)
      .field("trajectories", o.trajectories)
      .field("episodes", o.episodes)
      .field("seed", static_cast<std::int64_t>(o.seed));
  // methods: the four cloning rules at the longest horizon of the study
  const std::int64_t T = o.horizons.back();
  json.field("methods_horizon", T);
  json.key("methods").begin_array();
  for (const CorridorRow& row : study.rows)
    if (row.horizon == T)
      json.begin_object()
          .field("name", row.method)
          .field("reward", row.expected_cost)  // reward = cost = the risky action
          .field("cost", row.expected_cost)
          .field("within_budget", row.expected_cost <= 0.0)
          .field("all_safe_simulated", row.simulated)
          .field("all_safe_closed_form", row.closed_form)
          .end_object();
  json.end_array();
  json.field("certificate", std::optional<double>{});
  json.field("certificate_note",
             "the corridor's state is the time index alone, so a state-only value cannot rank "
             "its trajectories; the study is the oracle analysis of the cloning operators");
  json.key("pool_unsafe_fraction").begin_array();
  for (const double u : study.pool_unsafe_fraction) json.value(u);
  json.end_array();
  json.key("rows").begin_array();
  for (const CorridorRow& row : study.rows)
    json.begin_object()
        .field("horizon", row.horizon)
        .field("method", row.method)
        .field("weight_ratio", row.weight_ratio)
        .field("closed_form", row.closed_form)
        .field("clone_exact", row.clone_exact)
        .field("all_safe", row.all_safe)
        .field("episodes", row.episodes)
        .field("simulated", row.simulated)
        .field("low", row.low)
        .field("high", row.high)
        .field("expected_cost", row.expected_cost)
        .field("selected", row.selected)
        .end_object();
  json.end_array().end_object();
  text << '\n';
  return std::move(text).str();
}

}  // namespace ltt::pipeline
