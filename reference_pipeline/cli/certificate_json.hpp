#pragma once
// The certificate of a calibrated selection, and a resampled rate, as JSON fields (docs/cli.md, "ltt certify --json"):
// written by ltt certify and, per seed, by ltt pipeline's report.json, so both name every field
// the same way.

#include <curation/calibrated_selection.hpp>
#include <curation/validation.hpp>

#include "json_writer.hpp"

namespace ltt::cli {

// Writes the certificate's fields into the object `json` is in: certified, threshold, quantile,
// selection_size, fallback, alpha, delta, pool_size, calibration_size, calibration_unsafe,
// grid_size, merged_quantiles, steps (quantile, lambda, N, m, k, null_boundary, p, rejected),
// certified_step, fallback_record, threshold_set_size, drop_unsafe_calibration, dropped.
inline void write_certificate_fields(JsonWriter& json, const curation::Certificate& c) {
  namespace cur = ltt::curation;
  json.field("certified", c.certified)
      .field("threshold", c.threshold)
      .field("quantile", c.quantile)
      .field("selection_size", c.selection_size)
      .field("fallback", c.fallback)
      .field("alpha", c.alpha)
      .field("delta", c.delta)
      .field("pool_size", c.pool_size)
      .field("calibration_size", c.calibration_size)
      .field("calibration_unsafe", c.calibration_unsafe)
      .field("grid_size", c.grid_size);
  json.key("merged_quantiles").begin_array();
  for (const double q : c.merged_quantiles) json.value(q);
  json.end_array();
  json.key("steps").begin_array();
  for (const cur::CertificateStep& s : c.steps)
    json.begin_object()
        .field("quantile", s.quantile)
        .field("lambda", s.lambda)
        .field("N", s.N)
        .field("m", s.m)
        .field("k", s.k)
        .field("null_boundary", s.null_boundary)
        .field("p", s.p)
        .field("rejected", s.rejected)
        .end_object();
  json.end_array();
  json.field("certified_step", c.certified_step);
  json.key("fallback_record");
  if (c.fallback_record) {
    const cur::FallbackRecord& f = *c.fallback_record;
    json.begin_object()
        .field("labels", f.labels)
        .field("safe_labels", f.safe_labels)
        .field("safe_mass_lower", f.safe_mass_lower)
        .field("minimum_selection", f.minimum_selection)
        .field("count", f.count)
        .end_object();
  } else {
    json.null();
  }
  json.field("threshold_set_size", c.threshold_set_size)
      .field("drop_unsafe_calibration", c.drop_unsafe_calibration)
      .field("dropped", c.dropped);
}

// A resampled rate (validation harness) as "name": {count, trials, rate, lower, upper}: written
// by ltt validate and by ltt pipeline's guarantee check.
inline void write_proportion(JsonWriter& json, std::string_view name,
                             const curation::ProportionEstimate& p) {
  json.key(name)
      .begin_object()
      .field("count", p.count)
      .field("trials", p.trials)
      .field("rate", p.rate)
      .field("lower", p.lower)
      .field("upper", p.upper)
      .end_object();
}

}  // namespace ltt::cli
