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
#include <system_error>
#include <utility>
#include <vector>

#include <data/dsrl.hpp>

#include <certification/certificate_summary.hpp>
#include <certification/certification.hpp>
#include <certification/dataset_file.hpp>
#include <certification/format.hpp>
#include <certification/output_directory.hpp>
#include <certification/several_budgets_certification.hpp>

#include "certification_flags.hpp"
#include "safety_scoring.hpp"
#include "subcommand.hpp"

namespace ltt::cli {

namespace curate_subcommand {

using namespace certification;

// Certify's flags that curate takes as they are (its --seed is the scoring one: one seed for
// the pairs, the ensemble, the calibration draw and --gate resample).
constexpr std::string_view certify_flags_taken[] = {
    "labels",         "draw",  "budget",        "alpha",
    "delta",          "grid",  "min-selection", "drop-unsafe-calibration",
    "gate",           "kappa", "override-gate", "selection",
    "transition-mask", "budgets", "alphas", "procedure"};

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
      "(selection.hdf5, or selection/ for a .npy directory, unless --selection names a file).\n"
      "--budgets b1,b2,...: one threshold certified for every budget from the same labels\n"
      "(id,cost or id,band, or --draw against the file's costs), as `ltt certify --budgets`.",
      flags};
  return command;
}

// Parse and validate: the flags of both stages, and every output, before any file is read.
struct Request {
  ScoreSettings s;
  Inputs in;      // the certification stage, every output included
  Inputs placed;  // the outputs placed by the user, outside DIR's own files: written as certify's
  cur::CalibratedSelectionOptions options;
  std::optional<BudgetsRequest> budgets;        // --budgets: every budget from the same labels
  std::optional<std::string> selection_in_dir;  // the selection's name in DIR, without --selection
  std::vector<OutputName> names;                // DIR's files
  bool save_model = false;  // --model names a new file: the trained ensemble is saved there too
};

// --selection, or the selection in DIR; --transition-mask.
void read_curate_outputs(const Arguments& args, Request& r) {
  Inputs& in = r.in;
  r.placed = in;
  r.placed.certificate_file.reset();
  if (args.has("selection")) {
    in.selection_file = r.placed.selection_file = args.text("selection");
  } else {
    // One file: a selection in its store. Several: a directory of each file's selection.
    const bool hdf5 = in.dataset_store == data::DsrlStore::hdf5 && in.dataset_files.size() == 1;
    r.selection_in_dir = hdf5 ? "selection.hdf5" : "selection";
    in.selection_file = (r.s.out / *r.selection_in_dir).string();
    choose_selection_format(in);
    r.names.push_back({*r.selection_in_dir, selection_destination(in)});
  }
  if (args.has("transition-mask")) {
    read_transition_mask(args, in);
    r.placed.transition_mask_file = in.transition_mask_file;
  }
}

Request read_request(const Arguments& args) {
  Request r;
  r.s = read_score_settings(args);
  Inputs& in = r.in;
  certification::read_dataset_names(r.s.dataset, in);
  if (args.has("budgets")) {
    r.budgets = read_budgets_labels_and_options(args, in);
    if (r.budgets->options.procedure != ltt::BudgetProcedure::one_threshold)
      throw BadInput(
          "--procedure per-budget: ltt curate writes one selection; certify each budget's own "
          "with `ltt certify --budgets --procedure per-budget` on the scores it writes");
    for (const std::string_view flag : {"gate", "kappa", "override-gate"})
      if (args.given(flag)) throw BadInput(cat("--", flag, " does not apply to --budgets"));
    // score.json's purity curve against the tightest budget, with its alpha.
    if (in.draw)
      r.s.purity = PurityRequest{r.budgets->budgets.front(), r.budgets->options.alphas.front(),
                                 r.budgets->options.quantiles};
  } else {
    refuse_budget_flags_without_budgets(args);
    read_label_flags(args, in);
    r.options = read_selection_flags(args, in);
  }
  // --draw's budget labels from the file's costs: score.json's purity uses the same (and the
  // walk's alpha and grid).
  if (in.budget) r.s.purity = PurityRequest{*in.budget, r.options.alpha, r.options.quantiles};
  in.scores_file = (r.s.out / "scores.npy").string();
  in.certificate_file = (r.s.out / "certificate.json").string();

  r.names = scoring_output_names(r.s);
  r.names.push_back({"certificate.json"});
  read_curate_outputs(args, r);
  NamedPaths inputs = scoring_input_files(r.s);
  if (in.labels_file) inputs.emplace_back("labels", *in.labels_file);
  check_output_directory(r.s.out, r.names, inputs);
  NamedPaths dir_files = output_directory_files(r.s.out, r.names);
  // A new --model gets the same bytes as DIR/model.ltt, as with `ltt score --model NEW`.
  r.save_model = saves_model(r.s);
  if (r.save_model) {
    check_output("model", *r.s.model, Destination::file, inputs, dir_files, r.s.out);
    dir_files.emplace_back("model", *r.s.model);
  }
  check_outputs(r.placed, inputs, dir_files, r.s.out);
  if (r.placed.selection_file) in.selection_format = r.placed.selection_format;
  return r;
}

// The certificate.json text: the certificate with the scoring stage's fields.
std::string certificate_text(const Request& r, const ScoringInputs& scoring_in,
                             const ScoringResult& scored, const Certification& result,
                             const data::DsrlPool& dataset) {
  std::ostringstream text;
  JsonWriter json(text);
  write_json(json, result.result.certificate, result.triple, result.gate, r.in, r.options,
             result.written_size, &dataset, [&](JsonWriter& j) {
               j.key("scoring").begin_object();
               write_scoring_fields(j, r.s, scoring_in, scored);
               j.end_object();
             });
  text << '\n';
  return text.str();
}

