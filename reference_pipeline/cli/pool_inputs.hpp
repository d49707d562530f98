#pragma once
// The pool a certification runs on, from the flags `ltt certify` and `ltt label budget` share:
//
//   read_pool_flags          --pool, or --dataset with --scores
//   read_state_value_flags   --state-values with --aggregation instead of --scores
//   read_inputs              the pool (or the dataset's episodes) with one score per
//                            trajectory, and for the fixed-n walk its calibration labels

#include <filesystem>
#include <optional>
#include <string_view>
#include <vector>

#include <curation/calibration.hpp>

#include <data/dataset_files.hpp>
#include <data/dsrl.hpp>

#include "arguments.hpp"
#include "bad_input.hpp"
#include "certification.hpp"
#include "certification_flags.hpp"
#include "curation_flags.hpp"
#include "dataset_file.hpp"
#include "format.hpp"
#include "gate.hpp"
#include "pool_file.hpp"

namespace ltt::cli::certification {

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

// The pool (or the dataset's episodes) with one score per trajectory, and the calibration
// labels.
struct PoolInputs {
  std::optional<data::DsrlPool> dataset;
  PoolFile pool;
  cur::Calibration calibration;

  const data::DsrlPool* dsrl() const { return dataset ? &*dataset : nullptr; }
};

// With --sequential the labels are read later, in their order (sequential_certification.hpp).
inline PoolInputs read_inputs(const Inputs& in, bool sequential) {
  PoolInputs r;
  PoolFile& pool = r.pool;
  if (in.pool_file) {
    pool = read_pool(*in.pool_file, !in.state_values);
    if (in.state_values) pool.pool.score = read_state_scores(*in.state_values, pool, in.aggregator);
  } else {
    r.dataset = data::load_dsrl_pool(in.dataset_files);
    pool = dataset_pool(*r.dataset, *in.dataset_file);
    pool.pool.score =
        in.scores_file ? read_episode_scores(*in.scores_file, pool, *r.dataset)
                       : read_transition_scores(*in.state_values, pool, *r.dataset, in.aggregator);
  }
  if (in.gate != Gate::none && pool.pool.episodic_return.empty())
    throw BadInput(cat(pool.name, ": --gate ", gate_name(in.gate),
                       " needs a 'return' column (episodic return)",
                       pool.npy() ? "; a .npy pool holds scores only" : ""));
  if (!sequential) r.calibration = read_calibration(pool, in);
  return r;
}

}  // namespace ltt::cli::certification
