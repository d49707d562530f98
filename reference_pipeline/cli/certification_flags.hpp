#pragma once
// The flags of the certification stage (`ltt certify`, `ltt curate` after scoring, and `ltt
// label budget`) and what they set in certification::Inputs (certification/inputs.hpp), read
// and checked before any file is read:
//
//   certify_flags                            the flags of `ltt certify`
//   read_pool_flags, read_state_value_flags  --pool, or --dataset with --scores; --state-values
//                                            with --aggregation
//   read_label_flags, read_selection_flags   --labels or --draw/--budget/--seed; --gate and the
//                                            walk's options (alpha, delta, grid, ...)
//   read_walk_flags                          --sequential's walk: --seed, --stop, --n, --order,
//                                            --refusal-rate, --alpha, --delta, --grid,
//                                            --min-selection
//   read_budgets_walk_flags                  the same walk at several budgets: --budgets,
//                                            --alphas, --procedure, --stop cap or target:J,
//                                            --order uniform only
//   read_transition_mask                     --transition-mask, a .npy

#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>

#include <curation/calibrated_selection.hpp>
#include <curation/sequential_options.hpp>

#include <certification/bad_input.hpp>
#include <certification/format.hpp>
#include <certification/gate.hpp>
#include <certification/inputs.hpp>
#include <certification/sequential_budgets_certification.hpp>
#include <certification/sequential_certification.hpp>

#include "arguments.hpp"
#include "budget_flags.hpp"
#include "curation_flags.hpp"

namespace ltt::cli {

namespace cur = ltt::curation;
using certification::Inputs;
using certification::SequentialBudgetsRequest;
using certification::SequentialRequest;

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
     "--sequential: stopping rule, cap, target:J, stall:L, early-refusal, labels, forecast, "
     "depth or auto (= depth: the fixed walk label by label)",
     "auto"},
    {"n", FlagKind::count, "--sequential: the label cap", "200"},
    label_order_flag,
    refusal_rate_flag,
    {"record", FlagKind::text,
     "--sequential: write every label (--labels' and typed ones) here as id,unsafe, to pass "
     "as --labels next time"},
    {"interactive", FlagKind::boolean,
     "--sequential: ask for each next label on standard error, read 0 or 1 per line from "
     "standard input (after --labels, if given)"},
    budgets_flag,
    alphas_flag,
    procedure_flag,
};

// --pool or --dataset, and --scores for a dataset.
inline void read_pool_flags(const Arguments& args, Inputs& in) {
  if (args.has("pool") == args.has("dataset"))
    throw BadInput(args.has("pool") ? "--pool and --dataset exclude each other"
                                    : "missing --pool (or --dataset)");
  if (args.has("pool")) {
    in.pool_file = args.text("pool");
    in.pool_npy = in.pool_file->ends_with(".npy");
  } else {
    read_dataset_names(args.texts("dataset"), in);
  }
  if (args.has("scores")) {
    if (!in.dataset_file)
      throw BadInput("--scores needs --dataset (a pool file holds its own scores)");
    in.scores_file = args.text("scores");
  }
}

// --state-values with --aggregation: scores as aggregates of per-state values (a dataset needs
// them or --scores).
inline void read_state_value_flags(const Arguments& args, Inputs& in) {
  if (args.has("state-values")) in.state_values = args.text("state-values");
  if (in.dataset_file && in.scores_file.has_value() == in.state_values.has_value())
    throw BadInput(in.scores_file
                       ? "--scores and --state-values exclude each other"
                       : "--dataset needs --scores (one per episode) or --state-values (one per "
                         "row)");
  if (args.given("aggregation") && !in.state_values)
    throw BadInput(
        "--aggregation needs --state-values (the pool's score column is already one "
        "score per trajectory)");
  in.aggregator = read_aggregator(args, in.aggregation_name);
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

// The walk's flags, as `ltt certify --sequential` and `ltt label budget` read them; --seed is
// the label order's, --min-selection the refusal fallback's.
inline SequentialRequest read_walk_flags(const Arguments& args, Inputs& in) {
  SequentialRequest r;
  in.seed = args.count("seed");
  r.stop = args.text("stop");
  read_stop_and_order(args, r.options);
  r.options.label_cap = args.count("n");
  if (r.options.label_cap < 1) throw BadInput("--n: 0 must be at least 1");
  r.options.refusal_rate = args.real("refusal-rate");
  r.options.alpha = args.real("alpha");
  r.options.delta = args.real("delta");
  r.options.quantiles = grid_quantiles(args.text("grid"));
  // The floor of the uncertified fallback's selection when nothing is certified
  // (curation::sequential_fallback), as the fixed walk's --min-selection.
  r.options.minimum_selection = args.count("min-selection");
  return r;
}

// The walk at several budgets, as `ltt certify --sequential --budgets` and `ltt label budget
// --budgets` read it: --seed (the label order's), --budgets, --alphas (or --alpha), --delta,
// --procedure, --grid, --min-selection, --n, --stop (cap, the default here, or target:J) and
// --order (uniform only: the walk at several budgets reads the uniform order).
inline SequentialBudgetsRequest read_budgets_walk_flags(const Arguments& args, Inputs& in) {
  if (args.given("order") && args.text("order") != "uniform")
    throw BadInput(cat("--order: ", in_quotes(args.text("order")),
                       " with --budgets: the walk at several budgets reads the uniform order"));
  in.seed = args.count("seed");
  SequentialBudgetsRequest r;
  r.budgets = read_budgets(args);
  cur::SeveralBudgetsSequentialOptions& o = r.options;
  o.alphas = read_alphas(args, r.budgets.size());
  o.delta = args.real("delta");
  o.procedure = read_procedure(args);
  o.quantiles = grid_quantiles(args.text("grid"));
  o.minimum_selection = args.count("min-selection");
  o.label_cap = args.count("n");
  if (o.label_cap < 1) throw BadInput("--n: 0 must be at least 1");
  // --stop: cap (the default here) or target:J; the single-budget rules that forecast or
  // refuse early have no several-budget form.
  if (args.given("stop")) {
    r.stop = args.text("stop");
    cur::SequentialSelectionOptions parsed;
    bool known = r.stop == "cap" || r.stop.starts_with("target:");
    if (known) {
      try {
        cur::apply_stop_rule(r.stop, parsed);
      } catch (const std::invalid_argument&) {
        known = false;
      }
    }
    if (!known)
      throw BadInput(cat("--stop: ", in_quotes(r.stop),
                         " with --budgets must be cap or target:J (J a grid step, from 0)"));
    o.target_step = parsed.target_step;
  }
  return r;
}

}  // namespace ltt::cli
