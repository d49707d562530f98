#pragma once
// The certification stage of `ltt certify` and `ltt curate` (paper, section 4.3 and appendix A),
// as steps each subcommand calls in turn:
//
//   read_label_flags, read_selection_flags,  the flags (cli/certification_flags.hpp), and
//   check_outputs                            every output checked before any work (inputs.hpp)
//   read_calibration                         the labels, or the draw labeled by cost > budget
//   certify_pool                             calibrated selection -> certificate triple -> gate
//   write_json                               the certificate as `ltt certify --json` prints it
//                                            (write_summary, certificate_summary.hpp: for a
//                                            human reader)
//   write_outputs                            selection, transition mask, certificate: each whole
//                                            or not at all, those created removed on a failure
//                                            (selection_output.hpp)

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <curation/calibrated_selection.hpp>
#include <curation/calibration.hpp>
#include <curation/reward_curation.hpp>
#include <curation/score_aggregation.hpp>
#include <curation/trajectory_pool.hpp>
#include <ltt/certificate_triple.hpp>

#include <data/dsrl.hpp>

#include "bad_input.hpp"
#include "dataset_file.hpp"
#include "format.hpp"
#include "gate.hpp"
#include "inputs.hpp"
#include "pool_file.hpp"
#include "selection_format.hpp"
#include "selection_output.hpp"

namespace ltt::certification {

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

// The pool or dataset and its scores: the first keys of "inputs".
inline void write_source_json(JsonWriter& json, const Inputs& in, const data::DsrlPool* dataset) {
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
        .field("action_dim", dataset->action_dim);
    write_dataset_parts_json(json, *dataset);
    json.end_object();
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
}

// "inputs": every file and setting the certificate was computed from.
inline void write_inputs_json(JsonWriter& json, const Inputs& in,
                              const cur::CalibratedSelectionOptions& options,
                              const data::DsrlPool* dataset) {
  json.key("inputs").begin_object();
  write_source_json(json, in, dataset);
  json.field("labels", in.labels_file).field("draw", in.draw).field("budget", in.budget);
  json.field("seed", in.seed);
  JsonFields{json}("grid", options.quantiles);
  json.field("min_selection", options.minimum_selection)
      .field("gate", gate_name(in.gate))
      .field("kappa", in.gate == Gate::resample ? std::optional(in.kappa) : std::nullopt)
      .field("override_gate", in.override_gate);
  json.end_object();
}

// "output": the files written and the selection's size (rows: a dataset's transitions).
inline void write_output_json(JsonWriter& json, const Inputs& in, std::int64_t written_size,
                              std::optional<std::int64_t> rows) {
  json.key("output").begin_object();
  json.field("selection", in.selection_file);
  json.field("selection_format", in.selection_file ? std::optional<std::string>(format_name(
                                                         in.selection_format, in.dataset_store,
                                                         in.dataset_files.size() > 1))
                                                   : std::nullopt);
  json.field("written_size", written_size);
  json.field("written_rows", rows);
  json.field("transition_mask", in.transition_mask_file);
  json.field("certificate", in.certificate_file);
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
  write_output_json(json, in, written_size,
                    dataset ? std::optional(written_rows(*dataset, gate.written)) : std::nullopt);
  write_inputs_json(json, in, options, dataset);
  if (more_fields) more_fields(json);
  json.end_object();
}

// --draw n needs the pool's costs, to label what it draws, and at most the pool's size.
inline void check_draw(const PoolFile& pool, const Inputs& in) {
  if (pool.pool.episodic_cost.empty())
    throw BadInput(cat(pool.name, ": --draw needs a 'cost' column to label the drawn trajectories",
                       pool.npy() ? "; a .npy pool holds scores only" : ""));
  if (*in.draw > pool.size())
    throw BadInput(cat("--draw: ", std::to_string(*in.draw), " must not exceed the pool size ",
                       std::to_string(pool.size()), " (", pool.name, ")"));
}

// The calibration labels: read from --labels, or drawn (curation::draw_calibration with --seed)
// and labeled unsafe when the trajectory's cost exceeds --budget.
inline cur::Calibration read_calibration(const PoolFile& pool, const Inputs& in) {
  if (in.labels_file) return read_labels(*in.labels_file, pool);
  check_draw(pool, in);
  const std::int64_t N = pool.size();
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
  out.gate =
      reward_gate(in.gate, result, pool.pool.episodic_return, in.kappa, in.seed, in.override_gate);
  out.written_size = static_cast<std::int64_t>(out.gate.written.size());
  return out;
}

}  // namespace ltt::certification
