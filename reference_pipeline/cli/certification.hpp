#pragma once
// The certification stage of `ltt certify` and `ltt curate` (paper, section 4.3 and appendix A),
// as steps each subcommand calls in turn:
//
//   read_label_flags, read_selection_flags   --labels or --draw/--budget/--seed; --gate and the
//                                            walk's options (alpha, delta, grid, ...)
//   check_outputs                            what --selection writes (from its name); each
//                                            output against the rule of output_paths.hpp (no
//                                            input, no other output, no device, FIFO or
//                                            link): before any work
//   read_calibration                         the labels, or the draw labeled by cost > budget
//   certify_pool                             calibrated selection -> certificate triple -> gate
//   write_json, write_summary                the certificate as `ltt certify` prints it
//   write_outputs                            selection, transition mask, certificate: each whole
//                                            or not at all, those created removed on a failure

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <iterator>
#include <limits>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <curation/calibrated_selection.hpp>
#include <curation/calibration.hpp>
#include <curation/reward_curation.hpp>
#include <curation/score_aggregation.hpp>
#include <curation/trajectory_pool.hpp>
#include <ltt/certificate_triple.hpp>

#include <data/atomic_output.hpp>
#include <data/dsrl.hpp>
#include <data/npy.hpp>

#include "arguments.hpp"
#include "bad_input.hpp"
#include "curation_flags.hpp"
#include "dataset_file.hpp"
#include "format.hpp"
#include "json_fields.hpp"
#include "json_writer.hpp"
#include "output_directory.hpp"
#include "output_paths.hpp"
#include "pool_file.hpp"

