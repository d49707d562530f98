#pragma once
// Certification-gated reward-aware curation (paper, section 4.4 and appendix
// "Hyperparameters"). Within a calibrated selection S:
//  - top_return_subselection keeps the top half of S by episodic return;
//  - return_weighted_resample draws |S| trajectories from S with replacement, with probability
//    proportional to exp(clip(z(R_i), -kappa, kappa)), z standardizing return within S.
// Return and cost correlate on contaminated selections, so both run only behind the
// certificate. On an uncertified selection they refuse, returning S unchanged, unless the
// caller passes GateOverride::allow_uncertified; the result's outcome says which happened.
//
// Certified resampling carries the corollary after Proposition "guarantee": weights in
// [e^-kappa, e^kappa] multiply the unsafe-to-safe odds by at most e^{2 kappa}, so the unsafe
// mass of the resampling distribution is at most ltt::resampled_unsafe_bound(alpha, kappa).
// This also holds after drop_unsafe_calibration, which only lowers the selection's unsafe
// fraction.
//
// Rules: z uses the population standard deviation of the returns in S; when it is 0 (one
// trajectory, or equal returns) every z is 0 and resampling is uniform. The top half keeps
// ceil(|S| / 2) trajectories by count, and every trajectory tied with the last one kept (the
// threshold rule of selection.hpp applied to return). Draws use the seeded std::mt19937_64
// through portable uniform draws, so a seed gives the same resample on every platform.

#include <curation/calibrated_selection.hpp>
#include <curation/detail/check.hpp>
#include <curation/detail/random.hpp>
#include <curation/detail/sum.hpp>
#include <ltt/bounds.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <random>
#include <span>
#include <string_view>
#include <vector>

