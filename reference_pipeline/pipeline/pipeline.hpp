#pragma once
// The reference pipeline end to end (docs/pipeline.md; paper, sections 4 and 6 and appendix
// "Hyperparameters"), on a built-in task:
//
//   behavior pool (generated, written and read back in the DSRL layout, or a DSRL file)
//   -> preference pairs (sample_preference_pairs: 1000 pairs of H = 30 segments)
//   -> value ensemble (Bradley-Terry over segment sums)  -> trajectory scores g = mean V-bar
//   -> calibration draw (n = 200, labels u = [cost > budget])
//   -> calibrated selection at (alpha, delta): certificate or refusal with fallback
//   -> certification-gated reward-aware sub-selection (top half by return, certified only)
//   -> behavior cloning of every method's selection -> evaluation (100 episodes)
//
// Observations are z-scored per column for the value, the cloned policies and the labels-only
// classifier alike, each over the rows it trains on, the map folded into the first layer
// (normalize_observations; the paper does not state a normalization, this is standard practice
// for MLP inputs); normalize_observations = false (`--raw-observations`) trains on raw rows.
//
// Methods side by side, as in the paper's main table:
//   BC-All               every trajectory of the pool
//   BC-Safe              the ground-truth safe trajectories (a label on every trajectory)
//   V-filter             top floor(f N) by score, f the calibration sample's safe fraction
//   Calibrated           the calibrated selection after the gated sub-selection
//   Calibrated-ungated   the calibrated selection itself (identical when uncertified)
//   Return-weighted      certified return-weighted cloning: |S| draws from the calibrated
//                        selection S with probability proportional to exp(clip(z(R), +-kappa)),
//                        kappa = 2; refused (not cloned) on an uncertified selection
//   Labels-only          a state classifier trained on the n calibration labels alone, scored
//                        and cut like the V-filter (labels_only_filter)
//   Random, Return,      uniform / top-by-return / bottom-by-return selections of BC-Safe's
//   Bottom-return        size (matched size)
//
// The pool is fixed across seeds (one dataset per task, as in the paper); a seed s draws the
// preference pairs, the ensemble's initialization, the calibration sample, the random
// selection, every policy's initialization and the evaluation layouts, each from its own
// stream learning::stream_seed(s, stream). Diagnostics computed from every label (the oracle
// unsafe count of each grid selection, the purity margin, the closed-form certification rate,
// all three from the guarantee check; the score quality of five rankings and the stage a
// refusal is, score_quality.hpp) are reported next to the procedure's own outputs, never fed
// into them.
#include <array>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <curation/calibrated_selection.hpp>
#include <curation/preference_pairs.hpp>
#include <curation/reward_curation.hpp>
#include <curation/v_filter.hpp>
#include <curation/validation.hpp>
#include <learning/backend.hpp>
#include <learning/behavior_cloning.hpp>
#include <learning/safety_value.hpp>
#include <learning/value_training.hpp>

#include "pipeline/bootstrap.hpp"
#include "pipeline/evaluation.hpp"
#include "pipeline/score_quality.hpp"
#include "pipeline/task.hpp"

