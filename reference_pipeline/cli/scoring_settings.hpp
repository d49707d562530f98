#pragma once
// The flags of the scoring stage (`ltt score`, and `ltt curate` before certifying) and the
// settings they give: every default printed from the library's option structs
// (learning::SafetyValueOptions, curation::PreferencePairOptions), every value checked before
// any file is read.

#include <charconv>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <curation/preference_pairs.hpp>
#include <curation/score_aggregation.hpp>

#include <learning/backend.hpp>
#include <learning/safety_value.hpp>
#include <learning/value_training.hpp>

#include <certification/bad_input.hpp>
#include <certification/dataset_file.hpp>
#include <certification/format.hpp>

#include "arguments.hpp"
#include "curation_flags.hpp"
#include "streamed_scoring.hpp"

namespace ltt::cli {

namespace scoring_detail {

inline std::string join_widths(const std::vector<std::int64_t>& widths) {
  std::string text;
  for (std::size_t i = 0; i < widths.size(); ++i)
    text += cat(i > 0 ? "," : "", std::to_string(widths[i]));
  return text;
}

}  // namespace scoring_detail

// The largest network --hidden may ask for: 16 layers of 8192 (a square layer of 8192 is 256 MB
// of float weights, and Adam keeps three times that).
inline constexpr std::int64_t max_hidden_width = 8192;
inline constexpr std::size_t max_hidden_layers = 16;

// The flags of the scoring stage. Defaults are printed from SafetyValueOptions{} and
// curation::PreferencePairOptions{}, never typed here, so the program, the Python module and the
// pipeline start from the same numbers.
inline const std::vector<Flag>& scoring_flags() {
  using scoring_detail::join_widths;
  static const learning::SafetyValueOptions v{};
  static const curation::PreferencePairOptions p{};
  static const std::string pairs = std::to_string(p.pairs),
                           segment = std::to_string(p.segment_length),
                           flip = shortest(p.flip_probability),
                           members = std::to_string(v.value.members),
                           epochs = std::to_string(v.value.epochs),
                           hidden = join_widths(v.value.hidden),
                           batch = std::to_string(v.value.batch_pairs),
                           lr = shortest(v.value.adam.learning_rate),
                           seed = std::to_string(v.value.seed),
                           threads = std::to_string(v.value.threads);
  static const std::vector<Flag> flags = {
      {"dataset",
       FlagKind::paths,
       "the DSRL dataset (.hdf5/.h5, or a directory of .npy); or several (files, a directory "
       "of them, a glob), their episodes one file after another",
       {},
       true},
      {"out",
       FlagKind::text,
       "directory for the outputs, written only after all compute",
       {},
       true},
      {"pairs", FlagKind::count, "preference pairs the sampler draws from the file's costs", pairs,
       false, std::int64_t{1} << 20, "each pair holds 2H states in memory"},
      {"segment", FlagKind::count, "H, rows per segment", segment},
      {"flip-probability", FlagKind::unit, "label-flip noise of the synthesized pairs", flip},
      {"boltzmann-temperature", FlagKind::text,
       "Boltzmann labeler: P(prefer the safer) = logistic(cost gap / T); exact labels when absent"},
      {"pairs-file", FlagKind::text,
       "instead of synthesized pairs: CSV episode_a,start_a,episode_b,start_b,preferred (a or b)"},
      {"members", FlagKind::count, "K, networks in the ensemble", members, false, 64,
       "each member is a network trained on every pair"},
      {"epochs", FlagKind::count, "training epochs", epochs, false, 100000,
       "the time grows linearly with the epochs"},
      {"hidden", FlagKind::text, "hidden widths, comma-separated (at most 16 layers of 8192)",
       hidden},
      {"batch", FlagKind::count, "pairs per minibatch", batch, false, std::int64_t{1} << 20,
       "as many as --pairs can hold"},
      {"lr", FlagKind::text, "Adam learning rate", lr},
      {"seed", FlagKind::count, "one seed: the pairs', the ensemble's and the held-out split's",
       seed},
      {"threads", FlagKind::count, "members trained at once; threads of the scoring", threads,
       false, 256, "one operating-system thread each"},
      {"backend", FlagKind::text, "eigen, or torch when built with LibTorch", "eigen"},
      {"model", FlagKind::text,
       "an existing model file: no training, only scoring; a new path: the model is saved there "
       "too"},
      aggregation_flag("mean, minimum or percentile of V-bar over an episode"),
      percentile_flag,
      {"memory", FlagKind::text,
       "bytes for the rows scored at once (K, M, G, T or KiB, MB, ...: powers of 1024); the "
       "episode table comes on top",
       "1G"},
      {"no-state-values", FlagKind::boolean,
       "do not write state_values.npy (4 bytes per row of the file)"},
      {"quiet", FlagKind::boolean, "no progress lines on stderr"},
      {"progress", FlagKind::boolean, "progress lines on stderr even when it is not a terminal"},
  };
  return flags;
}

// --hidden: "256,256" -> the hidden widths, each in [1, max_hidden_width], at most
// max_hidden_layers of them.
inline std::vector<std::int64_t> hidden_widths(std::string_view text) {
  std::vector<std::int64_t> widths;
  for (;;) {
    const std::size_t comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    std::int64_t w = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), w);
    if (ec != std::errc{} || end != item.data() + item.size() || w < 1)
      throw BadInput(cat("--hidden: ", in_quotes(item),
                         " is not a positive width (a comma-separated list such as 256,256)"));
    // A square layer of width w holds w^2 floats per member, and Adam three times that.
    if (w > max_hidden_width)
      throw BadInput(cat("--hidden: ", std::to_string(w), " exceeds the maximum width ",
                         std::to_string(max_hidden_width), " (a layer holds width^2 weights)"));
    if (widths.size() == max_hidden_layers)
      throw BadInput(
          cat("--hidden: more than ", std::to_string(max_hidden_layers), " hidden layers"));
    widths.push_back(w);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return widths;
}