namespace ltt::curation {

enum class GateOverride { none, allow_uncertified };

enum class GateOutcome {
  certified,   // ran: the selection is certified
  overridden,  // ran on an uncertified selection because the caller allowed it
  refused,     // did not run: uncertified and no override; the selection is returned unchanged
};

// The outcome's name as reports and JSON write it.
constexpr std::string_view gate_outcome_name(GateOutcome outcome) {
  switch (outcome) {
    case GateOutcome::certified:
      return "certified";
    case GateOutcome::overridden:
      return "overridden";
    case GateOutcome::refused:
      return "refused";
  }
  return "refused";
}

struct RewardSubselection {
  GateOutcome outcome = GateOutcome::refused;
  double fraction = 0.5;               // share of S kept by return
  std::int64_t count = 0;              // ceil(fraction |S|), before ties
  double return_threshold = 0.0;       // the count-th largest return in S (ran only)
  std::vector<std::int64_t> selected;  // ascending pool positions
};

struct ReturnWeightedResample {
  GateOutcome outcome = GateOutcome::refused;
  double kappa = 0.0;
  std::vector<std::int64_t> selection;      // S, ascending pool positions
  std::vector<double> probability;          // draw probability of each trajectory of S (ran only)
  std::vector<std::int64_t> resampled;      // |S| draws, ascending; S itself when refused
  std::optional<double> unsafe_mass_bound;  // certified only: resampled_unsafe_bound(alpha, kappa)
};

namespace detail {

inline GateOutcome gate_outcome(const Certificate& c, GateOverride gate) {
  if (c.certified) return GateOutcome::certified;
  return gate == GateOverride::allow_uncertified ? GateOutcome::overridden : GateOutcome::refused;
}

inline void check_returns(std::string_view fn, std::span<const double> episodic_return,
                          const CalibratedSelection& s) {
  if (detail::ssize(episodic_return.size()) != s.certificate.pool_size)
    invalid(fn, "episodic_return.size()", show(ssize(episodic_return.size())),
            "must equal the pool size " + show(s.certificate.pool_size));
  for (const std::int64_t i : s.selected) {
    const auto u = static_cast<std::size_t>(i);
    if (u >= episodic_return.size())
      invalid(fn, "selection.selected", show(i), "is not a pool position");
    require_finite(fn, at("episodic_return", u), episodic_return[u]);
  }
}

}  // namespace detail

// Draw probabilities proportional to exp(clip(z_i, -kappa, kappa)), z_i = (R_i - mean) / sd
// with the population sd (z = 0 when sd = 0). Formed as exp(c_i - max c) so no weight
// overflows for any kappa.
inline std::vector<double> return_weights(std::span<const double> returns, double kappa) {
  constexpr std::string_view fn = "ltt::curation::return_weights";
  if (!(std::isfinite(kappa) && kappa >= 0.0))
    detail::invalid(fn, "kappa", detail::show(kappa), "must be finite and >= 0");
  detail::require_finite(fn, "returns", returns);
  const std::size_t n = returns.size();
  if (n == 0) return {};
  const double mean = detail::compensated_mean(returns);
  // Population sd, scaled by the largest deviation so no square overflows.
  double scale = 0.0;
  for (const double r : returns) scale = std::max(scale, std::abs(r - mean));
  std::vector<double> c(n, 0.0);
  if (scale > 0.0) {
    std::vector<double> sq(n);
    for (std::size_t i = 0; i < n; ++i) {
      const double d = (returns[i] - mean) / scale;
      sq[i] = d * d;
    }
    const double sd = scale * std::sqrt(detail::compensated_mean(sq));
    if (sd > 0.0)
      for (std::size_t i = 0; i < n; ++i)
        c[i] = std::clamp((returns[i] - mean) / sd, -kappa, kappa);
  }
  const double top = *std::max_element(c.begin(), c.end());
  std::vector<double> w(n);
  for (std::size_t i = 0; i < n; ++i) w[i] = std::exp(c[i] - top);
  const double total = detail::compensated_sum(w);
  for (double& x : w) x /= total;
  return w;
}

// Keep the top `fraction` of the selection by episodic return (the paper's top half), behind
// the certificate. episodic_return has one entry per pool trajectory.
inline RewardSubselection top_return_subselection(const CalibratedSelection& selection,
                                                  std::span<const double> episodic_return,
                                                  double fraction = 0.5,
                                                  GateOverride gate = GateOverride::none) {
  constexpr std::string_view fn = "ltt::curation::top_return_subselection";
  if (!(fraction > 0.0 && fraction <= 1.0))
    detail::invalid(fn, "fraction", detail::show(fraction), "must lie in (0, 1]");
  detail::check_returns(fn, episodic_return, selection);
  RewardSubselection r;
  r.outcome = detail::gate_outcome(selection.certificate, gate);
  r.fraction = fraction;
  const std::size_t size = selection.selected.size();
  r.count = static_cast<std::int64_t>(std::ceil(fraction * static_cast<double>(size)));
  if (r.outcome == GateOutcome::refused || size == 0) {
    r.selected = selection.selected;
    return r;
  }
  std::vector<double> R(size);
  for (std::size_t i = 0; i < size; ++i)
    R[i] = episodic_return[static_cast<std::size_t>(selection.selected[i])];
  std::vector<double> v(R);
  const auto kth = v.begin() + static_cast<std::ptrdiff_t>(size) - r.count;
  std::nth_element(v.begin(), kth, v.end());
  r.return_threshold = *kth;
  for (std::size_t i = 0; i < size; ++i)
    if (R[i] >= r.return_threshold) r.selected.push_back(selection.selected[i]);
  return r;
}

// Certified return-weighted resampling: |S| draws with replacement at return_weights(R_S,
// kappa), seeded.
inline ReturnWeightedResample return_weighted_resample(const CalibratedSelection& selection,
                                                       std::span<const double> episodic_return,
                                                       double kappa, std::uint64_t seed,
                                                       GateOverride gate = GateOverride::none) {
  constexpr std::string_view fn = "ltt::curation::return_weighted_resample";
  if (!(std::isfinite(kappa) && kappa >= 0.0))
    detail::invalid(fn, "kappa", detail::show(kappa), "must be finite and >= 0");
  detail::check_returns(fn, episodic_return, selection);
  ReturnWeightedResample r;
  r.outcome = detail::gate_outcome(selection.certificate, gate);
  r.kappa = kappa;
  r.selection = selection.selected;
  if (r.outcome == GateOutcome::refused) {
    r.resampled = selection.selected;
    return r;
  }
  if (r.outcome == GateOutcome::certified)
    r.unsafe_mass_bound = ltt::resampled_unsafe_bound(selection.certificate.alpha, kappa);
  const std::size_t size = r.selection.size();
  std::vector<double> R(size);
  for (std::size_t i = 0; i < size; ++i)
    R[i] = episodic_return[static_cast<std::size_t>(r.selection[i])];
  r.probability = return_weights(R, kappa);
  std::vector<double> cumulative(size);
  double running = 0.0;
  for (std::size_t i = 0; i < size; ++i) cumulative[i] = running += r.probability[i];
  std::mt19937_64 rng(seed);
  r.resampled.reserve(size);
  for (std::size_t d = 0; d < size; ++d) {
    const double u = detail::uniform_unit(rng) * running;
    auto i = static_cast<std::size_t>(std::upper_bound(cumulative.begin(), cumulative.end(), u) -
                                      cumulative.begin());
    r.resampled.push_back(r.selection[std::min(i, size - 1)]);
  }
  std::sort(r.resampled.begin(), r.resampled.end());
  return r;
}

}  // namespace ltt::curation
