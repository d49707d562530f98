// ltt score: the safety value learned on a user's DSRL file (or loaded with --model) and the
// scores it gives, written into --out DIR (safety_scoring.hpp says what and how).

#include <filesystem>
#include <span>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include <certification/bad_input.hpp>
#include <certification/format.hpp>
#include <certification/output_directory.hpp>

#include "certification_flags.hpp"
#include "curation_flags.hpp"
#include "safety_scoring.hpp"
#include "subcommand.hpp"

namespace ltt::cli {

namespace score_subcommand {

const Command& score_command() {
  static const std::vector<Flag> flags = [] {
    std::vector<Flag> f = scoring_flags();
    f.push_back({"budget", FlagKind::text,
                 "cost budget: with it, score.json gains the scores' purity curve against "
                 "unsafe = episodic cost > budget (a trajectory at the budget is within it)"});
    // --alpha and --grid as `ltt certify` reads them: the purity margin's alpha and the grid.
    for (const std::string_view name : {"alpha", "grid"})
      for (const Flag& flag : certify_flags)
        if (flag.name == name) f.push_back(flag);
    f.push_back({"json", FlagKind::boolean, "print score.json's object instead of the summary"});
    return f;
  }();
  static const Command command{
      "score",
      "Learns the safety value on a DSRL dataset (paper, section 4.1): preference pairs of\n"
      "segments synthesized from the file's per-step costs (or read from --pairs-file), 10% kept\n"
      "aside, a Bradley-Terry ensemble on z-scored observations. Writes into --out DIR:\n"
      "state_values.npy (V-bar, float32 per row), scores.npy (float64 per episode), model.ltt\n"
      "(the ensemble, normalization folded in) and score.json. With an existing --model it only\n"
      "scores. score.json also holds Spearman's rho of the scores with the file's episodic costs\n"
      "and returns, and with --budget their purity on the grid (--grid, --alpha). The rows are\n"
      "scored a block at a time within --memory, so a file of any size scores in bounded memory\n"
      "(docs/scale.md), to the same bytes whatever --memory and --threads. Progress goes to\n"
      "stderr.",
      flags};
  return command;
}

// Outputs: DIR whole or not at all, and a new --model path (the same bytes as DIR/model.ltt),
// removed again if DIR cannot be written.
void write_score_outputs(const ScoreSettings& s, bool save_model, const ScoringResult& r,
                         std::string json_text) {
  if (save_model) learning::save_models(*s.model, r.ensemble.members);
  try {
    write_output_directory(s.out, scoring_files(r, std::move(json_text)));
  } catch (...) {
    std::error_code ec;
    if (save_model) std::filesystem::remove(*s.model, ec);
    throw;
  }
}

// --budget, with --alpha and --grid: the scores' purity against the file's costs.
std::optional<PurityRequest> read_purity_request(const Arguments& args) {
  if (!args.has("budget")) {
    for (const std::string_view flag : {"alpha", "grid"})
      if (args.given(flag))
        throw BadInput(cat("--", flag, " needs --budget (purity counts unsafe = cost > budget)"));
    return std::nullopt;
  }
  return PurityRequest{finite_real("budget", args.text("budget")), args.real("alpha"),
                       grid_quantiles(args.text("grid"))};
}

}  // namespace score_subcommand

int run_score(const Invocation& call) {
  using namespace score_subcommand;
  const auto args = parse_or_help(score_command(), call);
  if (!args) return 0;
  // Parse and validate, and every output, before any file is read.
  ScoreSettings s = read_score_settings(*args);
  s.purity = read_purity_request(*args);
  const std::vector<OutputName> names = scoring_output_names(s);
  const NamedPaths inputs = scoring_input_files(s);
  check_output_directory(s.out, names, inputs);
  const bool save_model = saves_model(s);
  if (save_model)
    check_output("model", *s.model, Destination::file, inputs,
                 output_directory_files(s.out, names));

  const ScoringInputs in = read_scoring_inputs(s);
  const ScoringResult r = compute_scores(s, in);
  const std::string json_text = scoring_json_text(s, in, r);
  write_score_outputs(s, save_model, r, json_text);

  if (args->flag("json")) {
    call.out << json_text;
  } else {
    write_scoring_summary(call.out, s, in, r);
    const std::vector<std::string_view> written = scoring_files_written(s);
    call.out << "wrote " << (s.out / written.front()).string() << ", "
             << joined_names(std::span(written).subspan(1)) << "\n";
  }
  return 0;
}

}  // namespace ltt::cli
