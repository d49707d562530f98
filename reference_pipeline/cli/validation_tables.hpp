#pragma once
// The summary tables `ltt validate` prints, for one budget and for several: a proportion's row
// with its Clopper-Pearson interval, and the grid with the pool's true composition and the
// returned-step histogram.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <span>
#include <string>

#include <curation/true_composition.hpp>
#include <curation/validation.hpp>

#include <certification/format.hpp>

#include "arguments.hpp"  // the certification names, unqualified

namespace ltt::cli {

inline std::string show_rate(const std::optional<double>& x) { return x ? brief(*x) : "undefined"; }

// "0.0455 | 91 / 2000 | [0.0368, 0.0556]"
inline std::string show_row(const ltt::curation::ProportionEstimate& p) {
  return cat(show_rate(p.rate), " | ", std::to_string(p.count), " / ", std::to_string(p.trials),
             " | [", brief(p.lower), ", ", brief(p.upper), "]");
}

inline void write_steps_text(std::ostream& out,
                             std::span<const ltt::curation::ValidationStep> steps,
                             std::int64_t returned_none, std::span<const double> merged_quantiles) {
  out << "returned threshold per grid step (u_j = U_j / N_j, true null: U_j >= U*_j):\n\n"
      << "| j | quantile | lambda | N_j | U_j | u_j | true null | returned |\n"
      << "|---|---|---|---|---|---|---|---|\n";
  for (std::size_t j = 0; j < steps.size(); ++j) {
    const auto& s = steps[j];
    out << "| " << j + 1 << " | " << shortest(s.quantile) << " | " << brief(s.lambda) << " | "
        << s.N << " | " << s.U << " | " << brief(s.unsafe_fraction) << " | "
        << (s.true_null ? "yes" : "no") << " | " << s.returned << " |\n";
  }
  out << "| none | | | | | | | " << returned_none << " |\n";
  if (!merged_quantiles.empty()) {
    out << "\nmerged into the step above (same lambda):";
    for (const double q : merged_quantiles) out << " " << shortest(q);
    out << "\n";
  }
}

}  // namespace ltt::cli
