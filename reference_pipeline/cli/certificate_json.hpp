#pragma once
// The certificate of a calibrated selection, and a resampled rate, as JSON fields (docs/cli.md,
// "ltt certify --json"): written by ltt certify and, per seed, by ltt pipeline's report.json,
// from the one field list of <curation/fields.hpp> that ltt.certify's record also follows.

#include <curation/calibrated_selection.hpp>
#include <curation/validation.hpp>

#include <string_view>

#include "format.hpp"

namespace ltt::cli {

// The certificate's fields, into the object `json` is in.
inline void write_certificate_fields(JsonWriter& json, const curation::Certificate& c) {
  fields(c, JsonFields{json});
}

// A resampled rate (validation harness) as "name": {count, trials, rate, lower, upper}: written
// by ltt validate and by ltt pipeline's guarantee check.
inline void write_proportion(JsonWriter& json, std::string_view name,
                             const curation::ProportionEstimate& p) {
  JsonFields{json}(name, p);
}

}  // namespace ltt::cli
