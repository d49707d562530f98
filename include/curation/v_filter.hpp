#pragma once
// The V-filter at the calibration-estimated fraction (paper, section 6.1: "Our own
// configurations"): keep the top f N of the pool by score, f = (safe labels) / n the plain
// point estimate of the pool's safe mass from the calibration labels. It is a baseline, never
// a certificate: the estimate carries no confidence level, which is why the calibrated
// selection's fallback uses a Clopper-Pearson lower bound instead and keeps less (appendix
// "the fallback's conservatism").
//
// The count is K = floor(safe N / n), formed exactly in integers; the selection is the
// threshold set at the K-th largest score (selection.hpp), so ties with it are kept. With no
// safe label K = 0 and the selection is empty (threshold +infinity).

#include <curation/calibration.hpp>
#include <curation/detail/check.hpp>
#include <curation/selection.hpp>
#include <ltt/detail/int128.hpp>

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace ltt::curation {

struct VFilterSelection {
  std::int64_t labels = 0;             // n
  std::int64_t safe_labels = 0;        // safe among the n
  double safe_fraction = 0.0;          // f = safe_labels / n
  std::int64_t count = 0;              // K = floor(safe_labels N / n)
  double threshold = 0.0;              // K-th largest score
  std::vector<std::int64_t> selected;  // S(threshold), ascending pool positions
};

inline VFilterSelection v_filter(std::span<const double> scores, const Calibration& calibration) {
  constexpr std::string_view fn = "ltt::curation::v_filter";
  detail::require_nonempty(fn, "scores", scores.size());
  detail::require_finite(fn, "scores", scores);
  const std::int64_t N = detail::ssize(scores.size());
  detail::check_calibration(fn, calibration, N);
  VFilterSelection v;
  v.labels = calibration.size();
  v.safe_labels = v.labels - calibration.unsafe_count();
  v.safe_fraction = static_cast<double>(v.safe_labels) / static_cast<double>(v.labels);
  v.count =
      static_cast<std::int64_t>(static_cast<ltt::detail::int128>(v.safe_labels) * N / v.labels);
  v.threshold = top_count_threshold(scores, v.count);
  v.selected = selection_at(scores, v.threshold);
  return v;
}

}  // namespace ltt::curation
