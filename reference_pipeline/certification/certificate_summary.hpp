#pragma once
// The certificate as `ltt certify` prints it for a human reader (`ltt curate` too, after its
// scoring summary), in the order a reader checks it: what was read, the walk step by step
// (threshold, N_j, m_j, k_j, U*, p_j, decision), the decision with its guarantee or the
// uncertified fallback, the gate, and the files written.

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include <curation/calibrated_selection.hpp>
#include <curation/reward_curation.hpp>
#include <curation/score_aggregation.hpp>
#include <ltt/certificate_triple.hpp>

#include <data/dsrl.hpp>

#include "dataset_file.hpp"
#include "format.hpp"
#include "gate.hpp"
#include "inputs.hpp"
#include "pool_file.hpp"
#include "selection_format.hpp"
#include "selection_output.hpp"

namespace ltt::certification {

// A fixed-width cell, right-aligned.
inline std::string cell(std::string text, std::size_t width) {
  if (text.size() < width) text.insert(0, width - text.size(), ' ');
  return text;
}

// The pool or dataset, its scores, the calibration labels and the grid.
inline void write_input_summary(std::ostream& out, const PoolFile& pool, const cur::Certificate& c,
                                const Inputs& in, const cur::CalibratedSelectionOptions& options,
                                const data::DsrlPool* dataset) {
  if (dataset) {
    out << "dataset " << pool.name << " ("
        << (dataset->several_files() ? cat(std::to_string(dataset->parts.size()), " files")
            : dataset->store == data::DsrlStore::hdf5 ? std::string("HDF5")
                                                      : std::string(".npy directory"))
        << "): " << c.pool_size << " episodes in " << dataset->transitions << " rows"
        << dropped_tail_text(*dataset) << "\n";
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
}

// One row per step of the walk: every number needed to re-check the step by hand.
inline void write_step_table(std::ostream& out, const cur::Certificate& c) {
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
}

// Certified with its guarantee (and triple), or refused with the uncertified fallback; then the
// selection's size.
inline void write_decision(std::ostream& out, const cur::Certificate& c,
                           const std::optional<CertificateTriple>& triple) {
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
}

// "gate NAME: refused ...", or "gate NAME: ran (...): " followed by what the gate did.
inline bool write_gate_outcome(std::ostream& out, Gate gate, cur::GateOutcome outcome) {
  out << "gate " << gate_name(gate) << ": ";
  if (outcome == cur::GateOutcome::refused) {
    out << "refused on the uncertified selection (--override-gate runs it); the selection is "
           "unchanged\n";
    return false;
  }
  out << (outcome == cur::GateOutcome::certified ? "ran (certified)"
                                                 : "ran (overridden, UNCERTIFIED)")
      << ": ";
  return true;
}

inline void write_gate_summary(std::ostream& out, const GateResult& gate) {
  if (gate.top) {
    const cur::RewardSubselection& t = *gate.top;
    if (write_gate_outcome(out, Gate::top_half, t.outcome))
      out << t.selected.size() << " kept by return >= " << brief(t.return_threshold) << "\n";
  }
  if (gate.resample) {
    const cur::ReturnWeightedResample& r = *gate.resample;
    if (write_gate_outcome(out, Gate::resample, r.outcome)) {
      out << r.resampled.size() << " draws with kappa = " << shortest(r.kappa);
      if (r.unsafe_mass_bound)
        out << "; unsafe mass of the resampling law <= " << brief(*r.unsafe_mass_bound);
      out << "\n";
    }
  }
}

// One line per file written: the selection (in its format), the transition mask, the
// certificate.
inline void write_files_summary(std::ostream& out, const Inputs& in, const GateResult& gate,
                                std::int64_t written_size, const data::DsrlPool* dataset) {
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
        out << "wrote a mask of " << written_size << " trajectories (uint8 by pool row) to " << file
            << "\n";
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
        << written_rows_distinct(*dataset, gate.written) << " true) to " << *in.transition_mask_file
        << "\n";
  if (in.certificate_file) out << "wrote the certificate to " << *in.certificate_file << "\n";
}

inline void write_summary(std::ostream& out, const PoolFile& pool, const cur::Certificate& c,
                          const std::optional<CertificateTriple>& triple, const GateResult& gate,
                          const Inputs& in, const cur::CalibratedSelectionOptions& options,
                          std::int64_t written_size, const data::DsrlPool* dataset) {
  write_input_summary(out, pool, c, in, options, dataset);
  write_step_table(out, c);
  write_decision(out, c, triple);
  write_gate_summary(out, gate);
  write_files_summary(out, in, gate, written_size, dataset);
}

}  // namespace ltt::certification
