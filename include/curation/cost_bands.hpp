#pragma once
// Cost-band labels: one calibration sample that certifies several budgets at once.
//
// Budgets b_1 < b_2 < ... < b_K, ascending (the tightest first). An episode's band is the
// number of budgets its episodic cost exceeds,
//     band(c) = #{k : c > b_k}  in {0, ..., K},
// so it is over budget b_k iff band >= k, and the unsafe sets are nested: cost > b_loose
// implies cost > b_tight. A labeler who can say which band a cost fell in (or a cost logger
// that records the cost) supplies everything every budget's test needs from the same uniform
// draw (paper, section 4.3: the draw, not the labels, is what makes the test exact, and the
// draw does not depend on the budgets).
//
// With one budget the band is the one-bit label u(tau): calibration_for_budget(b, 0) is then
// exactly the Calibration the one-bit path builds, so a one-budget certificate is the same
// certificate (tests/curation/several_budgets.test.cpp checks it byte for byte).
//
//   check_budgets(fn, budgets)                     ascending, finite, 1 <= K <= max_budgets
//   cost_band(cost, budgets)                       band of one cost
//   BandedCalibration                              positions and bands of the n drawn episodes
//   label_banded_calibration(index, costs, b)      bands from known pool costs (simulation)
//   banded_calibration_from_bands(ids, ...)        a user's id,band file mapped onto the pool
//   banded_calibration_from_costs(ids, ...)        a user's id,cost file mapped onto the pool
//   calibration_for_budget(banded, k)              the one-bit Calibration of budget k (0-based)

#include <curation/calibration.hpp>
#include <curation/detail/check.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ltt::curation {

// Bands are stored in a byte; 64 budgets is far beyond any benchmark's three.
inline constexpr std::int64_t max_budgets = 64;

struct BandedCalibration {
  std::int64_t budgets = 0;          // K
  std::vector<std::int64_t> index;   // pool positions, distinct, ascending from the builders
  std::vector<std::uint8_t> band;    // in {0, ..., K}, aligned with index

  std::int64_t size() const { return static_cast<std::int64_t>(index.size()); }
};

// Budgets must be finite and strictly ascending: equal budgets would be one budget twice, and
// the band (a count of budgets exceeded) needs an order.
inline void check_budgets(std::string_view fn, std::span<const double> budgets) {
  if (budgets.empty()) detail::invalid(fn, "budgets.size()", "0", "must be >= 1");
  if (detail::ssize(budgets.size()) > max_budgets)
    detail::invalid(fn, "budgets.size()", detail::show(detail::ssize(budgets.size())),
                    "must be <= " + detail::show(max_budgets));
  for (std::size_t k = 0; k < budgets.size(); ++k) {
    if (!std::isfinite(budgets[k]))
      detail::invalid(fn, detail::at("budgets", k), detail::show(budgets[k]), "must be finite");
    if (k > 0 && !(budgets[k] > budgets[k - 1]))
      detail::invalid(fn, detail::at("budgets", k), detail::show(budgets[k]),
                      "must exceed budgets[" + std::to_string(k - 1) +
                          "] = " + detail::show(budgets[k - 1]) +
                          " (budgets are strictly ascending, the tightest first)");
  }
}

// #{k : cost > b_k}; budgets checked by the caller. A cost equal to a budget is within it, as
// the one-bit label "over the budget" reads.
inline std::uint8_t cost_band(double cost, std::span<const double> budgets) {
  int band = 0;
  for (const double b : budgets) band += cost > b ? 1 : 0;
  return static_cast<std::uint8_t>(band);  // <= max_budgets
}

// The one-bit Calibration of budget k (0-based, the tightest is 0): unsafe iff band > k.
inline Calibration calibration_for_budget(const BandedCalibration& banded, std::int64_t k) {
  constexpr std::string_view fn = "ltt::curation::calibration_for_budget";
  if (k < 0 || k >= banded.budgets)
    detail::invalid(fn, "k", detail::show(k),
                    "must lie in [0, budgets = " + detail::show(banded.budgets) + ")");
  Calibration c;
  c.index = banded.index;
  c.unsafe.resize(banded.band.size());
  for (std::size_t i = 0; i < banded.band.size(); ++i)
    c.unsafe[i] = static_cast<std::uint8_t>(banded.band[i] > k ? 1 : 0);
  return c;
}