// The preference score's purity against the file's costs (`ltt score --budget`, `ltt curate
// --draw --budget`): unsafe = episodic cost > budget, on the grid at alpha.
struct PurityRequest {
  double budget = 0;
  double alpha = 0.25;
  std::vector<double> quantiles;
};

struct ScoreSettings {
  DatasetNames dataset;  // --dataset: one file or several
  std::filesystem::path out;
  curation::PreferencePairOptions pairs{};
  learning::SafetyValueOptions value{};
  std::uint64_t seed = 0;
  std::int64_t threads = 1;
  const learning::Backend* backend = nullptr;
  std::optional<std::filesystem::path> pairs_file, model;
  bool reuse_model = false;  // --model names an existing file: score with it, train nothing
  curation::Aggregator aggregator{};
  std::string aggregation_name = "mean";
  std::optional<PurityRequest> purity;  // set by the subcommand: score's --budget, curate's --draw
  std::int64_t memory = default_scoring_memory;  // --memory: the block of rows scored at once
  bool state_values = true;                      // write state_values.npy
};

inline ScoreSettings read_score_settings(const Arguments& args) {
  ScoreSettings s;
  s.dataset = dataset_names(args.texts("dataset"));
  s.out = args.text("out");
  const auto at_least_one = [&](std::string_view flag) {
    const std::int64_t v = args.count(flag);
    if (v < 1) throw BadInput(cat("--", flag, ": 0 must be at least 1"));
    return v;
  };
  s.seed = static_cast<std::uint64_t>(args.count("seed"));
  const learning::SafetyValueSeeds seeds = learning::safety_value_seeds(s.seed);
  s.pairs.pairs = at_least_one("pairs");
  s.pairs.segment_length = at_least_one("segment");
  s.pairs.flip_probability = args.real("flip-probability");
  s.pairs.seed = seeds.pairs;
  if (args.has("boltzmann-temperature")) {
    const double t = finite_real("boltzmann-temperature", args.text("boltzmann-temperature"));
    if (!(t > 0.0)) throw BadInput(cat("--boltzmann-temperature: ", shortest(t), " must be > 0"));
    s.pairs.boltzmann_temperature = t;
  }
  if (args.has("pairs-file")) {
    for (const std::string_view flag : {"pairs", "flip-probability", "boltzmann-temperature"})
      if (args.given(flag))
        throw BadInput(cat("--", flag, " shapes synthesized pairs; --pairs-file gives its own"));
    s.pairs_file = args.text("pairs-file");
  }
  s.value.value.members = at_least_one("members");
  s.value.value.epochs = at_least_one("epochs");
  s.value.value.batch_pairs = at_least_one("batch");
  s.value.value.hidden = hidden_widths(args.text("hidden"));
  const double lr = finite_real("lr", args.text("lr"));
  if (!(lr > 0.0)) throw BadInput(cat("--lr: ", shortest(lr), " must be > 0"));
  s.value.value.adam.learning_rate = lr;
  s.value.value.seed = seeds.value;
  s.threads = at_least_one("threads");
  s.value.value.threads = s.threads;
  if (args.flag("quiet") && args.flag("progress"))
    throw BadInput("--quiet and --progress exclude each other");
  s.value.value.progress = args.flag("quiet")      ? learning::Progress::quiet
                           : args.flag("progress") ? learning::Progress::always
                                                   : learning::Progress::automatic;
  s.backend = &learning::backend_named(args.text("backend"));
  if (args.has("model")) {
    s.model = args.text("model");
    std::error_code ec;
    s.reuse_model = std::filesystem::exists(*s.model, ec);
    if (s.reuse_model && s.pairs_file)
      throw BadInput(cat("--pairs-file: the model ", in_quotes(s.model->string()),
                         " exists, so nothing is trained on the pairs"));
  }
  s.aggregator = read_aggregator(args, s.aggregation_name);
  s.memory = memory_bytes(args.text("memory"));
  s.state_values = !args.flag("no-state-values");
  return s;
}

}  // namespace ltt::cli
