#pragma once
// The scoring stage of `ltt score` and `ltt curate` (docs/cli.md, "ltt score"): the safety value
// learned on a user's DSRL file (paper, section 4.1) and the per-episode scores it gives
// (section 4.2), as named steps:
//
//   read_score_settings     flags -> settings; every default from the library's option structs
//                           (scoring_settings.hpp)
//   read_scoring_inputs     the file's episodes and per-row costs, the pairs (synthesized by the
//                           paper's sampler or read from --pairs-file, pairs_file.hpp), the
//                           --model to reuse;
//                           every refusal (exit 2) happens here, before any training
//   compute_scores          observations (float32, nothing else of the file) -> the trained or
//                           loaded ensemble -> V-bar on every row, a block of rows at a time
//                           within --memory (streamed_scoring.hpp) -> one score per episode ->
//                           the scores against the file's costs (score_diagnosis)
//   scoring_files           state_values.npy (unless --no-state-values), scores.npy, model.ltt,
//                           score.json
//
// state_values.npy has one value per row of the file, the rows of a dropped tail (after the last
// end flag) included: the network values them as any other row, they belong to no episode and
// so to no score. `ltt certify --dataset F --state-values DIR/state_values.npy` reads the file
// as it is and gives the same scores.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <curation/preference_pairs.hpp>
#include <curation/rank_correlation.hpp>
#include <curation/score_aggregation.hpp>
#include <curation/trajectory_pool.hpp>

#include <data/array.hpp>
#include <data/atomic_output.hpp>
#include <data/dsrl.hpp>
#include <data/npy.hpp>
#include <learning/backend.hpp>
#include <learning/model_file.hpp>
#include <learning/safety_value.hpp>
#include <learning/value_training.hpp>
#include <pipeline/score_quality.hpp>

#include <certification/bad_input.hpp>
#include <certification/dataset_file.hpp>
#include <certification/format.hpp>
#include <certification/output_directory.hpp>

#include "pairs_file.hpp"
#include "scoring_settings.hpp"
#include "streamed_scoring.hpp"