namespace ltt::pipeline {

struct PipelineOptions {
  std::string task = "point-goal";
  std::string preset = "demo";
  std::int64_t episodes = 1000;                  // pool size (generated pools)
  std::uint64_t pool_seed = 1;                   // the behavior pool's seed, shared by every seed
  std::optional<std::filesystem::path> dataset;  // a DSRL file of the task instead
  std::vector<std::uint64_t> seeds{1};
  curation::PreferencePairOptions pairs{};   // pairs 1000, H 30 (its seed is overridden)
  learning::ValueTrainingOptions value{};    // K 3, 256x2, 300 epochs, batch 512, Adam 3e-4
  learning::PolicyTrainingOptions policy{};  // 256x2, 100 epochs, batch 512
  std::int64_t calibration_size = 200;       // n
  curation::CalibratedSelectionOptions calibration{};  // alpha 0.25, delta 0.1, paper grid, 50
  double reward_fraction = 0.5;                        // gated sub-selection: top half by return
  double return_weight_kappa = 2;                      // certified return-weighted cloning's clip
  bool normalize_observations = true;  // z-scored inputs (value, policies, classifier)
  std::int64_t eval_episodes = 100;
  // Fresh episodes per behavior checkpoint for the policy-level data cost (0: not computed);
  // only a generated pool whose task has a training run has checkpoints.
  std::int64_t behavior_cost_episodes = 20;
  double certificate_delta = 0.1;        // policy certificates' 1 - confidence
  std::int64_t rate_curve_max = 2000;    // certification rate plotted for n up to this
  std::int64_t validation_draws = 2000;  // fresh calibration draws of the guarantee check
  std::int64_t threads = 2;              // policies trained / evaluated at once
  const learning::Backend* backend = &learning::eigen_backend();
  std::filesystem::path scratch;  // where a generated pool is written and read back
  bool keep_pool = false;         // leave the written pool in scratch
};

// The preset's options for a task: "demo" (about 2 minutes for one seed of point-goal on 2
// cores), "paper" (the paper's hyperparameters, five seeds) or "tiny" (seconds, for tests).
// Throws std::invalid_argument naming 'preset'.
PipelineOptions preset_options(std::string_view preset, std::string_view task);

// The behavior pool as the pipeline sees it, after the DSRL round trip.
struct BehaviorPool {
  std::string source;  // the DSRL file read (generated pools: where it was)
  std::int64_t transitions = 0;
  std::int64_t observation_dim = 0, action_dim = 0;
  std::vector<float> observations;    // transitions x observation_dim
  std::vector<float> actions;         // transitions x action_dim, clipped to [-1, 1]
  std::vector<double> step_costs;     // per transition
  std::vector<std::int64_t> offsets;  // episode i owns rows [offsets[i], offsets[i + 1])
  std::vector<double> episodic_return, episodic_cost;
  std::vector<std::uint8_t> unsafe;  // cost > budget
  std::int64_t unsafe_count = 0;
  // Where the episodes came from, for a generated pool whose task has a training run (both empty
  // otherwise, and for a DSRL file): each episode's behavior checkpoint, and each checkpoint's
  // policy-level cost, its mean episodic cost over options.behavior_cost_episodes fresh episodes
  // (NaN for a checkpoint that no episode names).
  std::vector<std::int64_t> episode_checkpoint;
  std::vector<double> checkpoint_cost;
  bool has_behavior_cost() const { return !checkpoint_cost.empty(); }
  std::int64_t episodes() const { return static_cast<std::int64_t>(episodic_cost.size()); }
};

// Progress: called with one line per stage ("seed 1/5: value ensemble (3 members, 40 epochs)").
using ProgressLine = std::function<void(std::string_view)>;

// Generates the task's pool (or reads options.dataset), writing a generated pool to
// options.scratch and reading it back through ltt::data's DSRL reader; for a generated pool
// with behavior checkpoints, also their policy-level costs (BehaviorPool::checkpoint_cost).
// Throws std::invalid_argument (bad options) or data::DataError (an unreadable or mismatched
// file).
BehaviorPool load_behavior_pool(const Task& task, const PipelineOptions& options,
                                const ProgressLine& progress = {});

struct MethodResult {
  std::string name;
  std::int64_t selection_size = 0;       // trajectories cloned
  std::int64_t transitions = 0;          // rows cloned
  double selection_unsafe_fraction = 0;  // oracle: share of the selection over budget
  double final_loss = 0;                 // behavior cloning, last epoch
  bool same_as_previous = false;         // Calibrated-ungated when the gate refused: not retrained
  bool refused = false;                  // Return-weighted on an uncertified selection: not run
  // The data's side of the clone's cost: the mean episodic cost of the trajectories cloned
  // (repeats counted), and the clone's mean cost minus it (the cloning gap).
  double data_cost = 0;
  double cloning_gap = 0;
  // The same cloning gap split in two where the pool knows its behavior checkpoints:
  // policy_data_cost is the mean over the trajectories cloned (repeats counted) of their
  // checkpoints' policy-level costs (BehaviorPool::checkpoint_cost), the cost the selected
  // behavior has on average rather than in the episodes it happened to have. Then
  //   cloning gap = selection luck (policy_data_cost - data_cost: how much luckier the selected
  //                 episodes were than their checkpoints)
  //               + cloner share (clone cost - policy_data_cost).
  std::optional<double> policy_data_cost;
  Evaluation evaluation;
  std::optional<double> selection_luck() const {
    if (!policy_data_cost) return std::nullopt;
    return *policy_data_cost - data_cost;
  }
  std::optional<double> cloner_share() const {
    if (!policy_data_cost) return std::nullopt;
    return evaluation.mean_cost - *policy_data_cost;
  }
};

// The labels-only control (paper, appendix "Labels-only filtering"): a state classifier trained
// on the n calibration trajectories alone, every state labeled with its trajectory's bit
// (+1 within budget, -1 over it), with the value's hidden widths and a tanh output fitted by
// squared error (learning::train_policy: a squared-error classifier, not the paper's unstated
// loss); a trajectory scores the mean output over its states (the value's scoring rule), and
// the selection keeps the top floor(f N) by score at the calibration sample's safe fraction f
// (curation::v_filter's rule). Reads no label outside the calibration sample.
struct LabelsOnlyFilter {
  std::vector<double> scores;  // per pool trajectory
  curation::VFilterSelection selection;
  std::int64_t training_rows = 0;  // states of the n labeled trajectories
  double final_loss = 0;           // squared error, last epoch
};

// `classifier` gives the hidden widths, epochs, batch, seed and normalization; its other
// fields are kept. Throws std::invalid_argument for a calibration outside the pool.
LabelsOnlyFilter labels_only_filter(std::span<const float> observations, std::int64_t obs_dim,
                                    std::span<const std::int64_t> offsets,
                                    const curation::Calibration& calibration,
                                    const learning::PolicyTrainingOptions& classifier,
                                    const learning::Backend& backend = learning::eigen_backend());

// Stage `score` (section 4.1): preference pairs drawn from the pool's step costs, the value
// ensemble trained on them, and the trajectory scores g = mean V-bar.
struct ScoreStage {
  std::int64_t pairs = 0, pair_attempts = 0, pair_ties = 0;
  std::vector<double> value_final_loss;   // per member, last epoch
  double pair_accuracy = 0;               // V-bar on the training pairs
  double score_cost_spearman = 0;         // g against episodic cost over the pool (oracle)
  curation::PreferencePairs drawn_pairs;  // the sampler's pairs, each segment's trajectory named
  std::vector<double> scores;             // g(tau) per trajectory
  learning::ValueEnsemble value;          // the ensemble that scored them (raw observation rows)
};

// Stage `certify` (sections 4.2-4.3): the n labels drawn and the calibrated selection, a
// certificate or a refusal with its fallback.
struct CertifyStage {
  curation::Calibration calibration;
  curation::CalibratedSelection calibrated;
};

// Stage `curate` (section 4.4 and the baselines that read the same n labels): the gated
// reward-aware sub-selection, the V-filter, certified return-weighted resampling.
struct CurateStage {
  curation::RewardSubselection gated;
  curation::VFilterSelection v_filter;
  curation::ReturnWeightedResample return_weighted;
};

// Stage `diagnose`, oracle (every label read; the procedure never sees it). The grid's true
// composition, the purity margin and the closed-form rate come from the guarantee check
// (curation::validate_guarantee, paper, section "Guarantee validation"): validation_draws fresh
// calibration samples of n on this pool and score, each walked like the real one; how often the
// walk certifies, and how often it certifies a selection holding more than alpha unsafe (false
// certification, at most delta by Proposition "guarantee").
struct Diagnostics {
  // The mean episodic cost of the calibrated selection's members over budget (none: the
  // selection holds no unsafe trajectory), what a failed clone's cost can be set against.
  std::optional<double> unsafe_member_cost;
  std::vector<curation::ValidationStep> grid;  // every grid step: quantile, N_j, U_j
  double purity_margin = 0;                    // alpha - min_j U_j / N_j
  double first_step_rate = 0;                  // certification_rate(N, N_1, U_1, n, alpha, delta)
  std::vector<double> rate_curve;              // the same for n = 0 .. rate_curve_max (<= N)
  curation::ProportionEstimate resampled_certification, resampled_false_certification;
  double realized_unsafe_fraction = 0;  // share of the returned selection over budget
};

// Stage `several_budgets` (docs/several-budgets.md): the seed's n calibration draws banded at
// the task's budget B and at 2B and 4B (the benchmarks' three thresholds), certified by both
// procedures of curation/several_budgets_selection.hpp and, for comparison, each budget alone at
// the full delta (no simultaneous guarantee). Nothing is cloned from it.
struct BudgetCertificate {
  double budget = 0, level = 0;  // the budget and the delta its walk ran at
  bool certified = false;
  double quantile = 0;                  // the certified quantile, or the fallback's
  std::int64_t selection_size = 0;      // certified selection or fallback
  double realized_unsafe_fraction = 0;  // oracle: share of the selection over this budget
};
struct SeveralBudgetsStage {
  std::vector<double> budgets;  // B, 2B, 4B
  std::vector<BudgetCertificate> one_threshold, per_budget, alone;
};

// One seed: what each stage returned, side by side.
struct SeedResult : ScoreStage, CertifyStage, CurateStage, Diagnostics {
  std::uint64_t seed = 0;
  SeveralBudgetsStage several_budgets;  // the same labels at B, 2B and 4B
  LabelsOnlyFilter labels_only;         // the labels-only control
  ScoreQuality score_quality;           // stage `score_quality` (oracle)
  std::vector<MethodResult> methods;    // stage `clone_and_evaluate`, in table order
  std::vector<std::pair<std::string, double>> seconds;  // wall time per stage
};

struct MethodSummary {
  std::string name;
  Interval reward, cost;       // over seeds: mean and 95% bootstrap CI
  bool within_budget = false;  // mean cost <= budget (the paper's convention)
  Interval selection_size;
  Interval data_cost, cloning_gap;  // over the seeds that cloned
  // Over the same seeds, where the pool knows its checkpoints (MethodResult).
  std::optional<Interval> policy_data_cost, selection_luck, cloner_share;
  std::int64_t refused_seeds = 0;  // Return-weighted: seeds whose selection was uncertified
  // The deployed-policy certificates on the episodes of every seed pooled (paper, appendix
  // "Certificates on the deployed policy"): Clopper-Pearson on Pr[cost > budget] and
  // Maurer-Pontil on E[cost] with the task's a-priori range; bounds for the policy that runs
  // one of the seeds' clones at random, each seed contributing the same number of episodes.
  Evaluation pooled;
};

struct PipelineResult {
  PipelineOptions options;
  Task task;
  std::int64_t pool_episodes = 0, pool_transitions = 0, pool_unsafe = 0;
  double pool_mean_return = 0, pool_mean_cost = 0;
  std::string pool_source;
  std::vector<double> pool_cost;               // episodic cost per trajectory
  std::vector<std::uint8_t> pool_unsafe_bits;  // cost > budget
  std::vector<SeedResult> seeds;
  std::vector<MethodSummary> summary;  // methods in table order
  std::int64_t certified_seeds = 0;
  double seconds = 0;
};

// One seed: score -> certify -> curate -> diagnose -> the labels-only control ->
// score_quality -> clone_and_evaluate, each stage below a function of the pool, the options
// and the seed.
SeedResult run_seed(const Task& task, const BehaviorPool& pool, const PipelineOptions& options,
                    std::uint64_t seed, const ProgressLine& progress = {});

// The whole run: the pool once, every seed, the summaries.
PipelineResult run_pipeline(const PipelineOptions& options, const ProgressLine& progress = {});

// The stages of run_seed. Each reads its own seed stream (learning::stream_seed(seed, ...)), so
// none depends on another's randomness.
ScoreStage score(const BehaviorPool& pool, const PipelineOptions& options, std::uint64_t seed,
                 const ProgressLine& progress = {});
CertifyStage certify(const BehaviorPool& pool, std::span<const double> scores,
                     const PipelineOptions& options, std::uint64_t seed);
CurateStage curate(const BehaviorPool& pool, std::span<const double> scores,
                   const CertifyStage& certified, const PipelineOptions& options,
                   std::uint64_t seed);
// The budget multiples the report certifies together from one seed's labels.
inline constexpr double several_budget_multiples[] = {1.0, 2.0, 4.0};
SeveralBudgetsStage several_budgets(const BehaviorPool& pool, std::span<const double> scores,
                                    const CertifyStage& certified, const Task& task,
                                    const PipelineOptions& options);
Diagnostics diagnose(const BehaviorPool& pool, std::span<const double> scores,
                     const curation::CalibratedSelection& calibrated,
                     const PipelineOptions& options, std::uint64_t seed);
LabelsOnlyFilter labels_only_control(const BehaviorPool& pool,
                                     const curation::Calibration& calibration,
                                     const PipelineOptions& options, std::uint64_t seed,
                                     const ProgressLine& progress = {});
// Stage `score_quality` (oracle): the seed's scores, its labels-only scores and its preference
// pairs against the pool's costs, returns and unsafe bits, on the walk's grid at the walk's
// (alpha, delta, n). Reads no randomness; the seed's stages up to labels_only must have run.
ScoreQuality diagnose_scores(const BehaviorPool& pool, const SeedResult& seed,
                             const PipelineOptions& options);

// What a method clones on one seed; refused: the method declines this seed (Return-weighted on
// an uncertified selection) and nothing is cloned.
struct MethodSelection {
  std::vector<std::int64_t> selected;
  bool refused = false;
};

// Every method's selection, in table order, from the seed's stages.
std::vector<MethodSelection> method_selections(const BehaviorPool& pool, const SeedResult& seed);

// Behavior cloning of each selection and evaluation of the clone, `options.threads` policies at
// a time; a selection equal to the previous one is copied, not retrained.
std::vector<MethodResult> clone_and_evaluate(const Task& task, const BehaviorPool& pool,
                                             std::span<const MethodSelection> selections,
                                             const PipelineOptions& options, std::uint64_t seed,
                                             const ProgressLine& progress = {});

// The methods in table order: Method indexes method_list, SeedResult::methods and
// PipelineResult::summary. Names and selections come from one table (pipeline/seed_stages.cpp),
// whose rows carry their Method, checked against their position at compile time.
enum class Method : std::size_t {
  bc_all,
  bc_safe,
  v_filter,
  calibrated,
  calibrated_ungated,
  return_weighted,
  labels_only,
  random,
  top_return,
  bottom_return
};
inline constexpr std::size_t method_count = 10;
extern const std::array<std::string_view, method_count> method_list;

// method_list as strings.
std::vector<std::string> method_names();

}  // namespace ltt::pipeline
