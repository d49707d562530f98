// ltt curate: the paper's filter on a user's own DSRL file in one command: `ltt score` (the
// safety value and one score per episode), then `ltt certify --dataset` on those scores, then
// the certified selection written back in the file's layout. Both stages are the ones the two
// subcommands run (safety_scoring.hpp, certification.hpp); every refusal comes before training,
// and --out DIR is written whole or not at all once everything is computed.

#include <filesystem>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <data/dsrl.hpp>

#include "certification.hpp"
#include "dataset_file.hpp"
#include "json_writer.hpp"
#include "output_directory.hpp"
#include "safety_scoring.hpp"
#include "subcommand.hpp"

namespace ltt::cli {

namespace {

using namespace certification;

// Certify's flags that curate takes as they are (its --seed is the scoring one: one seed for
// the pairs, the ensemble, the calibration draw and --gate resample).
constexpr std::string_view certify_flags_taken[] = {
    "labels", "draw",  "budget", "alpha",         "delta",     "grid",           "min-selection",
    "drop-unsafe-calibration",   "gate", "kappa", "override-gate", "selection", "transition-mask"};

const Command& curate_command() {
  static const std::vector<Flag> flags = [] {
    std::vector<Flag> f = scoring_flags();
    for (const std::string_view name : certify_flags_taken)
      for (const Flag& flag : certify_flags)
        if (flag.name == name) f.push_back(flag);
    f.push_back(
        {"json", FlagKind::boolean, "print certificate.json's object instead of the summary"});
    return f;
  }();
  static const Command command{
      "curate",
      "The paper's filter on a DSRL dataset: learns the safety value and scores every episode\n"
      "(as `ltt score`), then certifies a score threshold with the calibration labels (as\n"
      "`ltt certify --dataset`) and writes the selected episodes in the file's layout. Labels\n"
      "come from --labels (ids from `ltt draw`) or with --draw from the file's costs against\n"
      "--budget. Writes into --out DIR the score outputs, certificate.json and the selection\n"
      "(selection.hdf5, or selection/ for a .npy directory, unless --selection names a file).",
      flags};
  return command;
}

}  // namespace

int run_curate(const Invocation& call) {
  const auto args = parse_or_help(curate_command(), call);
  if (!args) return 0;
  namespace fs = std::filesystem;

  // Flags of both stages, and every output, before any file is read.
  const ScoreSettings s = read_score_settings(*args);
  Inputs in;
  in.dataset_file = s.dataset.string();
  in.dataset_store = data::store_for(s.dataset);
  read_label_flags(*args, in);
  const cur::CalibratedSelectionOptions options = read_selection_flags(*args, in);
  in.scores_file = (s.out / "scores.npy").string();
  in.certificate_file = (s.out / "certificate.json").string();

  std::vector<OutputName> names = scoring_output_names();
  names.push_back({"certificate.json"});
  // Outputs placed by the user, outside DIR's own files, are checked and written as certify's.
  Inputs placed = in;
  placed.certificate_file.reset();
  std::optional<std::string> selection_in_dir;
  if (args->has("selection")) {
    in.selection_file = placed.selection_file = args->text("selection");
  } else {
    const bool hdf5 = in.dataset_store == data::DsrlStore::hdf5;
    selection_in_dir = hdf5 ? "selection.hdf5" : "selection";
    in.selection_file = (s.out / *selection_in_dir).string();
    names.push_back({*selection_in_dir, hdf5 ? Destination::file : Destination::directory});
    choose_selection_format(in);
  }
  if (args->has("transition-mask")) {
    in.transition_mask_file = placed.transition_mask_file = args->text("transition-mask");
    if (!in.transition_mask_file->ends_with(".npy"))
      throw BadInput(cat("--transition-mask: ", in_quotes(*in.transition_mask_file),
                         " is written as a .npy file: name it *.npy"));
  }
  NamedPaths inputs = scoring_input_files(s);
  if (in.labels_file) inputs.emplace_back("labels", *in.labels_file);
  check_output_directory(s.out, names, inputs);
  check_outputs(placed, inputs, output_directory_files(s.out, names));
  if (placed.selection_file) in.selection_format = placed.selection_format;

  // Inputs, and the calibration labels (from the file's costs, not the scores): before training.
  const ScoringInputs scoring_in = read_scoring_inputs(s);
  const data::DsrlPool& dataset = scoring_in.dataset;
  PoolFile pool = dataset_pool(dataset, in.dataset_file.value());
  const cur::Calibration calibration = read_calibration(pool, in);

  const ScoringResult scored = compute_scores(s, scoring_in);
  pool.pool.score = scored.scores;
  const Certification result = certify_pool(pool, calibration, in, options);
  const cur::Certificate& c = result.result.certificate;

  std::ostringstream score_json, certificate_json;
  {
    JsonWriter json(score_json);
    json.begin_object();
    write_scoring_fields(json, s, scoring_in, scored);
    json.end_object();
    score_json << '\n';
  }
  {
    JsonWriter json(certificate_json);
    write_json(json, c, result.triple, result.gate, in, options, result.written_size, &dataset,
               [&](JsonWriter& j) {
                 j.key("scoring").begin_object();
                 write_scoring_fields(j, s, scoring_in, scored);
                 j.end_object();
               });
    certificate_json << '\n';
  }

  std::vector<OutputFile> files = scoring_files(scored, score_json.str());
  files.push_back({"certificate.json", [text = certificate_json.str()](const fs::path& p) {
                     data::write_stream_atomically(p, [&](std::ostream& o) { o << text; });
                   }});
  if (selection_in_dir)
    files.push_back({*selection_in_dir, [&](const fs::path& p) {
                       write_selection(p.string(), in, pool, &dataset, result.gate);
                     }});
  std::error_code ec;
  const bool out_existed = fs::exists(s.out, ec);
  write_output_directory(s.out, files);
  try {
    write_outputs(placed, pool, &dataset, result.gate, {});
  } catch (...) {
    if (!out_existed) fs::remove_all(s.out, ec);
    throw;
  }

  if (args->flag("json")) {
    call.out << certificate_json.str();
  } else {
    write_scoring_summary(call.out, s, scoring_in, scored);
    call.out << "\n";
    write_summary(call.out, pool, c, result.triple, result.gate, in, options, result.written_size,
                  &dataset);
    call.out << "wrote the score outputs to " << s.out.string()
             << ": state_values.npy, scores.npy, model.ltt, score.json\n";
  }
  return 0;
}

}  // namespace ltt::cli
