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

#include <certification/format.hpp>
#include <certification/output_directory.hpp>

#include "pipeline_config.hpp"
#include "pipeline_flags.hpp"
#include "subcommand.hpp"

namespace ltt::cli {

namespace pipeline_subcommand {

namespace pl = ltt::pipeline;

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

std::vector<std::pair<std::string, std::string>> seed_files(const pl::SeedResult& s) {
  const pl::SeedArtifacts at = pl::seed_artifacts(s.seed);
  std::string labels = "id,unsafe\n";
  for (std::size_t i = 0; i < s.calibration.index.size(); ++i)
    labels += cat(std::to_string(s.calibration.index[i]), ",",
                  std::to_string(static_cast<int>(s.calibration.unsafe[i])), "\n");
  return {{at.scores, npy_bytes(data::DType::float64, s.scores)},
          {at.selection, npy_bytes(data::DType::int64, s.calibrated.selected)},
          {at.labels, std::move(labels)},
          {at.model, learning::encode_models(s.value.members)}};
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
  const std::string json = pl::corridor_json(study, seconds);
  write_files(out, {{"report.json", json},
                    {"report.md", pl::corridor_report_markdown(study)},
                    {"corridor.svg", pl::corridor_figure_svg(study)}});
  if (args.flag("json"))
    call.out << json;
  else
    call.out << pl::corridor_markdown(study) << "\nwritten: " << (out / "report.json").string()
             << ", report.md, corridor.svg\n";
  return 0;
}

// The command line, with --config's options appended for the flags it does not give.
Arguments with_config(const Invocation& call, const Arguments& typed,
                      const PipelineConfig& config) {
  const std::vector<std::string> missing = config.missing_flags(typed);
  std::vector<std::string_view> all(call.args.begin(), call.args.end());
  all.insert(all.end(), missing.begin(), missing.end());
  return parse(pipeline_command, all);
}

// What the report records that no flag sets, from --config.
void apply_config(pl::PipelineOptions& o, const PipelineConfig& config) {
  if (config.value_hidden) o.value.hidden = *config.value_hidden;
  if (config.policy_hidden) o.policy.hidden = *config.policy_hidden;
  if (config.return_weight_kappa) o.return_weight_kappa = *config.return_weight_kappa;
  if (config.reward_fraction) o.reward_fraction = *config.reward_fraction;
}

// --dataset: its layout read now, so a bad file fails with one line before any progress is
// shown; none without --dataset.
std::optional<data::DsrlPool> read_dataset(pl::PipelineOptions& o, const Arguments& args,
                                           const std::string& task) {
  if (!args.has("dataset")) return std::nullopt;
  const std::string& file = args.text("dataset");
  data::DsrlPool layout = data::load_dsrl_pool(file);
  const pl::Task& t = pl::task_named(task);
  if (layout.observation_dim != t.observation_dim || layout.action_dim != t.action_dim)
    throw BadInput(cat("--dataset: ", in_quotes(file), " has observations of ",
                       std::to_string(layout.observation_dim), " and actions of ",
                       std::to_string(layout.action_dim), " dims; task ", task, " needs ",
                       std::to_string(t.observation_dim), " and ", std::to_string(t.action_dim)));
  o.dataset = file;
  o.episodes = layout.size();
  return layout;
}

// A segment is H consecutive states of one episode, and pairs need two episodes that long:
// checked before the pool is generated, against the task's horizon or the dataset.
void check_segment(const pl::PipelineOptions& o, const std::optional<data::DsrlPool>& layout,
                   const std::string& task) {
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
}

// The run's options: the preset, then --config, then the flags, each checked before any work.
pl::PipelineOptions pipeline_options(const Arguments& args, const std::string& task,
                                     const std::optional<PipelineConfig>& config,
                                     const std::filesystem::path& out) {
  pl::PipelineOptions o = pl::preset_options(args.text("preset"), task);
  if (config) apply_config(o, *config);
  const auto positive = [&](std::string_view flag) { return positive_count(args, flag); };
  if (const auto s = positive("seeds")) {
    o.seeds.clear();
    for (std::int64_t i = 1; i <= *s; ++i) o.seeds.push_back(static_cast<std::uint64_t>(i));
  }
  if (const auto v = positive("episodes")) o.episodes = *v;
  o.pool_seed = static_cast<std::uint64_t>(args.count("pool-seed"));
  const std::optional<data::DsrlPool> layout = read_dataset(o, args, task);
  if (const auto v = positive("pairs")) o.pairs.pairs = *v;
  if (const auto v = positive("segment")) o.pairs.segment_length = *v;
  check_segment(o, layout, task);
  if (const auto v = positive("members")) o.value.members = *v;
  if (const auto v = positive("value-epochs")) o.value.epochs = *v;
  if (const auto v = positive("policy-epochs")) o.policy.epochs = *v;
  if (const auto v = positive("n")) o.calibration_size = *v;
  if (const auto v = positive("eval-episodes")) {
    if (*v < 2)
      throw BadInput("--eval-episodes: 1 must be at least 2 (the policy bounds need two)");
    o.eval_episodes = *v;
  }
  if (o.calibration_size > o.episodes)
    throw BadInput(cat("--n: ", std::to_string(o.calibration_size), " must not exceed the pool's ",
                       std::to_string(o.episodes),
                       " episodes (labels are drawn without replacement)"));
  if (const auto v = positive("threads")) o.threads = *v;
  if (const auto v = positive("validation-draws")) o.validation_draws = *v;
  if (const auto v = args.optional_count("behavior-cost-episodes")) o.behavior_cost_episodes = *v;
  o.calibration.alpha = args.real("alpha");
  o.calibration.delta = args.real("delta");
  o.certificate_delta = o.calibration.delta;
  o.backend = &learning::backend_named(args.text("backend"));
  o.keep_pool = args.flag("keep-pool");
  o.normalize_observations = !args.flag("raw-observations");
  o.scratch = o.keep_pool ? out
                          : std::filesystem::temp_directory_path() /
                                cat("ltt-pipeline-", std::to_string(::getpid()));
  return o;
}

// The report's files, the seeds' artifacts among them, checked and --out created.
void prepare_pipeline_out(const std::filesystem::path& out, const pl::PipelineOptions& o,
                          const Arguments& typed) {
  std::vector<OutputName> names;
  for (const char* name :
       {"report.json", "report.md", "score_vs_cost.svg", "certification_rate.svg", "methods.svg",
        "cost_histogram.svg", "purity_curves.svg"})
    names.push_back({name});
  for (const std::uint64_t seed : o.seeds) {
    const pl::SeedArtifacts at = pl::seed_artifacts(seed);
    for (const std::string* name : {&at.scores, &at.selection, &at.labels, &at.model})
      names.push_back({*name});
  }
  NamedPaths inputs;
  if (o.dataset) inputs.emplace_back("dataset", *o.dataset);
  if (typed.has("config")) inputs.emplace_back("config", typed.text("config"));
  prepare_out(out, names, inputs);
}

// Everything the report holds, written at once; then the summary (or report.json) printed.
void write_report(const Invocation& call, const Arguments& args, const std::filesystem::path& out,
                  const pl::PipelineResult& result) {
  const std::string json = pl::report_json(result);
  std::vector<std::pair<std::string, std::string>> files{
      {"report.json", json},
      {"report.md", pl::report_markdown(result)},
      {"score_vs_cost.svg", pl::score_cost_svg(result)},
      {"certification_rate.svg", pl::certification_rate_svg(result)},
      {"methods.svg", pl::methods_svg(result)},
      {"cost_histogram.svg", pl::cost_histogram_svg(result)},
      {"purity_curves.svg", pl::purity_curves_svg(result)}};
  for (const pl::SeedResult& s : result.seeds)
    for (auto& file : seed_files(s)) files.push_back(std::move(file));
  write_files(out, files);
  if (args.flag("json"))
    call.out << json;
  else
    call.out << pl::run_summary(result) << "\nwritten: " << (out / "report.md").string()
             << ", report.json, score_vs_cost.svg, certification_rate.svg, methods.svg, "
                "cost_histogram.svg, purity_curves.svg, seed-S/{scores.npy, selection.npy, "
                "labels.csv, model.ltt}\n";
}

}  // namespace pipeline_subcommand

int run_pipeline(const Invocation& call) {
  using namespace pipeline_subcommand;
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
  if (!args->has("task"))
    throw BadInput("missing required flag --task (or a --config that names it)");
  const std::string& task = args->text("task");
  if (config && !config->task.empty() && (config->task == "corridor") != (task == "corridor"))
    throw BadInput(cat("--task: ", task, " cannot replay --config ", typed->text("config"),
                       ", a report of task ", config->task,
                       " (the corridor study has other options)"));
  if (task == "corridor") return run_corridor(call, *args, out, config);
  (void)pl::task_named(task);  // an unknown name fails here, naming the tasks
  const pl::PipelineOptions o = pipeline_options(*args, task, config, out);
  prepare_pipeline_out(out, o, *typed);
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
  write_report(call, *args, out, result);
  return 0;
}

}  // namespace ltt::cli