// Bands from known pool costs: band[i] = cost_band(pool_costs[index[i]]). For simulations and
// validation on a pool whose costs are all known.
inline BandedCalibration label_banded_calibration(std::span<const std::int64_t> index,
                                                  std::span<const double> pool_costs,
                                                  std::span<const double> budgets) {
  constexpr std::string_view fn = "ltt::curation::label_banded_calibration";
  check_budgets(fn, budgets);
  BandedCalibration b;
  b.budgets = detail::ssize(budgets.size());
  b.index.assign(index.begin(), index.end());
  b.band.resize(index.size());
  for (std::size_t i = 0; i < index.size(); ++i) {
    if (index[i] < 0 || index[i] >= detail::ssize(pool_costs.size()))
      detail::invalid(fn, detail::at("index", i), detail::show(index[i]),
                      "must be a pool position in [0, " +
                          detail::show(detail::ssize(pool_costs.size())) + ")");
    const double cost = pool_costs[static_cast<std::size_t>(index[i])];
    if (!std::isfinite(cost))
      detail::invalid(fn, detail::at("pool_costs", static_cast<std::size_t>(index[i])),
                      detail::show(cost), "must be finite");
    b.band[i] = cost_band(cost, budgets);
  }
  return b;
}

// A user's id,band labels mapped onto the pool, with calibration_from_labels' checks (unknown
// and repeated ids refused). Every band must lie in [0, K].
inline BandedCalibration banded_calibration_from_bands(std::span<const std::int64_t> pool_ids,
                                                       std::span<const std::int64_t> label_ids,
                                                       std::span<const std::int64_t> label_bands,
                                                       std::int64_t budgets) {
  constexpr std::string_view fn = "ltt::curation::banded_calibration_from_bands";
  if (budgets < 1 || budgets > max_budgets)
    detail::invalid(fn, "budgets", detail::show(budgets),
                    "must lie in [1, " + detail::show(max_budgets) + "]");
  detail::require_same_size(fn, "label_bands", label_bands.size(), "label_ids", label_ids.size());
  for (std::size_t i = 0; i < label_bands.size(); ++i)
    if (label_bands[i] < 0 || label_bands[i] > budgets)
      detail::invalid(fn, detail::at("label_bands", i), detail::show(label_bands[i]),
                      "must lie in [0, " + detail::show(budgets) + "] (the number of budgets " +
                          "the cost exceeds); label id " + detail::show(label_ids[i]));
  // Each budget's bits through the one-bit mapping: the same positions every time, and the
  // band is the number of budgets whose bit is set.
  BandedCalibration b;
  b.budgets = budgets;
  std::vector<std::int64_t> bits(label_bands.size());
  for (std::int64_t k = 0; k < budgets; ++k) {
    for (std::size_t i = 0; i < bits.size(); ++i) bits[i] = label_bands[i] > k ? 1 : 0;
    const Calibration c = calibration_from_labels(pool_ids, label_ids, bits);
    if (k == 0) {
      b.index = c.index;
      b.band.assign(c.unsafe.begin(), c.unsafe.end());
    } else {
      for (std::size_t i = 0; i < c.unsafe.size(); ++i) b.band[i] += c.unsafe[i];
    }
  }
  return b;
}

// A user's id,cost labels: each cost's band against the budgets, then as above.
inline BandedCalibration banded_calibration_from_costs(std::span<const std::int64_t> pool_ids,
                                                       std::span<const std::int64_t> label_ids,
                                                       std::span<const double> label_costs,
                                                       std::span<const double> budgets) {
  constexpr std::string_view fn = "ltt::curation::banded_calibration_from_costs";
  check_budgets(fn, budgets);
  detail::require_same_size(fn, "label_costs", label_costs.size(), "label_ids", label_ids.size());
  std::vector<std::int64_t> bands(label_costs.size());
  for (std::size_t i = 0; i < label_costs.size(); ++i) {
    if (!std::isfinite(label_costs[i]))
      detail::invalid(fn, detail::at("label_costs", i), detail::show(label_costs[i]),
                      "must be finite; label id " + detail::show(label_ids[i]));
    bands[i] = cost_band(label_costs[i], budgets);
  }
  return banded_calibration_from_bands(pool_ids, label_ids, bands,
                                       detail::ssize(budgets.size()));
}

}  // namespace ltt::curation
