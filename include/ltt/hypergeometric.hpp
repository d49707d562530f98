#pragma once
// The hypergeometric distribution X ~ Hyp(N, K, n): the number of successes in n draws
// without replacement from a population of N items of which K are successes.
//
//   hypergeometric_pmf(k, N, K, n)      P[X = k]
//   hypergeometric_cdf(k, N, K, n)      P[X <= k]
//   hypergeometric_sf(k, N, K, n)       P[X >  k]   (asked for directly, never 1 - cdf)
//   hypergeometric_log_*(k, N, K, n)    natural logs, finite far below the double range
//
// Algorithm (R's nmath phyper/dhyper, made exact in the deviations): one mass, for N <= 4096
// from a table of log n! split so that the sum of logs is exact, above by Loader's saddle
// point with every cell's deviation from its expectation formed exactly; a tail summed
// from k outward by the ratio recurrence of consecutive masses, stopped by a rigorous bound at
// 2^-60 of the partial sum; only the smaller tail summed, the larger its complement. Relative
// error below 1e-14, the saddle point's deviances in double-double, so the logs stay accurate
// where the value underflows. The engine is <ltt/detail/hypergeometric_tail.hpp>;
// docs/hypergeometric.md gives the error analysis and the measured accuracy.
//
// Parameters are int64 counts valid up to 2^53. k outside the support is not an error.

#include <cmath>
#include <cstdint>
#include <limits>

#include <ltt/detail/hypergeometric_tail.hpp>

namespace ltt {

inline double hypergeometric_log_pmf(std::int64_t k, std::int64_t N, std::int64_t K,
                                     std::int64_t n) {
  detail::check_hypergeometric("hypergeometric_log_pmf", N, K, n);
  const detail::Hypergeometric h(N, K, n);
  if (k < h.lo || k > h.hi) return -std::numeric_limits<double>::infinity();
  if (h.lo == h.hi) return 0.0;
  const detail::PointMass p = detail::point_mass<true>(h, k);
  if (p.value <= 0.5) return static_cast<double>(p.log);
  // A mass near one: log1p of minus the mass elsewhere, both tails summed directly (each is
  // then the small one), since log P itself would carry the saddle point's absolute error.
  double elsewhere = 0.0;
  if (k > h.lo) elsewhere += detail::outward_tail<true, detail::Direction::down>(h, k - 1).value;
  if (k < h.hi) elsewhere += detail::outward_tail<true, detail::Direction::up>(h, k + 1).value;
  return std::log1p(-elsewhere);
}

inline double hypergeometric_pmf(std::int64_t k, std::int64_t N, std::int64_t K, std::int64_t n) {
  detail::check_hypergeometric("hypergeometric_pmf", N, K, n);
  const detail::Hypergeometric h(N, K, n);
  if (k < h.lo || k > h.hi) return 0.0;
  if (h.lo == h.hi) return 1.0;
  return detail::point_mass<true>(h, k).value;
}

inline double hypergeometric_cdf(std::int64_t k, std::int64_t N, std::int64_t K, std::int64_t n) {
  return detail::checked_tail<false>("hypergeometric_cdf", k, N, K, n, detail::Tail::lower);
}

inline double hypergeometric_sf(std::int64_t k, std::int64_t N, std::int64_t K, std::int64_t n) {
  return detail::checked_tail<false>("hypergeometric_sf", k, N, K, n, detail::Tail::upper);
}

inline double hypergeometric_log_cdf(std::int64_t k, std::int64_t N, std::int64_t K,
                                     std::int64_t n) {
  return detail::checked_tail<true>("hypergeometric_log_cdf", k, N, K, n, detail::Tail::lower);
}

inline double hypergeometric_log_sf(std::int64_t k, std::int64_t N, std::int64_t K,
                                    std::int64_t n) {
  return detail::checked_tail<true>("hypergeometric_log_sf", k, N, K, n, detail::Tail::upper);
}

}  // namespace ltt
