// ltt pipeline: the reference pipeline end to end on a built-in task (docs/pipeline.md) and its
// report. Everything is computed before anything is written; then report.json, report.md and
// the SVG figures are written into --out, each file atomically, so a failed run leaves no
// partial report.
//
//   ltt pipeline --task point-goal --preset demo --out report/
//   ltt pipeline --task corridor --out corridor/      the paper's corridor figure
//   ltt pipeline --config report/report.json --out again/   the same run again

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>
#include <sstream>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <data/atomic_output.hpp>
#include <data/dsrl.hpp>
#include <data/npy.hpp>
#include <learning/backend.hpp>
#include <learning/model_file.hpp>
#include <pipeline/corridor_study.hpp>
#include <pipeline/pipeline.hpp>
#include <pipeline/report.hpp>

#include "certificate_json.hpp"
#include "format.hpp"
#include "json_writer.hpp"
#include "output_directory.hpp"
#include "pipeline_config.hpp"
#include "subcommand.hpp"

namespace ltt::cli {

namespace {

namespace pl = ltt::pipeline;

constexpr Flag pipeline_flags[] = {
    {"task", FlagKind::text,
     "point-goal, car-run, point-goal-reckless or corridor (required unless --config names it)"},
    {"config", FlagKind::text,
     "a previous report.json: replay the options it records (the flags given here override them)"},
    {"out", FlagKind::text,
     "output directory (created if missing): report.json, report.md, *.svg, seed-S/ artifacts",
     {}, true},
    {"preset", FlagKind::text, "demo (minutes), paper (the paper's hyperparameters) or tiny", "demo"},
    {"seeds", FlagKind::count, "run seeds 1..S (default: 1 for demo and tiny, 5 for paper)", {},
     false, 1000, "each seed trains and evaluates every method: minutes per seed"},
    {"episodes", FlagKind::count, "behavior pool size (corridor: trajectories per horizon)", {},
     false, 100000, "the pool is held in memory, about 0.1 MB per 200-step episode"},
    {"pool-seed", FlagKind::count, "seed of the behavior pool, shared by all seeds", "1"},
    {"dataset", FlagKind::text, "a DSRL file (HDF5 or .npy directory) of the task instead of a generated pool"},
    {"pairs", FlagKind::count, "preference pairs", {}, false, 1048576,
     "each pair holds 2H states in memory"},
    {"segment", FlagKind::count, "segment length H (at most the task's horizon)"},
    {"members", FlagKind::count, "value ensemble size K", {}, false, 64,
     "each member is a network trained on every pair"},
    {"value-epochs", FlagKind::count, "value training epochs", {}, false, 100000,
     "the time grows linearly with the epochs"},
    {"policy-epochs", FlagKind::count, "behavior cloning epochs", {}, false, 100000,
     "the time grows linearly with the epochs, for every method"},
    {"n", FlagKind::count, "calibration labels"},
    {"alpha", FlagKind::open_unit, "target unsafe fraction of the selection", "0.25"},
    {"delta", FlagKind::open_unit, "risk level of the certificate and the policy bounds", "0.1"},
    {"eval-episodes", FlagKind::count, "evaluation episodes per policy (corridor: rollouts)", {},
     false, 100000, "every method's policy runs each episode to the horizon"},
    {"validation-draws", FlagKind::count, "fresh calibration draws of the guarantee check (default 2000)",
     {}, false, std::int64_t{1} << 20, "as ltt validate --draws"},
    {"threads", FlagKind::count, "policies trained at once and ensemble members", "2", false, 256,
     "one operating-system thread each"},
    {"backend", FlagKind::text, "eigen, or torch when built with LibTorch", "eigen"},
    {"raw-observations", FlagKind::boolean,
     "train the value, the clones and the labels-only classifier on raw observations (default: "
     "z-scored per column, folded into each network's first layer)"},
    {"keep-pool", FlagKind::boolean, "keep the generated pool (DSRL layout) in --out"},
    {"json", FlagKind::boolean, "print report.json on standard output instead of the summary"},
};

constexpr Command pipeline_command{
    "pipeline",
    "The reference pipeline end to end on a built-in task: behavior pool (written and read\n"
    "back in the DSRL layout) -> preference pairs -> value ensemble -> trajectory scores ->\n"
    "calibration draw -> certificate or refusal -> gated reward-aware variant -> behavior\n"
    "cloning of every method's selection -> evaluation. Writes report.json, report.md and SVG\n"
    "figures into --out. --task corridor runs the corridor study of the paper's Proposition\n"
    "\"corridor\" instead (tabular cloning against the closed forms). Progress goes to stderr.",
    pipeline_flags};

// Fails before any work on an --out that cannot be a directory we write into
// (check_output_directory: a file in its place, an existing ancestor that is not a writable
// directory, the --dataset, a link, device or FIFO where one of `names` goes). Creates the
// directory (and missing parents, like mkdir -p); the report's files come only at the end.
// Called once every flag has been checked, so bad input leaves nothing behind.
void prepare_out(const std::filesystem::path& out, const std::vector<OutputName>& names,
                 const NamedPaths& inputs) {
  check_output_directory(out, names, inputs);
  // Created now (empty), so a directory that cannot exist fails here rather than after the run.
  std::error_code ec;
  std::filesystem::create_directories(out, ec);
  if (ec) throw BadInput(cat("--out: cannot create ", in_quotes(out.string()), ": ", ec.message()));
}

// Each file atomically; `name` may hold a subdirectory ("seed-1/scores.npy").
void write_files(const std::filesystem::path& out,
                 const std::vector<std::pair<std::string, std::string>>& files) {
  std::filesystem::create_directories(out);
  for (const auto& [name, text] : files) {
    std::filesystem::create_directories((out / name).parent_path());
    data::write_stream_atomically(out / name, [&](std::ostream& s) { s << text; });
  }
}

// A one-dimensional .npy file's bytes (little-endian, as np.save writes on this machine).
template <class T>
std::string npy_bytes(data::DType dtype, const std::vector<T>& values) {
  std::string bytes = data::npy_header(dtype, {static_cast<std::int64_t>(values.size())});
  bytes.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
  return bytes;
}

// A seed's hand-off files: the value's scores of every pool episode, the calibrated selection
// (certified or fallback) as episode indices, the calibration labels in `ltt certify --labels`
// form, and the value ensemble (a model file).
struct SeedArtifacts {
  std::string scores, selection, labels, model;
};

SeedArtifacts seed_artifacts(std::uint64_t seed) {
  const std::string dir = "seed-" + std::to_string(seed) + "/";
  return {dir + "scores.npy", dir + "selection.npy", dir + "labels.csv", dir + "model.ltt"};
}

std::vector<std::pair<std::string, std::string>> seed_files(const pl::SeedResult& s) {
  const SeedArtifacts at = seed_artifacts(s.seed);
  std::string labels = "id,unsafe\n";
  for (std::size_t i = 0; i < s.calibration.index.size(); ++i)
    labels += std::to_string(s.calibration.index[i]) + "," +
              std::to_string(static_cast<int>(s.calibration.unsafe[i])) + "\n";
  return {{at.scores, npy_bytes(data::DType::float64, s.scores)},
          {at.selection, npy_bytes(data::DType::int64, s.calibrated.selected)},
          {at.labels, std::move(labels)},
          {at.model, learning::encode_models(s.value.members)}};
}

void write_interval(JsonWriter& json, std::string_view name, const pl::Interval& i) {
  json.key(name)
      .begin_object()
      .field("mean", i.mean)
      .field("low", i.low)
      .field("high", i.high)
      .field("seeds", i.samples)
      .end_object();
}

void write_evaluation(JsonWriter& json, const pl::Evaluation& e) {
  json.key("evaluation")
      .begin_object()
      .field("episodes", static_cast<std::int64_t>(e.costs.size()))
      .field("mean_return", e.mean_return)
      .field("mean_cost", e.mean_cost)
      .field("over_budget", e.over_budget)
      .field("delta", e.delta)
      .field("over_budget_probability_upper", e.over_budget_upper)
      .field("cost_upper", e.cost_upper)
      .end_object();
}

// Where a clone's cost comes from: the data it was trained on, and the gap cloning adds.
void write_fidelity(JsonWriter& json, const pl::MethodSummary& m) {
  write_interval(json, "data_cost", m.data_cost);
  write_interval(json, "cloning_gap", m.cloning_gap);
  json.field("refused_seeds", m.refused_seeds);
  if (m.cost.samples == 0) {
    json.field("pooled", std::optional<double>{});
    return;
  }
  json.key("pooled")
      .begin_object()
      .field("seeds", m.cost.samples)
      .field("episodes", static_cast<std::int64_t>(m.pooled.costs.size()))
      .field("mean_cost", m.pooled.mean_cost)
      .field("over_budget", m.pooled.over_budget)
      .field("delta", m.pooled.delta)
      .field("over_budget_probability_upper", m.pooled.over_budget_upper)
      .field("cost_upper", m.pooled.cost_upper)
      .end_object();
}

std::string report_json(const pl::PipelineResult& r) {
  std::ostringstream text;
  JsonWriter json(text);
  const pl::PipelineOptions& o = r.options;
  json.begin_object()
      .field("task", r.task.name)
      .field("budget", r.task.budget)
      .field("preset", o.preset)
      .field("seconds", r.seconds);
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
      .field("validation_draws", o.validation_draws)
      .field("backend", o.backend->name());
  json.key("value_hidden").begin_array();
  for (const std::int64_t w : o.value.hidden) json.value(w);
  json.end_array();
  json.key("policy_hidden").begin_array();
  for (const std::int64_t w : o.policy.hidden) json.value(w);
  json.end_array().end_object();
  json.field("certified_seeds", r.certified_seeds);
  json.key("methods").begin_array();
  for (const pl::MethodSummary& m : r.summary) {
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
  // The first seed's certificate at the top level; every seed's below.
  json.key("certificate").begin_object();
  write_certificate_fields(json, r.seeds.front().calibrated.certificate);
  json.end_object();
  json.key("seeds").begin_array();
  for (const pl::SeedResult& s : r.seeds) {
    json.begin_object().field("seed", static_cast<std::int64_t>(s.seed));
    json.key("certificate").begin_object();
    write_certificate_fields(json, s.calibrated.certificate);
    json.end_object();
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
    {
      const SeedArtifacts at = seed_artifacts(s.seed);
      json.key("artifacts")
          .begin_object()
          .field("scores", at.scores)
          .field("selection", at.selection)
          .field("labels", at.labels)
          .field("model", at.model)
          .end_object();
    }
    json.key("oracle").begin_object();
    json.field("unsafe_member_cost", s.unsafe_member_cost);
    json.field("purity_margin", s.purity_margin)
        .field("first_step_rate", s.first_step_rate)
        .field("realized_unsafe_fraction", s.realized_unsafe_fraction)
        .field("score_cost_spearman", s.score_cost_spearman);
    json.key("resampled").begin_object().field("draws", s.resampled_certification.trials);
    write_proportion(json, "certification", s.resampled_certification);
    write_proportion(json, "false_certification", s.resampled_false_certification);
    json.end_object();
    json.key("grid").begin_array();
    for (const curation::ValidationStep& g : s.grid)
      json.begin_object()
          .field("quantile", g.quantile)
          .field("N", g.N)
          .field("unsafe", g.U)
          .end_object();
    json.end_array().end_object();
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
    for (const pl::MethodResult& m : s.methods) {
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
        write_evaluation(json, m.evaluation);
      }
      json.end_object();
    }
    json.end_array();
    json.key("seconds").begin_object();
    for (const auto& [stage, seconds] : s.seconds) json.field(stage, seconds);
    json.end_object().end_object();
  }
  json.end_array().end_object();
  text << '\n';
  return std::move(text).str();
}

std::string corridor_json(const pl::CorridorStudy& study, double seconds) {
  std::ostringstream text;
  JsonWriter json(text);
  const pl::CorridorStudyOptions& o = study.options;
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
  for (const pl::CorridorRow& row : study.rows)
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
  for (const pl::CorridorRow& row : study.rows)
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

// The corridor study's report.md: the setting, the table and the figure link.
std::string corridor_report_markdown(const pl::CorridorStudy& study) {
  const pl::CorridorStudyOptions& o = study.options;
  std::ostringstream md;
  md << "# ltt pipeline: corridor\n\n"
     << "The corridor CMDP of the paper's Proposition \"corridor\": expert mass q = "
     << pl::fixed(o.expert_mass, 2) << ", per-step safe probability p_s = " << pl::fixed(o.safe_probability, 2)
     << ", budget 0 (a trajectory is safe only if every step is). For each horizon T a pool of "
     << o.trajectories << " behavior trajectories is cloned tabularly four ways and each clone "
     << "is rolled out " << o.episodes << " times. Closed forms: weighted cloning with "
     << "safe-to-risky weight ratio W gives p'_s = p W / (p W + 1 - p) per step, so the all-safe "
     << "probability p'_s^T vanishes with T for every finite clip; trajectory selection clones "
     << "only zero-cost trajectories and is all-safe whenever the selection is nonempty.\n\n"
     << pl::corridor_markdown(study) << "\n![all-safe probability against T](corridor.svg)\n";
  return md.str();
}

// A count flag that must be at least 1, when given.
std::optional<std::int64_t> positive_count(const Arguments& args, std::string_view flag) {
  const auto v = args.optional_count(flag);
  if (v && *v < 1) throw BadInput(cat("--", flag, ": 0 must be at least 1"));
  return v;
}

int run_corridor(const Invocation& call, const Arguments& args, const std::filesystem::path& out,
                 const std::optional<PipelineConfig>& config) {
  pl::CorridorStudyOptions options;
  if (config && config->expert_mass) options.expert_mass = *config->expert_mass;
  if (config && config->safe_probability) options.safe_probability = *config->safe_probability;
  if (const auto e = positive_count(args, "episodes")) options.trajectories = *e;
  if (const auto e = positive_count(args, "eval-episodes")) options.episodes = *e;
  options.seed = static_cast<std::uint64_t>(args.count("pool-seed"));
  NamedPaths inputs;
  if (args.has("config")) inputs.emplace_back("config", args.text("config"));
  prepare_out(out, {{"report.json"}, {"report.md"}, {"corridor.svg"}}, inputs);
  const auto started = std::chrono::steady_clock::now();
  const pl::CorridorStudy study = pl::run_corridor_study(
      options, [&](std::string_view line) { call.err << "ltt pipeline: " << line << '\n'; });
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const std::string json = corridor_json(study, seconds);
  write_files(out, {{"report.json", json},
                    {"report.md", corridor_report_markdown(study)},
                    {"corridor.svg", pl::corridor_figure_svg(study)}});
  if (args.flag("json"))
    call.out << json;
  else
    call.out << pl::corridor_markdown(study) << "\nwritten: " << (out / "report.json").string()
             << ", report.md, corridor.svg\n";
  return 0;
}

// The command line, with --config's options appended for the flags it does not give.
Arguments with_config(const Invocation& call, const Arguments& typed, const PipelineConfig& config) {
  const std::vector<std::string> missing = config.missing_flags(typed);
  std::vector<std::string_view> all(call.args.begin(), call.args.end());
  all.insert(all.end(), missing.begin(), missing.end());
  return parse(pipeline_command, all);
}

}  // namespace

int run_pipeline(const Invocation& call) {
  const auto typed = parse_or_help(pipeline_command, call);
  if (!typed) return 0;
  const std::filesystem::path out = typed->text("out");
  std::optional<PipelineConfig> config;
  std::optional<Arguments> merged;
  if (typed->has("config")) {
    config = read_pipeline_config(typed->text("config"), pipeline_flags);
    merged = with_config(call, *typed, *config);
  }
  const Arguments* args = merged ? &*merged : &*typed;
  if (!args->has("task")) throw BadInput("missing required flag --task (or a --config that names it)");
  const std::string& task = args->text("task");
  if (config && !config->task.empty() && (config->task == "corridor") != (task == "corridor"))
    throw BadInput(cat("--task: ", task, " cannot replay --config ", typed->text("config"),
                       ", a report of task ", config->task, " (the corridor study has other options)"));
  if (task == "corridor") return run_corridor(call, *args, out, config);
  (void)pl::task_named(task);  // an unknown name fails here, naming the tasks
  pl::PipelineOptions o = pl::preset_options(args->text("preset"), task);
  if (config) {  // what the report records that no flag sets
    if (config->value_hidden) o.value.hidden = *config->value_hidden;
    if (config->policy_hidden) o.policy.hidden = *config->policy_hidden;
    if (config->return_weight_kappa) o.return_weight_kappa = *config->return_weight_kappa;
    if (config->reward_fraction) o.reward_fraction = *config->reward_fraction;
  }
  const auto positive = [&](std::string_view flag) { return positive_count(*args, flag); };
  if (const auto s = positive("seeds")) {
    o.seeds.clear();
    for (std::int64_t i = 1; i <= *s; ++i) o.seeds.push_back(static_cast<std::uint64_t>(i));
  }
  if (const auto v = positive("episodes")) o.episodes = *v;
  o.pool_seed = static_cast<std::uint64_t>(args->count("pool-seed"));
  std::optional<data::DsrlPool> layout;  // a --dataset's episodes
  if (args->has("dataset")) {
    // Read the layout now, so a bad file fails with one line before any progress is shown.
    const std::string& file = args->text("dataset");
    layout = data::load_dsrl_pool(file);
    const pl::Task& t = pl::task_named(task);
    if (layout->observation_dim != t.observation_dim || layout->action_dim != t.action_dim)
      throw BadInput(cat("--dataset: ", in_quotes(file), " has observations of ",
                         std::to_string(layout->observation_dim), " and actions of ",
                         std::to_string(layout->action_dim), " dims; task ", task, " needs ",
                         std::to_string(t.observation_dim), " and ",
                         std::to_string(t.action_dim)));
    o.dataset = file;
    o.episodes = layout->size();
  }
  if (const auto v = positive("pairs")) o.pairs.pairs = *v;
  if (const auto v = positive("segment")) o.pairs.segment_length = *v;
  // A segment is H consecutive states of one episode, and pairs need two episodes that long:
  // checked here, before the pool is generated, against the task's horizon or the dataset.
  if (layout) {
    std::int64_t eligible = 0, longest = 0;
    for (const data::Episode& e : layout->episodes) {
      eligible += e.length >= o.pairs.segment_length ? 1 : 0;
      longest = std::max(longest, e.length);
    }
    if (eligible < 2)
      throw BadInput(cat("--segment: ", std::to_string(o.pairs.segment_length),
                         " leaves fewer than 2 episodes of at least that many steps in ",
                         in_quotes(o.dataset->string()), " (the longest has ",
                         std::to_string(longest), ")"));
  } else if (const std::int64_t horizon = pl::task_named(task).horizon;
             o.pairs.segment_length > horizon) {
    throw BadInput(cat("--segment: ", std::to_string(o.pairs.segment_length),
                       " exceeds the task's horizon ", std::to_string(horizon),
                       " (a segment is H consecutive states of one episode)"));
  }
  if (const auto v = positive("members")) o.value.members = *v;
  if (const auto v = positive("value-epochs")) o.value.epochs = *v;
  if (const auto v = positive("policy-epochs")) o.policy.epochs = *v;
  if (const auto v = positive("n")) o.calibration_size = *v;
  if (const auto v = positive("eval-episodes")) {
    if (*v < 2) throw BadInput("--eval-episodes: 1 must be at least 2 (the policy bounds need two)");
    o.eval_episodes = *v;
  }
  if (o.calibration_size > o.episodes)
    throw BadInput(cat("--n: ", std::to_string(o.calibration_size),
                       " must not exceed the pool's ", std::to_string(o.episodes),
                       " episodes (labels are drawn without replacement)"));
  if (const auto v = positive("threads")) o.threads = *v;
  if (const auto v = positive("validation-draws")) o.validation_draws = *v;
  o.calibration.alpha = args->real("alpha");
  o.calibration.delta = args->real("delta");
  o.certificate_delta = o.calibration.delta;
  o.backend = &learning::backend_named(args->text("backend"));
  o.keep_pool = args->flag("keep-pool");
  o.normalize_observations = !args->flag("raw-observations");
  o.scratch = o.keep_pool ? out : std::filesystem::temp_directory_path() /
                                      ("ltt-pipeline-" + std::to_string(::getpid()));
  {
    std::vector<OutputName> names;
    for (const char* name : {"report.json", "report.md", "score_vs_cost.svg",
                             "certification_rate.svg", "methods.svg", "cost_histogram.svg"})
      names.push_back({name});
    for (const std::uint64_t seed : o.seeds) {
      const SeedArtifacts at = seed_artifacts(seed);
      for (const std::string* name : {&at.scores, &at.selection, &at.labels, &at.model})
        names.push_back({*name});
    }
    NamedPaths inputs;
    if (o.dataset) inputs.emplace_back("dataset", *o.dataset);
    if (typed->has("config")) inputs.emplace_back("config", typed->text("config"));
    prepare_out(out, names, inputs);
  }

  // The generated pool's DSRL round trip goes through a private directory, removed however
  // the run ends.
  struct RemoveScratch {
    std::filesystem::path dir;
    ~RemoveScratch() {
      std::error_code ignored;
      if (!dir.empty()) std::filesystem::remove_all(dir, ignored);
    }
  } const cleanup{o.keep_pool ? std::filesystem::path{} : o.scratch};
  const pl::PipelineResult result = pl::run_pipeline(
      o, [&](std::string_view line) { call.err << "ltt pipeline: " << line << '\n'; });
  const std::string json = report_json(result);
  std::vector<std::pair<std::string, std::string>> files{
      {"report.json", json},
      {"report.md", pl::report_markdown(result)},
      {"score_vs_cost.svg", pl::score_cost_svg(result)},
      {"certification_rate.svg", pl::certification_rate_svg(result)},
      {"methods.svg", pl::methods_svg(result)},
      {"cost_histogram.svg", pl::cost_histogram_svg(result)}};
  for (const pl::SeedResult& s : result.seeds)
    for (auto& file : seed_files(s)) files.push_back(std::move(file));
  write_files(out, files);
  if (args->flag("json"))
    call.out << json;
  else
    call.out << pl::run_summary(result) << "\nwritten: " << (out / "report.md").string()
             << ", report.json, score_vs_cost.svg, certification_rate.svg, methods.svg, "
                "cost_histogram.svg, seed-S/{scores.npy, selection.npy, labels.csv, model.ltt}\n";
  return 0;
}

}  // namespace ltt::cli