namespace ltt::cli::certification {

namespace cur = ltt::curation;

inline constexpr Flag certify_flags[] = {
    {"pool", FlagKind::text, "CSV id,score[,return,cost,length], or .npy of scores"},
    {"dataset", FlagKind::text,
     "instead of --pool: a DSRL dataset (.hdf5/.h5, or a directory of .npy), id = episode index"},
    {"scores", FlagKind::text,
     "--dataset: one score per episode, CSV id,score or .npy (or give --state-values)"},
    {"labels", FlagKind::text, "calibration labels: CSV with header id,unsafe (0 or 1)"},
    {"draw", FlagKind::count,
     "instead of --labels: draw this many trajectories, unsafe = cost > --budget"},
    {"budget", FlagKind::text, "cost budget for --draw (a trajectory at the budget is within it)"},
    {"seed", FlagKind::count, "seed of --draw and of --gate resample", "0"},
    {"alpha", FlagKind::open_unit, "target unsafe fraction", "0.25"},
    {"delta", FlagKind::open_unit, "risk level", "0.1"},
    {"grid", FlagKind::text, "score quantiles of the thresholds, decreasing",
     "0.85,0.8,0.75,0.7,0.65,0.6,0.55,0.5,0.45,0.4,0.35,0.3"},
    {"min-selection", FlagKind::count, "fewest trajectories the uncertified fallback keeps", "50"},
    {"drop-unsafe-calibration", FlagKind::boolean,
     "leave calibration trajectories labeled unsafe out of the selection"},
    {"state-values", FlagKind::text,
     "per-state values, scores are their aggregate: CSV id,value; with --dataset one per row "
     "(.npy, or CSV value)"},
    {"aggregation", FlagKind::text, "mean, minimum or percentile of --state-values", "mean"},
    {"percentile", FlagKind::text, "percent for --aggregation percentile, in [0, 100]", "10"},
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
};

inline constexpr std::string_view gate_kinds[] = {"none", "top-half", "resample"};


// What --selection writes, from its name (and --dataset, --gate).
enum class SelectionFormat {
  ids,           // a pool's ids, one per line (repeats after --gate resample)
  npy_mask,      // uint8 by pool row
  npy_counts,    // int64 by pool row: how often --gate resample drew each trajectory
  npy_indices,   // --dataset: int64 episode indices (repeats after --gate resample)
  dsrl_dataset,  // --dataset: the selected episodes in the DSRL layout, the dataset's store
};

inline std::string_view format_name(SelectionFormat f, data::DsrlStore store) {
  switch (f) {
    case SelectionFormat::ids: return "ids";
    case SelectionFormat::npy_mask: return "npy-mask-uint8";
    case SelectionFormat::npy_counts: return "npy-counts-int64";
    case SelectionFormat::npy_indices: return "npy-episode-indices-int64";
    case SelectionFormat::dsrl_dataset:
      return store == data::DsrlStore::hdf5 ? "dsrl-hdf5" : "dsrl-npy-directory";
  }
  return "ids";
}

struct Inputs {
  std::optional<std::string> pool_file;
  bool pool_npy = false;
  std::optional<std::string> dataset_file;
  data::DsrlStore dataset_store = data::DsrlStore::hdf5;
  std::optional<std::string> scores_file;
  std::optional<std::string> state_values;
  cur::Aggregator aggregator;
  std::string aggregation_name;
  std::optional<std::string> labels_file;
  std::optional<std::int64_t> draw;
  std::optional<double> budget;
  std::int64_t seed = 0;
  std::string gate = "none";
  double kappa = 2.0;
  bool override_gate = false;
  std::optional<std::string> certificate_file, selection_file, transition_mask_file;
  SelectionFormat selection_format = SelectionFormat::ids;
};

// What --gate did, and the selection it leaves (pool positions, ascending, repeats for the
// resampled draws).
struct GateResult {
  std::string kind = "none";
  std::optional<cur::RewardSubselection> top;
  std::optional<cur::ReturnWeightedResample> resample;
  std::vector<std::int64_t> written;
};

// Rows of the dataset the written episodes hold (repeats counted again).
inline std::int64_t written_rows(const data::DsrlPool& dataset,
                                 const std::vector<std::int64_t>& written) {
  std::int64_t rows = 0;
  for (const std::int64_t e : written) rows += dataset.episodes[static_cast<std::size_t>(e)].length;
  return rows;
}

// Rows in the selected episodes, each counted once: the true entries of the transition mask.
inline std::int64_t written_rows_distinct(const data::DsrlPool& dataset,
                                   const std::vector<std::int64_t>& written) {
  std::vector<std::uint8_t> seen(dataset.episodes.size(), 0);
  std::int64_t rows = 0;
  for (const std::int64_t e : written)
    if (!std::exchange(seen[static_cast<std::size_t>(e)], 1))
      rows += dataset.episodes[static_cast<std::size_t>(e)].length;
  return rows;
}

inline std::string_view store_name(data::DsrlStore store) {
  return store == data::DsrlStore::hdf5 ? "hdf5" : "npy-directory";
}

// --gate's account: "gate": {kind, outcome, ...}, or null without one.
inline void write_gate_json(JsonWriter& json, const GateResult& gate, std::int64_t seed) {
  json.key("gate");
  if (gate.top) {
    const cur::RewardSubselection& t = *gate.top;
    json.begin_object()
        .field("kind", "top-half")
        .field("outcome", cur::gate_outcome_name(t.outcome))
        .field("fraction", t.fraction)
        .field("count", t.count);
    if (t.outcome == cur::GateOutcome::refused)
      json.field("return_threshold", std::optional<double>{});
    else
      json.field("return_threshold", t.return_threshold);
    json.field("selection_size", static_cast<std::int64_t>(t.selected.size())).end_object();
  } else if (gate.resample) {
    const cur::ReturnWeightedResample& r = *gate.resample;
    std::int64_t distinct = 0;
    for (std::size_t i = 0; i < r.resampled.size(); ++i)
      distinct += i == 0 || r.resampled[i] != r.resampled[i - 1];
    json.begin_object()
        .field("kind", "resample")
        .field("outcome", cur::gate_outcome_name(r.outcome))
        .field("kappa", r.kappa)
        .field("seed", seed)
        .field("draws", static_cast<std::int64_t>(r.resampled.size()))
        .field("distinct", distinct)
        .field("unsafe_mass_bound", r.unsafe_mass_bound)
        .end_object();
  } else {
    json.null();
  }
}

// "inputs": every file and setting the certificate was computed from.
inline void write_inputs_json(JsonWriter& json, const Inputs& in,
                              const cur::CalibratedSelectionOptions& options,
                              const data::DsrlPool* dataset) {
  json.key("inputs").begin_object();
  json.field("pool", in.pool_file)
      .field("pool_format", !in.pool_file ? std::optional<std::string>{}
                            : in.pool_npy ? std::optional<std::string>("npy")
                                          : std::optional<std::string>("csv"));
  json.key("dataset");
  if (dataset) {
    json.begin_object()
        .field("file", *in.dataset_file)
        .field("store", store_name(dataset->store))
        .field("episodes", dataset->size())
        .field("transitions", dataset->transitions)
        .field("dropped_tail", dataset->dropped_tail)
        .field("observation_dim", dataset->observation_dim)
        .field("action_dim", dataset->action_dim)
        .end_object();
  } else {
    json.null();
  }
  json.field("scores", in.scores_file);
  json.field("state_values", in.state_values);
  if (in.state_values) {
    json.field("aggregation", in.aggregation_name);
    if (in.aggregator.kind == cur::Aggregation::percentile)
      json.field("percentile", in.aggregator.percentile);
  }
  json.field("labels", in.labels_file).field("draw", in.draw).field("budget", in.budget);
  json.field("seed", in.seed);
  JsonFields{json}("grid", options.quantiles);
  json.field("min_selection", options.minimum_selection)
      .field("gate", in.gate)
      .field("kappa", in.gate == "resample" ? std::optional(in.kappa) : std::nullopt)
      .field("override_gate", in.override_gate);
  json.end_object();
}

inline void write_json(JsonWriter& json, const cur::Certificate& c,
                const std::optional<CertificateTriple>& triple, const GateResult& gate,
                const Inputs& in, const cur::CalibratedSelectionOptions& options,
                std::int64_t written_size, const data::DsrlPool* dataset,
                const std::function<void(JsonWriter&)>& more_fields = {}) {
  json.begin_object();
  fields(cur::PricedCertificate{&c, &triple}, JsonFields{json});
  write_gate_json(json, gate, in.seed);
  json.key("output").begin_object();
  json.field("selection", in.selection_file);
  json.field("selection_format",
             in.selection_file ? std::optional<std::string>(
                                     format_name(in.selection_format, in.dataset_store))
                               : std::nullopt);
  json.field("written_size", written_size);
  json.field("written_rows", dataset ? std::optional(written_rows(*dataset, gate.written))
                                     : std::nullopt);
  json.field("transition_mask", in.transition_mask_file);
  json.field("certificate", in.certificate_file);
  json.end_object();
  write_inputs_json(json, in, options, dataset);
  if (more_fields) more_fields(json);
  json.end_object();
}

// A fixed-width cell, right-aligned.
inline std::string cell(std::string text, std::size_t width) {
  if (text.size() < width) text.insert(0, width - text.size(), ' ');
  return text;
}

inline void write_summary(std::ostream& out, const PoolFile& pool, const cur::Certificate& c,
                   const std::optional<CertificateTriple>& triple, const GateResult& gate,
                   const Inputs& in, const cur::CalibratedSelectionOptions& options,
                   std::int64_t written_size, const data::DsrlPool* dataset) {
  if (dataset) {
    out << "dataset " << pool.name << " ("
        << (dataset->store == data::DsrlStore::hdf5 ? "HDF5" : ".npy directory")
        << "): " << c.pool_size << " episodes in " << dataset->transitions << " rows";
    if (dataset->dropped_tail > 0)
      out << " (the last " << dataset->dropped_tail
          << " rows, a truncated episode, are in none)";
    out << "\n";
    if (in.scores_file) out << "scores: " << *in.scores_file << ", one per episode";
  } else {
    out << "pool " << pool.name << ": " << c.pool_size << " trajectories";
  }
  if (in.state_values)
    out << (dataset ? "scores: " : ", scored by ") << "the "
        << (in.aggregator.kind == cur::Aggregation::percentile
                ? cat(shortest(in.aggregator.percentile), "th percentile")
                : in.aggregation_name)
        << " of the state values in " << *in.state_values;
  out << "\n";
  if (in.labels_file)
    out << "calibration " << *in.labels_file << ": ";
  else
    out << "calibration drawn with seed " << in.seed << " (unsafe: cost > " << shortest(*in.budget)
        << "): ";
  out << c.calibration_size << " labels, " << c.calibration_unsafe << " unsafe\n";
  out << "alpha = " << shortest(c.alpha) << ", delta = " << shortest(c.delta) << "; grid of "
      << options.quantiles.size() << " quantiles, " << c.grid_size << " distinct thresholds";
  if (!c.merged_quantiles.empty()) {
    out << " (merged, same threshold as the quantile before:";
    for (const double q : c.merged_quantiles) out << ' ' << shortest(q);
    out << ")";
  }
  out << "\n\n";

  const std::size_t w_lambda = 12, w_count = 10;
  out << cell("step", 4) << cell("quantile", 10) << cell("lambda", w_lambda + 2)
      << cell("N", w_count + 2) << cell("m", 7) << cell("k", 7) << cell("U*", w_count + 2)
      << cell("p", 14) << "  decision\n";
  for (std::size_t j = 0; j < c.steps.size(); ++j) {
    const cur::CertificateStep& s = c.steps[j];
    out << cell(std::to_string(j + 1), 4) << cell(shortest(s.quantile), 10)
        << cell(brief(s.lambda), w_lambda + 2) << cell(std::to_string(s.N), w_count + 2)
        << cell(std::to_string(s.m), 7) << cell(std::to_string(s.k), 7)
        << cell(std::to_string(s.null_boundary), w_count + 2) << cell(brief(s.p), 14) << "  "
        << (s.rejected ? "rejected" : "not rejected: the walk stops") << "\n";
  }
  if (c.steps.size() < static_cast<std::size_t>(c.grid_size))
    out << "  (" << static_cast<std::size_t>(c.grid_size) - c.steps.size()
        << " deeper thresholds not reached)\n";
  else if (c.certified && c.steps.back().rejected)
    out << "  (every threshold of the grid rejected)\n";
  out << "\n";

  if (c.certified) {
    out << "certified: threshold lambda = " << brief(c.threshold) << " at quantile "
        << shortest(c.quantile) << ", step " << *c.certified_step + 1 << "; S(lambda) holds "
        << c.threshold_set_size << " trajectories\n";
    out << "  guarantee, over the uniform calibration draw: Pr[certified and more than alpha = "
        << shortest(c.alpha) << " of S(lambda) unsafe] <= delta = " << shortest(c.delta) << "\n";
    if (triple)
      out << "  certificate triple: r_hat = " << brief(triple->r_hat)
          << ", r_lo = " << brief(triple->r_lo)
          << ", Pr[out of spec | certified] <= " << brief(triple->conditional_bound) << "\n";
  } else {
    const cur::FallbackRecord& f = *c.fallback_record;
    const cur::CertificateStep& first = c.steps.front();
    out << "refused: nothing is certified (p_1 = " << brief(first.p)
        << " > delta = " << shortest(c.delta) << ")\n";
    out << "uncertified fallback: the top K = " << f.count << " of " << c.pool_size << " by score ("
        << c.threshold_set_size << " with ties at threshold " << brief(c.threshold) << ")\n"
        << "  K = max(min(" << f.minimum_selection
        << ", N), floor(L N)), L = " << brief(f.safe_mass_lower)
        << ", the Clopper-Pearson lower bound at level delta on the "
        << "safe mass (" << f.safe_labels << " of " << f.labels << " labels safe)\n";
  }
  if (c.drop_unsafe_calibration)
    out << "dropped " << c.dropped << " calibration trajectories labeled unsafe\n";
  out << "selection: " << c.selection_size << " trajectories\n";

  if (gate.top) {
    const cur::RewardSubselection& t = *gate.top;
    if (t.outcome == cur::GateOutcome::refused)
      out << "gate top-half: refused on the uncertified selection (--override-gate runs it); the "
             "selection is unchanged\n";
    else
      out << "gate top-half: "
          << (t.outcome == cur::GateOutcome::certified ? "ran (certified)"
                                                       : "ran (overridden, UNCERTIFIED)")
          << ": " << t.selected.size() << " kept by return >= " << brief(t.return_threshold)
          << "\n";
  }
  if (gate.resample) {
    const cur::ReturnWeightedResample& r = *gate.resample;
    if (r.outcome == cur::GateOutcome::refused) {
      out << "gate resample: refused on the uncertified selection (--override-gate runs it); the "
             "selection is unchanged\n";
    } else {
      out << "gate resample: "
          << (r.outcome == cur::GateOutcome::certified ? "ran (certified)"
                                                       : "ran (overridden, UNCERTIFIED)")
          << ": " << r.resampled.size() << " draws with kappa = " << shortest(r.kappa);
      if (r.unsafe_mass_bound)
        out << "; unsafe mass of the resampling law <= " << brief(*r.unsafe_mass_bound);
      out << "\n";
    }
  }
  if (in.selection_file) {
    const std::string& file = *in.selection_file;
    switch (in.selection_format) {
      case SelectionFormat::ids:
        out << "wrote " << written_size << " ids to " << file << "\n";
        break;
      case SelectionFormat::npy_counts:
        out << "wrote the draw counts of " << written_size << " draws (int64 by pool row) to "
            << file << "\n";
        break;
      case SelectionFormat::npy_mask:
        out << "wrote a mask of " << written_size << " trajectories (uint8 by pool row) to "
            << file << "\n";
        break;
      case SelectionFormat::npy_indices:
        out << "wrote " << written_size << " episode indices (int64) to " << file << "\n";
        break;
      case SelectionFormat::dsrl_dataset:
        out << "wrote " << written_size << " episodes, " << written_rows(*dataset, gate.written)
            << " rows, in the DSRL layout to " << file << "\n";
        break;
    }
  }
  if (in.transition_mask_file)
    out << "wrote a transition mask of " << dataset->transitions << " rows (bool, "
        << written_rows_distinct(*dataset, gate.written) << " true) to "
        << *in.transition_mask_file << "\n";
  if (in.certificate_file) out << "wrote the certificate to " << *in.certificate_file << "\n";
}

// A pool's selection: ids one per line, or a .npy by pool row (a mask, or draw counts).
inline void write_pool_selection(const std::string& file, SelectionFormat format,
                                 const PoolFile& pool, const std::vector<std::int64_t>& written) {
  const auto N = static_cast<std::size_t>(pool.size());
  if (format == SelectionFormat::npy_counts) {
    std::vector<std::int64_t> counts(N, 0);
    for (const std::int64_t p : written) ++counts[static_cast<std::size_t>(p)];
    data::write_npy(file, data::make_array(counts));
    return;
  }
  if (format == SelectionFormat::npy_mask) {
    std::vector<std::uint8_t> mask(N, 0);
    for (const std::int64_t p : written) mask[static_cast<std::size_t>(p)] = 1;
    data::write_npy(file, data::make_array(mask));
    return;
  }
  // Each id exactly as the pool spells it (a CSV field, quoted if it must be).
  std::string text;
  text.reserve(written.size() * 8);
  for (const std::int64_t p : written) {
    text += csv_field(pool.id_of(p));
    text.push_back('\n');
  }
  data::write_stream_atomically(file, [&](std::ostream& out) {
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
  });
}

inline bool names_hdf5(const std::string& file) {
  return data::store_for(file) == data::DsrlStore::hdf5;
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
  in.gate = args.text("gate");
  if (std::find(std::begin(gate_kinds), std::end(gate_kinds), in.gate) == std::end(gate_kinds))
    throw BadInput(cat("--gate: ", in_quotes(in.gate), " is not one of none, top-half, resample"));
  if (args.given("kappa") && in.gate != "resample")
    throw BadInput("--kappa needs --gate resample");
  in.kappa = real_in_range("kappa", args.text("kappa"), 0.0, std::numeric_limits<double>::max(),
                           "finite and >= 0");
  in.override_gate = args.flag("override-gate");
  if (in.override_gate && in.gate == "none")
    throw BadInput("--override-gate needs --gate top-half or --gate resample");

  cur::CalibratedSelectionOptions options;
  options.alpha = args.real("alpha");
  options.delta = args.real("delta");
  options.quantiles = grid_quantiles(args.text("grid"));
  options.minimum_selection = args.count("min-selection");
  options.drop_unsafe_calibration = args.flag("drop-unsafe-calibration");
  return options;
}

// What --selection writes, from its name and the dataset's store (in.selection_file set).
inline void choose_selection_format(Inputs& in) {
  const std::string& file = *in.selection_file;
  if (!in.dataset_file) {
    in.selection_format = !file.ends_with(".npy") ? SelectionFormat::ids
                          : in.gate == "resample" ? SelectionFormat::npy_counts
                                                  : SelectionFormat::npy_mask;
  } else if (file.ends_with(".npy")) {
    in.selection_format = SelectionFormat::npy_indices;
  } else {
    in.selection_format = SelectionFormat::dsrl_dataset;
    if (in.dataset_store == data::DsrlStore::hdf5 && !names_hdf5(file))
      throw BadInput(cat("--selection: ", in_quotes(file), ": the dataset ",
                         in_quotes(*in.dataset_file),
                         " is HDF5, so its selection is written as HDF5 (name it *.hdf5 or "
                         "*.h5) or as episode indices (*.npy)"));
    if (in.dataset_store == data::DsrlStore::npy_directory && names_hdf5(file))
      throw BadInput(cat("--selection: ", in_quotes(file), ": the dataset ",
                         in_quotes(*in.dataset_file),
                         " is a directory of .npy files, so its selection is written as one "
                         "too (a name without .hdf5 or .h5) or as episode indices (*.npy)"));
  }
}

// The files `ltt certify` reads, by flag.
inline NamedPaths input_files(const Inputs& in) {
  NamedPaths inputs;
  const std::pair<std::string_view, const std::optional<std::string>*> named[] = {
      {"pool", &in.pool_file},         {"dataset", &in.dataset_file},
      {"scores", &in.scores_file},     {"state-values", &in.state_values},
      {"labels", &in.labels_file}};
  for (const auto& [flag, file] : named)
    if (*file) inputs.emplace_back(flag, **file);
  return inputs;
}

// The outputs set in `in`, each checked by output_paths.hpp's rule against `inputs`, against
// `outputs` (files the run writes elsewhere) and against each other.
inline void check_outputs(Inputs& in, const NamedPaths& inputs, NamedPaths outputs = {}) {
  if (in.selection_file) choose_selection_format(in);
  const std::pair<std::string_view, const std::optional<std::string>*> named[] = {
      {"selection", &in.selection_file},
      {"transition-mask", &in.transition_mask_file},
      {"certificate", &in.certificate_file}};
  for (const auto& [flag, file] : named) {
    if (!*file) continue;
    const bool npy_directory = flag == "selection" &&
                               in.selection_format == SelectionFormat::dsrl_dataset &&
                               in.dataset_store == data::DsrlStore::npy_directory;
    check_output(flag, **file, npy_directory ? Destination::directory : Destination::file, inputs,
                 outputs);
    outputs.emplace_back(flag, **file);
  }
}

// The calibration labels: read from --labels, or drawn (curation::draw_calibration with --seed)
// and labeled unsafe when the trajectory's cost exceeds --budget.
inline cur::Calibration read_calibration(const PoolFile& pool, const Inputs& in) {
  if (in.labels_file) return read_labels(*in.labels_file, pool);
  const std::int64_t N = pool.size();
  if (pool.pool.episodic_cost.empty())
    throw BadInput(cat(pool.name,
                       ": --draw needs a 'cost' column to label the drawn trajectories",
                       pool.npy() ? "; a .npy pool holds scores only" : ""));
  if (*in.draw > N)
    throw BadInput(cat("--draw: ", std::to_string(*in.draw), " must not exceed the pool size ",
                       std::to_string(N), " (", pool.name, ")"));
  const std::vector<std::uint8_t> unsafe = cur::unsafe_bits(pool.pool.episodic_cost, *in.budget);
  return cur::label_calibration(cur::draw_calibration(N, *in.draw, in.seed), unsafe);
}

// The calibrated selection, its triple, and the gate behind it.
struct Certification {
  cur::CalibratedSelection result;
  std::optional<CertificateTriple> triple;
  GateResult gate;
  std::int64_t written_size = 0;
};

inline Certification certify_pool(const PoolFile& pool, const cur::Calibration& calibration,
                                  const Inputs& in,
                                  const cur::CalibratedSelectionOptions& options) {
  const std::vector<double>& scores = pool.pool.score;
  const std::int64_t N = pool.size();
  Certification out;
  out.result = cur::calibrated_selection(scores, calibration, options);
  cur::CalibratedSelection& result = out.result;
  cur::Certificate& c = result.certificate;
  if (c.certified) {
    const cur::CertificateStep& first = c.steps.front();
    out.triple =
        ltt::certificate_triple(N, first.N, first.m, first.k, c.calibration_size, c.alpha, c.delta);
  }
  GateResult& gate = out.gate;
  gate.kind = in.gate;
  const cur::GateOverride override_gate =
      in.override_gate ? cur::GateOverride::allow_uncertified : cur::GateOverride::none;
  if (in.gate == "top-half") {
    gate.top = cur::top_return_subselection(result, pool.pool.episodic_return, 0.5, override_gate);
    gate.written = gate.top->selected;
  } else if (in.gate == "resample") {
    gate.resample = cur::return_weighted_resample(result, pool.pool.episodic_return, in.kappa,
                                                  in.seed, override_gate);
    gate.written = gate.resample->resampled;
  } else {
    gate.written = result.selected;
  }
  out.written_size = static_cast<std::int64_t>(gate.written.size());
  return out;
}

// The selection in the format chosen for it, at `file`.
inline void write_selection(const std::string& file, const Inputs& in, const PoolFile& pool,
                            const data::DsrlPool* dataset, const GateResult& gate) {
  switch (in.selection_format) {
    case SelectionFormat::dsrl_dataset:
      data::write_dsrl_selection(*in.dataset_file, file, gate.written);
      break;
    case SelectionFormat::npy_indices:
      data::write_npy(file, data::selection_indices(*dataset, gate.written));
      break;
    case SelectionFormat::ids:
    case SelectionFormat::npy_mask:
    case SelectionFormat::npy_counts:
      write_pool_selection(file, in.selection_format, pool, gate.written);
      break;
  }
}

// Outputs: the selection, the transition mask, then the certificate that describes them.
// Each appears whole or not at all; if one fails, those this run created are removed again
// (an output that replaced an earlier file stays: the old one is gone).
inline void write_outputs(const Inputs& in, const PoolFile& pool, const data::DsrlPool* dataset,
                          const GateResult& gate, const std::string& json_text) {
  std::vector<std::string> created;
  const auto write_output = [&](const std::string& file, const auto& write) {
    std::error_code ec;
    const bool existed = std::filesystem::exists(std::filesystem::symlink_status(file, ec));
    write();
    if (!existed) created.push_back(file);
  };
  try {
    if (in.selection_file) {
      const std::string& file = *in.selection_file;
      write_output(file, [&] { write_selection(file, in, pool, dataset, gate); });
    }
    if (in.transition_mask_file)
      write_output(*in.transition_mask_file, [&] {
        data::write_npy(*in.transition_mask_file,
                        data::selection_transition_mask(*dataset, gate.written));
      });
    if (in.certificate_file)
      write_output(*in.certificate_file, [&] {
        data::write_stream_atomically(*in.certificate_file,
                                      [&](std::ostream& out) { out << json_text; });
      });
  } catch (...) {
    for (const std::string& file : created) {
      std::error_code ec;
      std::filesystem::remove_all(file, ec);
    }
    throw;
  }
}

}  // namespace ltt::cli::certification