// Outputs: DIR whole or not at all, then a new --model and the outputs placed elsewhere (on a
// failure the model is removed again, and DIR too if the run created it).
void write_curate_outputs(const Request& r, std::vector<OutputFile> files, const PoolFile& pool,
                          const data::DsrlPool& dataset, const ScoringResult& scored,
                          const GateResult& gate) {
  namespace fs = std::filesystem;
  if (r.selection_in_dir)
    files.push_back({*r.selection_in_dir, [&](const fs::path& p) {
                       write_selection(p.string(), r.in, pool, &dataset, gate);
                     }});
  std::error_code ec;
  const bool out_existed = fs::exists(r.s.out, ec);
  write_output_directory(r.s.out, files);
  bool model_saved = false;
  try {
    if (r.save_model) {
      learning::save_models(*r.s.model, scored.ensemble.members);
      model_saved = true;
    }
    write_outputs(r.placed, pool, &dataset, gate, {});
  } catch (...) {
    if (model_saved) fs::remove(*r.s.model, ec);
    if (!out_existed) fs::remove_all(r.s.out, ec);
    throw;
  }
}

// --budgets: the labels banded against the budgets before training, then the scores, one
// threshold for every budget, and the outputs as without --budgets.
int run_budgets(const Invocation& call, const Arguments& args, const Request& r,
                const ScoringInputs& scoring_in, PoolFile& pool) {
  const ScoreSettings& s = r.s;
  const data::DsrlPool& dataset = scoring_in.dataset;
  const BudgetsRequest& request = *r.budgets;
  const cur::BandedCalibration banded =
      r.in.labels_file ? read_banded_labels(*r.in.labels_file, pool, request.budgets)
                       : draw_banded(pool, r.in, request.budgets);
  const ScoringResult scored = compute_scores(s, scoring_in);
  pool.pool.score = scored.scores;
  const BudgetsCertification b = certify_budgets(pool, banded, request);

  std::ostringstream text;
  {
    JsonWriter json(text);
    write_budgets_json(json, b, request, r.in, &dataset,
                       static_cast<std::int64_t>(b.written.size()), [&](JsonWriter& j) {
                         j.key("scoring").begin_object();
                         write_scoring_fields(j, s, scoring_in, scored);
                         j.end_object();
                       });
    text << '\n';
  }
  const std::string certificate_json = text.str();
  std::vector<OutputFile> files = scoring_files(scored, scoring_json_text(s, scoring_in, scored));
  files.push_back({"certificate.json", [&certificate_json](const std::filesystem::path& p) {
                     data::write_stream_atomically(p,
                                                   [&](std::ostream& o) { o << certificate_json; });
                   }});
  GateResult written;
  written.written = b.written;
  write_curate_outputs(r, std::move(files), pool, dataset, scored, written);

  if (args.flag("json")) {
    call.out << certificate_json;
  } else {
    write_scoring_summary(call.out, s, scoring_in, scored);
    call.out << "\n";
    write_budgets_summary(call.out, b, request, r.in);
    call.out << "wrote the score outputs to " << s.out.string() << ": "
             << joined_names(scoring_files_written(s)) << "\n";
    if (r.save_model) call.out << "saved the model to " << s.model->string() << "\n";
  }
  return 0;
}

}  // namespace curate_subcommand

int run_curate(const Invocation& call) {
  using namespace curate_subcommand;
  const auto args = parse_or_help(curate_command(), call);
  if (!args) return 0;
  const Request r = read_request(*args);
  const ScoreSettings& s = r.s;

  // Inputs, and the calibration labels (from the file's costs, not the scores): before training.
  const ScoringInputs scoring_in = read_scoring_inputs(s);
  const data::DsrlPool& dataset = scoring_in.dataset;
  PoolFile pool = dataset_pool(dataset, r.in.dataset_file.value());
  if (r.budgets) return run_budgets(call, *args, r, scoring_in, pool);
  const cur::Calibration calibration = read_calibration(pool, r.in);

  // Compute: the scores, then the certification on them.
  const ScoringResult scored = compute_scores(s, scoring_in);
  pool.pool.score = scored.scores;
  const Certification result = certify_pool(pool, calibration, r.in, r.options);

  // Outputs.
  const std::string certificate_json = certificate_text(r, scoring_in, scored, result, dataset);
  std::vector<OutputFile> files = scoring_files(scored, scoring_json_text(s, scoring_in, scored));
  files.push_back({"certificate.json", [&certificate_json](const std::filesystem::path& p) {
                     data::write_stream_atomically(p,
                                                   [&](std::ostream& o) { o << certificate_json; });
                   }});
  write_curate_outputs(r, std::move(files), pool, dataset, scored, result.gate);

  // Report.
  if (args->flag("json")) {
    call.out << certificate_json;
  } else {
    write_scoring_summary(call.out, s, scoring_in, scored);
    call.out << "\n";
    write_summary(call.out, pool, result.result.certificate, result.triple, result.gate, r.in,
                  r.options, result.written_size, &dataset);
    call.out << "wrote the score outputs to " << s.out.string() << ": "
             << joined_names(scoring_files_written(s)) << "\n";
    if (r.save_model) call.out << "saved the model to " << s.model->string() << "\n";
  }
  return 0;
}

}  // namespace ltt::cli
