#pragma once
// The flags of the certification stage (`ltt certify`, and `ltt curate` after scoring) and what
// they set, read and checked before any file is read:
//
//   read_label_flags, read_selection_flags   --labels or --draw/--budget/--seed; --gate and the
//                                            walk's options (alpha, delta, grid, ...)
//   read_transition_mask                     --transition-mask, a .npy
//   check_outputs                            what --selection writes (from its name); each
//                                            output against the rule of output_paths.hpp (no
//                                            input, no other output, no device, FIFO or
//                                            link): before any work

#include <cstdint>
#include <filesystem>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <curation/calibrated_selection.hpp>
#include <curation/score_aggregation.hpp>

#include <data/dataset_files.hpp>
#include <data/dsrl.hpp>

#include "arguments.hpp"
#include "bad_input.hpp"
#include "curation_flags.hpp"
#include "dataset_file.hpp"
#include "format.hpp"
#include "gate.hpp"
#include "output_paths.hpp"
#include "selection_format.hpp"

namespace ltt::cli::certification {

namespace cur = ltt::curation;

inline constexpr Flag certify_flags[] = {
    {"pool", FlagKind::text, "CSV id,score[,return,cost,length], or .npy of scores"},
    {"dataset", FlagKind::paths,
     "instead of --pool: a DSRL dataset (.hdf5/.h5, or a directory of .npy), id = episode "
     "index; or several (files, a directory of them, a glob), id = FILE:EPISODE"},
    {"scores", FlagKind::text,
     "--dataset: one score per episode, CSV id,score or .npy (or give --state-values)"},
    {"labels", FlagKind::text, "calibration labels: CSV with header id,unsafe (0 or 1)"},
    {"draw", FlagKind::count,
     "instead of --labels: draw this many trajectories, unsafe = cost > --budget"},
    {"budget", FlagKind::text, "cost budget for --draw (a trajectory at the budget is within it)"},
    {"seed", FlagKind::count, "seed of --draw and of --gate resample", "0"},
    {"alpha", FlagKind::open_unit, "target unsafe fraction", "0.25"},
    {"delta", FlagKind::open_unit, "risk level", "0.1"},
    {"grid", FlagKind::text, "score quantiles of the thresholds, decreasing", paper_grid_text},
    {"min-selection", FlagKind::count, "fewest trajectories the uncertified fallback keeps", "50"},
    {"drop-unsafe-calibration", FlagKind::boolean,
     "leave calibration trajectories labeled unsafe out of the selection"},
    {"state-values", FlagKind::text,
     "per-state values, scores are their aggregate: CSV id,value; with --dataset one per row "
     "(.npy, or CSV value)"},
    aggregation_flag("mean, minimum or percentile of --state-values"),
    percentile_flag,
    {"gate", FlagKind::text, "reward-aware step behind the certificate: none, top-half or resample",
     "none"},
    {"kappa", FlagKind::text, "--gate resample: clip of the standardized return", "2"},
    {"override-gate", FlagKind::boolean, "run --gate on an uncertified selection too"},
    {"certificate", FlagKind::text, "write the certificate (the JSON object of --json) here"},
    {"selection", FlagKind::text,
     "write the selection here: one id per line, or a .npy mask by pool row; with --dataset a "
     "DSRL dataset of the selected episodes, or a .npy of their indices"},
    {"transition-mask", FlagKind::text,
     "--dataset: write a .npy bool mask, one per row, true in the selected episodes"},
    {"json", FlagKind::boolean, "print one JSON object instead of the summary"},
    {"sequential", FlagKind::boolean,
     "the sequential walk: --labels in the order of `ltt draw --sequential --seed S`, one at a "
     "time until --stop fires (docs/sequential.md)"},
    {"stop", FlagKind::text,
     "--sequential: stopping rule, cap, target:J, stall:L, early-refusal or auto", "auto"},
    {"n", FlagKind::count, "--sequential: the label cap", "200"},
    label_order_flag,
    refusal_rate_flag,
    {"record", FlagKind::text,
     "--sequential: write every label (--labels' and typed ones) here as id,unsafe, to pass "
     "as --labels next time"},
    {"interactive", FlagKind::boolean,
     "--sequential: ask for each next label on standard error, read 0 or 1 per line from "
     "standard input (after --labels, if given)"},
};

// What the flags ask for: the files read and written, and the settings of the stage.
struct Inputs {
  std::optional<std::string> pool_file;
  bool pool_npy = false;
  std::optional<std::string> dataset_file;  // as named: one path, or the names given, joined
  std::vector<std::filesystem::path>
      dataset_files;  // every file of the dataset (dataset_files.hpp)
  data::DsrlStore dataset_store = data::DsrlStore::hdf5;  // of the first file
  std::optional<std::string> scores_file;
  std::optional<std::string> state_values;
  cur::Aggregator aggregator;
  std::string aggregation_name;
  std::optional<std::string> labels_file;
  std::optional<std::int64_t> draw;
  std::optional<double> budget;
  std::int64_t seed = 0;
  Gate gate = Gate::none;
  double kappa = 2.0;
  bool override_gate = false;
  std::optional<std::string> certificate_file, selection_file, transition_mask_file;
  std::optional<std::string> record_file;  // --sequential: every label, --labels' and typed
  SelectionFormat selection_format = SelectionFormat::ids;
};

// The files --dataset names (files, directories, glob patterns), expanded into `in`.
inline void read_dataset_names(const DatasetNames& names, Inputs& in) {
  in.dataset_files = names.files;
  in.dataset_file = names.shown;
  in.dataset_store = data::store_for(names.files.front());
}
inline void read_dataset_names(const std::vector<std::string>& named, Inputs& in) {
  read_dataset_names(dataset_names(named), in);
}

// --labels, or --draw with --budget; --seed (of the draw and of --gate resample).
inline void read_label_flags(const Arguments& args, Inputs& in) {
  if (args.has("labels") == args.has("draw"))
    throw BadInput(args.has("labels") ? "--labels and --draw exclude each other"
                                      : "missing --labels (or --draw with --budget)");
  if (args.has("labels")) in.labels_file = args.text("labels");
  if (args.has("draw")) {
    in.draw = args.count("draw");
    if (*in.draw < 1) throw BadInput("--draw: 0 must be at least 1");
    if (!args.has("budget")) throw BadInput("--draw needs --budget (unsafe means cost > budget)");
    in.budget = finite_real("budget", args.text("budget"));
  } else if (args.has("budget")) {
    throw BadInput("--budget needs --draw (with --labels the labels say what is unsafe)");
  }
  in.seed = args.count("seed");
}

// --gate, --kappa, --override-gate, and the walk's options.
inline cur::CalibratedSelectionOptions read_selection_flags(const Arguments& args, Inputs& in) {
  in.gate = read_gate(args.text("gate"));
  if (args.given("kappa") && in.gate != Gate::resample)
    throw BadInput("--kappa needs --gate resample");
  in.kappa = real_in_range("kappa", args.text("kappa"), 0.0, std::numeric_limits<double>::max(),
                           "finite and >= 0");
  in.override_gate = args.flag("override-gate");
  if (in.override_gate && in.gate == Gate::none)
    throw BadInput("--override-gate needs --gate top-half or --gate resample");

  cur::CalibratedSelectionOptions options;
  options.alpha = args.real("alpha");
  options.delta = args.real("delta");
  options.quantiles = grid_quantiles(args.text("grid"));
  options.minimum_selection = args.count("min-selection");
  options.drop_unsafe_calibration = args.flag("drop-unsafe-calibration");
  return options;
}

// --transition-mask (the caller has checked that a dataset is read): written as a .npy.
inline void read_transition_mask(const Arguments& args, Inputs& in) {
  in.transition_mask_file = args.text("transition-mask");
  if (!in.transition_mask_file->ends_with(".npy"))
    throw BadInput(cat("--transition-mask: ", in_quotes(*in.transition_mask_file),
                       " is written as a .npy file: name it *.npy"));
}

// What --selection writes, from its name and the dataset's store (in.selection_file set).
inline void choose_selection_format(Inputs& in) {
  in.selection_format = selection_format(*in.selection_file, in.dataset_file, in.dataset_store,
                                         in.gate, in.dataset_files.size());
}

// What --selection writes: a file, a directory of .npy files (a dataset in that store), or for
// several files a directory of datasets.
inline Destination selection_destination(const Inputs& in) {
  if (in.selection_format != SelectionFormat::dsrl_dataset) return Destination::file;
  if (in.dataset_files.size() > 1) return Destination::datasets;
  return in.dataset_store == data::DsrlStore::npy_directory ? Destination::directory
                                                            : Destination::file;
}

// The files `ltt certify` reads, by flag.
inline NamedPaths input_files(const Inputs& in) {
  NamedPaths inputs;
  const std::pair<std::string_view, const std::optional<std::string>*> named[] = {
      {"pool", &in.pool_file},
      {"scores", &in.scores_file},
      {"state-values", &in.state_values},
      {"labels", &in.labels_file}};
  for (const auto& [flag, file] : named)
    if (*file) inputs.emplace_back(flag, **file);
  for (const std::filesystem::path& file : in.dataset_files) inputs.emplace_back("dataset", file);
  return inputs;
}

// The outputs set in `in`, each checked by output_paths.hpp's rule against `inputs`, against
// `outputs` (files the run writes elsewhere) and against each other; `created_first` is a
// directory the run creates before writing them (check_output).
inline void check_outputs(Inputs& in, const NamedPaths& inputs, NamedPaths outputs = {},
                          const std::filesystem::path& created_first = {}) {
  if (in.selection_file) choose_selection_format(in);
  const std::pair<std::string_view, const std::optional<std::string>*> named[] = {
      {"selection", &in.selection_file},
      {"transition-mask", &in.transition_mask_file},
      {"certificate", &in.certificate_file},
      {"record", &in.record_file}};
  for (const auto& [flag, file] : named) {
    if (!*file) continue;
    check_output(flag, **file, flag == "selection" ? selection_destination(in) : Destination::file,
                 inputs, outputs, created_first);
    outputs.emplace_back(flag, **file);
  }
}

}  // namespace ltt::cli::certification