namespace ltt::cli {

// What the sampler drew, or where the pairs came from.
struct PairSource {
  learning::SegmentPairs pairs;
  std::optional<curation::PreferencePairs> drawn;  // synthesized: the sampler's account
  std::int64_t eligible = 0;                       // episodes of at least H rows
};

struct ScoringInputs {
  data::DsrlPool dataset;
  std::vector<std::int64_t> offsets;             // episode i owns rows [offsets[i], offsets[i + 1])
  std::optional<PairSource> pairs;               // absent when a model is reused
  std::optional<learning::ValueEnsemble> model;  // the reused model
};

inline ScoringInputs read_scoring_inputs(const ScoreSettings& s) {
  ScoringInputs in;
  in.dataset = data::load_dsrl_pool(s.dataset.files);
  in.offsets = data::episode_offsets(in.dataset);
  const std::string& name = in.dataset.file;
  if (s.reuse_model) {
    std::vector<learning::MlpWeights> members = learning::load_models(*s.model);
    for (std::size_t k = 0; k < members.size(); ++k) {
      const learning::MlpShape& shape = members[k].shape;
      if (shape.input() != in.dataset.observation_dim)
        throw BadInput(cat("--model: ", in_quotes(s.model->string()), " takes observations of ",
                           std::to_string(shape.input()), " values but ", name, " has ",
                           std::to_string(in.dataset.observation_dim)));
      if (shape.output_width() != 1 || shape.output != learning::OutputActivation::identity)
        throw BadInput(cat("--model: ", in_quotes(s.model->string()), " network ",
                           std::to_string(k), " is not a value network (one identity output)"));
    }
    check_scoring_memory(s.memory, in.dataset.observation_dim,
                         static_cast<std::int64_t>(members.size()));
    in.model = learning::ValueEnsemble{std::move(members)};
    return in;
  }
  check_scoring_memory(s.memory, in.dataset.observation_dim, s.value.value.members);
  const std::int64_t H = s.pairs.segment_length;
  PairSource source;
  std::int64_t longest = 0;
  for (const data::Episode& e : in.dataset.episodes) {
    source.eligible += e.length >= H;
    longest = std::max(longest, e.length);
  }
  if (s.pairs_file) {
    source.pairs = read_pairs_file(*s.pairs_file, in.dataset, H);
  } else {
    // The sampler's parents are episodes of at least H rows, two at the least (a bottom and a
    // top quartile); say so in the user's terms rather than the library's.
    if (source.eligible == 0)
      throw BadInput(cat("--segment: ", std::to_string(H), " is longer than every episode of ",
                         name, " (the longest has ", std::to_string(longest), " rows)"));
    if (source.eligible < 2)
      throw BadInput(cat(name, ": only ", std::to_string(source.eligible),
                         " episode has at least --segment ", std::to_string(H),
                         " rows; the pair sampler needs two (a safer and a costlier parent)"));
    // Drawn on the episodes' rows (each file's dropped tail left out), then numbered as the
    // dataset's rows, where the observations are.
    const std::vector<double> costs =
        data::episode_rows(in.dataset, data::read_dsrl_costs(in.dataset));
    curation::PreferencePairs drawn;
    source.pairs = learning::synthesized_pairs(costs, in.offsets, s.pairs, &drawn);
    data::to_pool_rows(in.dataset, source.pairs.preferred);
    data::to_pool_rows(in.dataset, source.pairs.rejected);
    const auto found = static_cast<std::int64_t>(drawn.pairs.size());
    if (found < s.pairs.pairs)
      throw BadInput(cat(name, ": the sampler found ", std::to_string(found), " of --pairs ",
                         std::to_string(s.pairs.pairs), " pairs in ",
                         std::to_string(drawn.attempts), " draws (",
                         std::to_string(drawn.ties_skipped), " tied segment costs skipped; ",
                         std::to_string(source.eligible),
                         " episodes of at least H rows): too few usable episodes for the pairs"));
    source.drawn = std::move(drawn);
  }
  in.pairs = std::move(source);
  return in;
}

// The scores against the file's own costs (oracle: every episode's cost and return read; the
// pipeline's score-quality diagnostics on a user's file, docs/pipeline.md): Spearman's rho of the
// scores with episodic cost and return, of cost with return, and with a budget (`ltt score
// --budget`, `ltt curate --draw --budget`) the scores' purity curve on the grid at alpha, cut as
// the certificate's walk cuts (pipeline::purity_curve).
struct ScorePurity {
  double budget = 0, alpha = 0;
  std::int64_t unsafe_episodes = 0;  // episodic cost > budget
  pipeline::PurityCurve curve;
};

struct ScoreDiagnosis {
  double spearman_score_cost = 0, spearman_score_return = 0, spearman_cost_return = 0;
  std::optional<ScorePurity> purity;  // with a budget
};

template <class Visit>
void fields(const ScorePurity& p, Visit&& visit) {
  visit("budget", p.budget);
  visit("alpha", p.alpha);
  visit("unsafe_episodes", p.unsafe_episodes);
  fields(p.curve, visit);
}

// score.json's keys (and curate's "scoring" object's).
template <class Visit>
void fields(const ScoreDiagnosis& d, Visit&& visit) {
  visit("spearman_score_cost", d.spearman_score_cost);
  visit("spearman_score_return", d.spearman_score_return);
  visit("spearman_cost_return", d.spearman_cost_return);
  visit("score_quality", d.purity);
}

inline ScoreDiagnosis score_diagnosis(const data::DsrlPool& dataset, std::span<const double> scores,
                                      const std::optional<PurityRequest>& request) {
  std::vector<double> cost, episodic_return;
  for (const data::Episode& e : dataset.episodes) {
    cost.push_back(e.episodic_cost);
    episodic_return.push_back(e.episodic_return);
  }
  ScoreDiagnosis d;
  d.spearman_score_cost = curation::spearman(scores, cost);
  d.spearman_score_return = curation::spearman(scores, episodic_return);
  d.spearman_cost_return = curation::spearman(cost, episodic_return);
  if (request) {
    const std::vector<std::uint8_t> unsafe = curation::unsafe_bits(cost, request->budget);
    ScorePurity p;
    p.budget = request->budget;
    p.alpha = request->alpha;
    p.unsafe_episodes = std::count(unsafe.begin(), unsafe.end(), std::uint8_t{1});
    p.curve = pipeline::purity_curve(scores, unsafe, request->alpha, request->quantiles);
    d.purity = std::move(p);
  }
  return d;
}

struct ScoringResult {
  std::optional<learning::SafetyValue> trained;  // absent when a model was reused
  learning::ValueEnsemble ensemble;
  std::unique_ptr<StagedFile> state_values;  // V-bar as float32 per row; absent if not asked for
  std::vector<double> scores;                // one per episode
  ScoreDiagnosis diagnosis;                  // the scores against the file's costs
  std::int64_t block_rows = 0, blocks = 0, bytes_per_row = 0;  // how the rows were streamed
  double train_seconds = 0, score_seconds = 0, read_seconds = 0;
};

inline ScoringResult compute_scores(const ScoreSettings& s, const ScoringInputs& in) {
  using clock = std::chrono::steady_clock;
  const auto seconds_since = [](clock::time_point t) {
    return std::chrono::duration<double>(clock::now() - t).count();
  };
  ScoringResult r;
  if (in.model) {
    r.ensemble = *in.model;
  } else {
    // Training reads the segments' rows anywhere in the file, so the table is read whole here
    // (the pairs bound the training, not the file); it is dropped before the scoring streams.
    auto t = clock::now();
    const data::Array observations = data::read_dsrl_float32(in.dataset, "observations");
    r.read_seconds = seconds_since(t);
    t = clock::now();
    r.trained =
        learning::train_safety_value(observations.values<float>(), in.dataset.observation_dim,
                                     in.pairs->pairs, s.value, *s.backend);
    r.ensemble = r.trained->ensemble;
    r.train_seconds = seconds_since(t);
  }
  StreamedScoring streaming{s.out,     s.memory,     s.state_values,        s.threads,
                            s.backend, s.aggregator, s.value.value.progress};
  StreamedScores streamed = stream_scores(streaming, in.dataset, r.ensemble);
  r.state_values = std::move(streamed.state_values);
  r.scores = std::move(streamed.scores);
  r.block_rows = streamed.block_rows;
  r.blocks = streamed.blocks;
  r.bytes_per_row = streamed.bytes_per_row;
  r.read_seconds += streamed.read_seconds;
  r.score_seconds = streamed.score_seconds;
  r.diagnosis = score_diagnosis(in.dataset, r.scores, s.purity);
  return r;
}

inline constexpr std::string_view scoring_file_names[] = {"state_values.npy", "scores.npy",
                                                          "model.ltt", "score.json"};

// The files the scoring stage writes into --out: all of scoring_file_names but state_values.npy
// with --no-state-values.
inline std::vector<std::string_view> scoring_files_written(const ScoreSettings& s) {
  std::vector<std::string_view> names;
  for (const std::string_view name : scoring_file_names)
    if (s.state_values || name != "state_values.npy") names.push_back(name);
  return names;
}

// "a, b, c": file names for the summary's last line.
inline std::string joined_names(std::span<const std::string_view> names) {
  std::string text;
  for (std::size_t i = 0; i < names.size(); ++i) text += cat(i > 0 ? ", " : "", names[i]);
  return text;
}

// The same, for check_output_directory.
// --model names a file that does not exist yet and is not DIR/model.ltt: the trained ensemble
// is saved there too.
inline bool saves_model(const ScoreSettings& s) {
  return s.model && !s.reuse_model && !same_file(*s.model, s.out / "model.ltt");
}

inline std::vector<OutputName> scoring_output_names(const ScoreSettings& s) {
  std::vector<OutputName> names;
  for (const std::string_view name : scoring_files_written(s)) names.push_back({std::string(name)});
  return names;
}

inline double states_per_second(const ScoringInputs& in, const ScoringResult& r) {
  return r.score_seconds > 0 ? static_cast<double>(in.dataset.transitions) / r.score_seconds : 0.0;
}

// "pairs": where the preference pairs came from and, synthesized, how they were drawn.
inline void write_pairs_json(JsonWriter& json, const ScoreSettings& s, const ScoringInputs& in) {
  json.key("pairs");
  if (in.pairs) {
    json.begin_object()
        .field("source", s.pairs_file ? "file" : "synthesized")
        .field("file", s.pairs_file ? std::optional(s.pairs_file->string()) : std::nullopt)
        .field("count", static_cast<std::int64_t>(in.pairs->pairs.preferred.size()))
        .field("segment", s.pairs.segment_length)
        .field("eligible_episodes", in.pairs->eligible);
    if (const auto& d = in.pairs->drawn) {
      json.field("attempts", d->attempts)
          .field("ties_skipped", d->ties_skipped)
          .field("label_errors", d->label_errors)
          .field("quartile_size", d->quartile_size)
          .field("flip_probability", s.pairs.flip_probability)
          .field("boltzmann_temperature", s.pairs.boltzmann_temperature);
    }
    json.end_object();
  } else {
    json.null();
  }
}

// "training": the value ensemble's options and record, or null for a loaded --model.
inline void write_training_json(JsonWriter& json, const ScoreSettings& s, const ScoringResult& r) {
  json.key("training");
  if (const auto& v = r.trained) {
    const learning::ValueTrainingOptions& o = s.value.value;
    json.begin_object()
        .field("members", o.members)
        .field("epochs", o.epochs)
        .field("batch", o.batch_pairs)
        .field("lr", o.adam.learning_rate)
        .field("held_out_fraction", s.value.held_out_fraction)
        .field("normalize_observations", s.value.normalize_observations)
        .field("backend", s.backend->name())
        .field("threads", o.threads);
    JsonFields{json}("hidden", o.hidden);
    json.field("train_pairs", v->train_pairs)
        .field("held_out_pairs", v->held_out_pairs)
        .field("train_accuracy", v->train.accuracy)
        .field("train_loss", v->train.loss)
        .field("held_out_accuracy",
               v->held_out_pairs > 0 ? std::optional(v->held_out.accuracy) : std::nullopt)
        .field("held_out_loss",
               v->held_out_pairs > 0 ? std::optional(v->held_out.loss) : std::nullopt);
    JsonFields put(json);
    put("loss_curve", v->epoch_loss);
    json.key("normalization").begin_object();
    put("mean", v->normalization.mean);
    put("scale", v->normalization.scale);
    json.end_object();
    json.end_object();
  } else {
    json.null();
  }
}

// The fields of score.json (and of curate's "scoring" object).
inline void write_scoring_fields(JsonWriter& json, const ScoreSettings& s, const ScoringInputs& in,
                                 const ScoringResult& r) {
  const data::DsrlPool& ds = in.dataset;
  json.key("dataset")
      .begin_object()
      .field("file", s.dataset.shown)
      .field("store", store_name(ds.store))
      .field("episodes", ds.size())
      .field("transitions", ds.transitions)
      .field("dropped_tail", ds.dropped_tail)
      .field("observation_dim", ds.observation_dim);
  write_dataset_parts_json(json, ds);
  json.end_object();
  json.field("trained", r.trained.has_value());
  json.field("model", s.model ? std::optional(s.model->string()) : std::nullopt);
  json.field("seed", static_cast<std::int64_t>(s.seed));
  const learning::SafetyValueSeeds seeds = learning::safety_value_seeds(s.seed);
  json.key("seeds")
      .begin_object()
      .field("pairs", std::to_string(seeds.pairs))
      .field("value", std::to_string(seeds.value))
      .end_object();
  write_pairs_json(json, s, in);
  write_training_json(json, s, r);
  json.field("aggregation", s.aggregation_name);
  if (s.aggregator.kind == curation::Aggregation::percentile)
    json.field("percentile", s.aggregator.percentile);
  fields(r.diagnosis, JsonFields{json});
  json.key("time")
      .begin_object()
      .field("read_seconds", r.read_seconds)
      .field("train_seconds", r.train_seconds)
      .field("score_seconds", r.score_seconds)
      .field("states_per_second", states_per_second(in, r))
      .end_object();
  json.key("streaming")
      .begin_object()
      .field("memory", s.memory)
      .field("bytes_per_row", r.bytes_per_row)
      .field("block_rows", r.block_rows)
      .field("blocks", r.blocks)
      .end_object();
  json.key("files").begin_array();
  for (const std::string_view f : scoring_files_written(s)) json.value((s.out / f).string());
  json.end_array();
}

// score.json's text: one object of the scoring fields, and a newline.
inline std::string scoring_json_text(const ScoreSettings& s, const ScoringInputs& in,
                                     const ScoringResult& r) {
  std::ostringstream text;
  {
    JsonWriter json(text);
    json.begin_object();
    write_scoring_fields(json, s, in, r);
    json.end_object();
  }
  text << '\n';
  return text.str();
}

// The human summary of the scoring stage.
inline void write_scoring_summary(std::ostream& out, const ScoreSettings& s,
                                  const ScoringInputs& in, const ScoringResult& r) {
  const data::DsrlPool& ds = in.dataset;
  out << "dataset " << s.dataset.shown << ": "
      << (ds.several_files() ? cat(std::to_string(ds.parts.size()), " files, ") : "") << ds.size()
      << " episodes in " << ds.transitions << " rows, observations of " << ds.observation_dim
      << " values" << dropped_tail_text(ds) << "\n";
  if (const auto& v = r.trained) {
    out << "pairs: " << in.pairs->pairs.preferred.size()
        << (s.pairs_file ? cat(" from ", s.pairs_file->string())
                         : std::string(" synthesized from the per-step costs"))
        << ", segments of " << s.pairs.segment_length << " rows; " << v->train_pairs
        << " trained on, " << v->held_out_pairs << " held out\n";
    out << "value: " << s.value.value.members << " members, hidden "
        << scoring_detail::join_widths(s.value.value.hidden) << ", " << s.value.value.epochs
        << " epochs in " << brief(r.train_seconds) << " s; pair accuracy "
        << brief(v->train.accuracy) << " trained on";
    if (v->held_out_pairs > 0) out << ", " << brief(v->held_out.accuracy) << " held out";
    out << "\n";
  } else {
    out << "value: the model " << s.model->string() << " (" << r.ensemble.members.size()
        << " members), no training\n";
  }
  out << "scored " << ds.transitions << " rows in " << brief(r.score_seconds) << " s ("
      << brief(states_per_second(in, r)) << " states/s); scores: the " << s.aggregation_name
      << " of V-bar over each episode\n";
  const ScoreDiagnosis& d = r.diagnosis;
  out << "against the file's costs: Spearman(score, episodic cost) " << brief(d.spearman_score_cost)
      << ", (score, return) " << brief(d.spearman_score_return) << ", (cost, return) "
      << brief(d.spearman_cost_return) << "\n";
  if (const auto& p = d.purity) {
    const pipeline::PurityStep& first = p->curve.steps.front();
    out << "purity at budget " << shortest(p->budget) << " (" << p->unsafe_episodes << " of "
        << ds.size() << " episodes over it): the top selection (q = " << shortest(first.quantile)
        << ", " << first.N << " episodes) is " << brief(first.unsafe_fraction)
        << " unsafe; purity margin " << brief(p->curve.purity_margin) << " at alpha "
        << shortest(p->alpha) << " over " << p->curve.steps.size() << " grid steps\n";
  }
}

// The files of the scoring stage; score.json holds `json_text`.
inline std::vector<OutputFile> scoring_files(const ScoringResult& r, std::string json_text) {
  std::vector<OutputFile> files;
  if (r.state_values)
    files.push_back(
        {"state_values.npy", [&r](const std::filesystem::path& p) { r.state_values->move_to(p); }});
  files.push_back({"scores.npy", [&r](const std::filesystem::path& p) {
                     data::write_npy(p, data::make_array(r.scores));
                   }});
  files.push_back({"model.ltt", [&r](const std::filesystem::path& p) {
                     learning::save_models(p, r.ensemble.members);
                   }});
  files.push_back({"score.json", [text = std::move(json_text)](const std::filesystem::path& p) {
                     data::write_stream_atomically(p, [&](std::ostream& o) { o << text; });
                   }});
  return files;
}

// The inputs of the scoring stage, for check_output_directory: a --model that does not exist
// yet is an output (`ltt score` saves the model there).
inline NamedPaths scoring_input_files(const ScoreSettings& s) {
  NamedPaths inputs;
  for (const std::filesystem::path& file : s.dataset.files) inputs.emplace_back("dataset", file);
  if (s.pairs_file) inputs.emplace_back("pairs-file", *s.pairs_file);
  if (s.model && s.reuse_model) inputs.emplace_back("model", *s.model);
  return inputs;
}

}  // namespace ltt::cli
