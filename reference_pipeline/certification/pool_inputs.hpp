#pragma once
// The pool a certification runs on, from the inputs `ltt certify` and `ltt label budget` share
// (their flags: read_pool_flags and read_state_value_flags of cli/certification_flags.hpp):
//
//   read_inputs              the pool (or the dataset's episodes) with one score per
//                            trajectory, and for the fixed-n walk its calibration labels

#include <filesystem>
#include <optional>
#include <string_view>
#include <vector>

#include <curation/calibration.hpp>

#include <data/dataset_files.hpp>
#include <data/dsrl.hpp>

#include "bad_input.hpp"
#include "certification.hpp"
#include "dataset_file.hpp"
#include "format.hpp"
#include "gate.hpp"
#include "inputs.hpp"
#include "pool_file.hpp"

namespace ltt::certification {

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

}  // namespace ltt::certification
