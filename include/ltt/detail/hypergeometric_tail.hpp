#pragma once
// The engine behind <ltt/hypergeometric.hpp>, shared with the composition p-values and the
// certification rate: the law Hyp(N, K, n) with its support and mode, one point mass, the ratio
// of consecutive masses, and the tails summed from a point outward.
//
// Algorithm (the approach of R's nmath phyper/dhyper, made exact in the deviations):
//  0. For N <= log_factorial_limit (4096) the mass at one point is exp of a sum of nine
//     tabulated log n!, split hi + lo so that the sum is exact (point_mass_by_table).
//  1. Above, the mass at one point is the 2x2 contingency-table form of Loader's saddle point,
//       P[X = a] = sqrt(K (N-K) n (N-n) / (2 pi N a b c d)) exp(stirlerr terms - sum bd0),
//     with cells a = k, b = K-k, c = n-k, d = N-K-n+k. Every cell deviates from its
//     expectation by the same amount (ad - bc)/N, whose numerator is formed exactly in 128-bit
//     integers, so no deviance suffers from a rounded expectation; the four deviances are
//     carried in double-double, one cell per lane (deviance_lanes).
//  2. A tail is summed from k outward, away from the mean, by the ratio recurrence of
//     consecutive masses (MassRatios); the pmf is log-concave, so the ratios fall monotonically
//     and the remainder after a term t with ratio r is at most t r / (1 - r): the sum stops
//     once that bound is below 2^-60 of the partial sum.
//  3. Only the smaller tail is summed directly; the larger one is its complement, which loses
//     no relative accuracy and keeps cdf + sf = 1 to one rounding.
// The double-double deviance (relative error about 2^-64) leaves log P an absolute error of
// about one unit of double however deep the tail, so log forms stay accurate when the value
// itself underflows. See docs/hypergeometric.md for the error analysis and the measured accuracy.
//
// Parameters are int64 counts valid up to 2^53; callers validate them (check_hypergeometric).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string_view>
#include <type_traits>

#if defined(__AVX__)
#include <immintrin.h>
#endif

#include <ltt/detail/check.hpp>
#include <ltt/detail/double_double.hpp>
#include <ltt/detail/exp_kernel.hpp>
#include <ltt/detail/int128.hpp>
#include <ltt/detail/log_factorial_table.hpp>
#include <ltt/detail/saddle_point.hpp>

// -Wpsabi: see <ltt/detail/double_double.hpp>.
#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wunknown-warning-option"
#pragma clang diagnostic ignored "-Wpsabi"
#endif

namespace ltt::detail {

inline void check_hypergeometric(std::string_view function, std::int64_t N, std::int64_t K,
                                 std::int64_t n) {
  require_count(function, "N", N);
  require_count(function, "K", K);
  require_count(function, "n", n);
  require_at_most(function, "K", K, "N", N);
  require_at_most(function, "n", n, "N", N);
}

// A hypergeometric law with its support [lo, hi] precomputed.
struct Hypergeometric {
  std::int64_t N, K, n, lo, hi;
  Hypergeometric(std::int64_t N_, std::int64_t K_, std::int64_t n_)
      : N(N_), K(K_), n(n_), lo(n_ - (N_ - K_) > 0 ? n_ - (N_ - K_) : 0), hi(n_ < K_ ? n_ : K_) {}

  // k below the mean nK/N, decided exactly.
  bool below_mean(std::int64_t k) const {
    return static_cast<int128>(k) * N < static_cast<int128>(K) * n;
  }

  // The mode floor((n + 1)(K + 1) / (N + 2)), formed exactly, clamped to the support.
  std::int64_t mode() const {
    const int128 product = static_cast<int128>(n + 1) * (K + 1);
    return std::clamp<std::int64_t>(static_cast<std::int64_t>(product / (N + 2)), lo, hi);
  }
};

enum class Direction { down, up };

// The ratios of consecutive masses, stepped outward from k by one j per call of next() until
// the end of the support (more() is then false):
//   down: P[j-1]/P[j] = j d / ((b+1)(c+1)),   up: P[j+1]/P[j] = b c / ((j+1)(d+1)),
// with the cells b = K-j, c = n-j, d = N-K-n+j of the table at j, starting at j = k. Each
// ratio is x y / (u v) whose factors move by one per step, exactly: all are integers below 2^53.
// The direction is a template parameter: with a runtime direction, composition_pvalue on small
// selections ran about 5% slower than with loops specialised to it (bench/pvalue.bench.cpp, dsrl).
// The state of MassRatios at its start, shared with the batch of composition_pvalues, which
// steps several such recurrences at once (<ltt/detail/tail_lanes.hpp>).
struct RatioStart {
  double x, y, u, v;
  std::int64_t remaining;
};

inline RatioStart ratio_start(const Hypergeometric& h, std::int64_t k, Direction direction) {
  const std::int64_t d = h.N - h.K - h.n + k;
  const bool down = direction == Direction::down;
  return {static_cast<double>(down ? k : h.K - k), static_cast<double>(down ? d : h.n - k),
          static_cast<double>(down ? h.K - k + 1 : k + 1),
          static_cast<double>(down ? h.n - k + 1 : d + 1), down ? k - h.lo : h.hi - k};
}

template <Direction D>
class MassRatios {
 public:
  MassRatios(const Hypergeometric& h, std::int64_t k) {
    const RatioStart s = ratio_start(h, k, D);
    x_ = s.x, y_ = s.y, u_ = s.u, v_ = s.v, remaining_ = s.remaining;
  }

  bool more() const { return remaining_ > 0; }

  double next() {
    const double r = (x_ * y_) / (u_ * v_);
    x_ -= 1.0, y_ -= 1.0, u_ += 1.0, v_ += 1.0;
    --remaining_;
    return r;
  }

 private:
  double x_, y_, u_, v_;
  std::int64_t remaining_;
};

// log P[X = k] and P[X = k] for lo <= k <= hi with lo < hi (every margin is then >= 1).
struct PointMass {
  long double log;  // to a few units of double in absolute terms (long double holds its digits)
  double value;     // 0 or subnormal only when the true value is below DBL_MIN
};

constexpr double log_sqrt_2pi = 0.918938533204672741780329736406;

// log of the square-root prefactor sqrt(K (N-K) n (N-n) / (N a b c d)), over the non-empty
// cells only, with the 1/sqrt(2 pi) of each empty cell added back (log 0! = 0).
inline double table_log_root(const Hypergeometric& h, std::int64_t k) {
  const std::int64_t a = k, b = h.K - k, c = h.n - k, d = h.N - h.K - h.n + k;
  const double Nt = static_cast<double>(h.N), Kt = static_cast<double>(h.K);
  const double nt = static_cast<double>(h.n);
  const double Kc = static_cast<double>(h.N - h.K), nc = static_cast<double>(h.N - h.n);
  double denominator = Nt;
  int empty = 0;
  for (std::int64_t cell : {a, b, c, d}) {
    if (cell == 0)
      ++empty;
    else
      denominator *= static_cast<double>(cell);
  }
  return 0.5 * std::log(Kt * Kc * nt * nc / denominator) + empty * log_sqrt_2pi;
}

// The nine stirlerr of the saddle point: the four margins added, N and the four cells
// subtracted. Eight of them run four to a vector (stirlerr_lanes), the ninth alone.
inline double table_stirlerr(const Hypergeometric& h, std::int64_t k) {
  const std::int64_t b = h.K - k, c = h.n - k, d = h.N - h.K - h.n + k;
  auto f = [](std::int64_t x) { return static_cast<double>(x); };
  const Four margins = stirlerr_lanes(Four{f(h.K), f(h.N - h.K), f(h.n), f(h.N - h.n)});
  const Four cells = stirlerr_lanes(Four{f(h.N), f(k), f(b), f(c)});
  return ((margins[0] + margins[1]) + (margins[2] + margins[3])) -
         (((cells[0] + cells[1]) + (cells[2] + cells[3])) + stirlerr(f(d)));
}

// P[X = k] for N <= log_factorial_limit, from the split table of log(n!):
//   log P = log K! + log (N-K)! + log n! + log (N-n)! - log N! - log a! - log b! - log c! - log d!.
// The nine his are multiples of 2^-32 below 2^15, so their sum is exact in double however much
// it cancels (log N! ~ 3e4 against log P ~ -1); the nine los (each below 2^-33) add with an
// error near 2^-82. So log P is exact to about 1e-24 absolute, and P = exp(hi) (1 + lo) is
// within an ulp or two of exp's rounding (lo^2 / 2 < 6e-19 is dropped) at any magnitude.
// table_log_mass gives hi and lo; composition_pvalues takes their exp across cases.
struct SplitLog {
  double hi, lo;
};

inline SplitLog table_log_mass(const Hypergeometric& h, std::int64_t k) {
  auto at = [](std::int64_t x) { return log_factorial_table[static_cast<std::size_t>(x)]; };
  const LogFactorial m[4] = {at(h.K), at(h.N - h.K), at(h.n), at(h.N - h.n)};
  const LogFactorial c[5] = {at(h.N), at(k), at(h.K - k), at(h.n - k), at(h.N - h.K - h.n + k)};
  const double hi = ((m[0].hi + m[1].hi) + (m[2].hi + m[3].hi)) -
                    (((c[0].hi + c[1].hi) + (c[2].hi + c[3].hi)) + c[4].hi);
  const double lo = ((m[0].lo + m[1].lo) + (m[2].lo + m[3].lo)) -
                    (((c[0].lo + c[1].lo) + (c[2].lo + c[3].lo)) + c[4].lo);
  return {hi, lo};
}

// exp(hi) by exp_kernel (below one ulp; the same bits in composition_pvalues' lanes), or by
// std::exp where the result is subnormal.
inline double table_exp(double hi) {
  return hi >= exp_kernel_min ? exp_kernel(hi) : std::exp(hi);
}

inline PointMass point_mass_by_table(const Hypergeometric& h, std::int64_t k) {
  const SplitLog l = table_log_mass(h, k);
  const double e = table_exp(l.hi);
  return {static_cast<long double>(l.hi) + static_cast<long double>(l.lo), std::fma(e, l.lo, e)};
}

// An int128 as a double-double, exactly for |D| < 2^106 (every D = ad - bc of a table).
inline DoubleDouble<double> to_double_double(int128 D) {
  constexpr std::int64_t limit = std::int64_t{1} << 62;
  if (D > -limit && D < limit) {  // the common case, without libgcc's 128-bit conversions
    const auto d = static_cast<std::int64_t>(D);
    const auto hi = static_cast<double>(d);
    return {hi, static_cast<double>(d - static_cast<std::int64_t>(hi))};
  }
  const auto hi = static_cast<double>(D);
  return {hi, static_cast<double>(D - static_cast<int128>(hi))};
}

// The total deviance of the table at k in double-double: the four cells' bd0, one per lane of
// deviance_lanes, with the common deviation D / N formed to about 2^-104 (a - E[a] = d - E[d]
// = D/N = -(b - E[b]) = -(c - E[c])).
inline DoubleDouble<double> table_deviance_double_double(const Hypergeometric& h,
                                                         std::int64_t k, int128 D) {
  const double Nt = static_cast<double>(h.N);
  const DoubleDouble<double> Dd = to_double_double(D);
  const double q = Dd.hi / Nt;
  const DoubleDouble<double> delta = fast_two_sum(q, (std::fma(-q, Nt, Dd.hi) + Dd.lo) / Nt);
  auto f = [](std::int64_t x) { return static_cast<double>(x); };
  const Four cells = {f(k), f(h.K - k), f(h.n - k), f(h.N - h.K - h.n + k)};
  const Four sign = {1.0, -1.0, -1.0, 1.0};
  const DoubleDouble<Four> bd0 = deviance_lanes(cells, {sign * delta.hi, sign * delta.lo});
  const DoubleDouble<double> ab = two_sum(bd0.hi[0], bd0.hi[1]), cd = two_sum(bd0.hi[2], bd0.hi[3]);
  const DoubleDouble<double> total = two_sum(ab.hi, cd.hi);
  const double lo =
      (total.lo + (ab.lo + cd.lo)) + ((bd0.lo[0] + bd0.lo[1]) + (bd0.lo[2] + bd0.lo[3]));
  return fast_two_sum(total.hi, lo);
}

// P[X = k] through the saddle point, the deviances in double-double, so that log P carries an
// absolute error of a few units of double whatever its size: a mass of 1e-300 keeps its
// relative accuracy, its log its digits to e^-1e5 and beyond; the value is exp(hi) (1 + lo).
// Precise and not (a tail only wanted for its complement) are now the same path: a cheaper one
// for the complement would break cdf + sf = 1 to one rounding.
template <bool Precise>
inline PointMass point_mass_by_saddle_point(const Hypergeometric& h, std::int64_t k) {
  const int128 D =
      static_cast<int128>(k) * (h.N - h.K - h.n + k) - static_cast<int128>(h.K - k) * (h.n - k);
  const double stir = table_stirlerr(h, k);
  const DoubleDouble<double> total = table_deviance_double_double(h, k, D);
  const DoubleDouble<double> base = two_sum(stir + table_log_root(h, k), -log_sqrt_2pi);
  const DoubleDouble<double> sum = two_sum(base.hi, -total.hi);
  const DoubleDouble<double> log_value = fast_two_sum(sum.hi, (sum.lo + base.lo) - total.lo);
  const double e = table_exp(log_value.hi);
  return {static_cast<long double>(log_value.hi) + static_cast<long double>(log_value.lo),
          std::fma(e, log_value.lo, e)};
}

// P[X = k]: from the table of log(n!) while N is within it (the faster and the more accurate
// of the two), else through the saddle point.
template <bool Precise>
inline PointMass point_mass(const Hypergeometric& h, std::int64_t k) {
  if (h.N <= log_factorial_limit) return point_mass_by_table(h, k);
  return point_mass_by_saddle_point<Precise>(h, k);
}

// A tail as its head mass times the sum of the terms relative to the head. The log is formed
// only when asked for: a plain cdf or p-value never needs it, and its libm log was 10% of a
// composition_pvalue call.
struct TailSum {
  long double head_log;
  double relative_sum;
  double value;
  long double log() const { return head_log + static_cast<long double>(std::log(relative_sum)); }
};

// The stopping rule of a tail sum: the remainder bound below 2^-60 of the partial sum.
inline constexpr double tail_tolerance = 0x1p-60;

// Sum of P[X = j] from j = start outward to the support end, by the ratios of consecutive
// masses. The ratios are independent of one another: they are formed four at a time, in one
// vector division, with MassRatios' operations lane by lane (the same doubles). The products
// and the sum stay one step at a time, in order (the operations of composition_pvalues' lanes,
// <ltt/detail/tail_lanes.hpp>, which return these bits); the stopping rule is tested on the
// four steps of a block at once and the sum taken at the first step that meets it, the same
// step and the same sum as a test after every step, with one branch per block instead of four
// (9% less time in the loop on bench_pvalue's large workload, whose tails run to about 46
// steps). Past the support end the ratios are 0 exactly (one of x, y is 0), so a block's steps
// beyond it add nothing and meet the rule.
template <bool Precise, Direction D>
inline TailSum outward_tail(const Hypergeometric& h, std::int64_t start) {
  const PointMass head = point_mass<Precise>(h, start);
  const RatioStart s = ratio_start(h, start, D);
  const Four offset = {0.0, 1.0, 2.0, 3.0}, one = offset * 0.0 + 1.0;
  Four x = s.x - offset, y = s.y - offset, u = s.u + offset, v = s.v + offset;
  double sum = 1.0, term = 1.0;  // relative to the head
  for (std::int64_t left = s.remaining; left > 0; left -= 4) {
    const Four r = (x * y) / (u * v);
    x -= 4.0, y -= 4.0, u += 4.0, v += 4.0;
    Four terms, sums;
    for (int i = 0; i < 4; ++i) {
      term *= r[i];
      sum += term;
      terms[i] = term, sums[i] = sum;
    }
    const auto stop = terms * r <= tail_tolerance * sums * (one - r);
#if defined(__AVX__)
    const int stops = _mm256_movemask_pd(reinterpret_cast<__m256d>(stop));
    if (stops != 0) {
      sum = sums[__builtin_ctz(static_cast<unsigned>(stops))];
      break;
    }
#else
    if (stop[0] | stop[1] | stop[2] | stop[3]) {
      int i = 0;
      while (!stop[i]) ++i;
      sum = sums[i];
      break;
    }
#endif
  }
  TailSum tail{head.log, sum, head.value * sum};
  // Below DBL_MIN the head alone may have lost digits to gradual underflow: rebuild from logs.
  if (head.value < std::numeric_limits<double>::min())
    tail.value = static_cast<double>(std::exp(tail.log()));
  return tail;
}

enum class Tail { lower, upper };

// P[X <= k] (lower) or P[X > k] (upper) for lo <= k < hi, as value or log. The smaller of the
// two tails is always summed directly and the larger is one minus it (log1p(-t) for logs), so
// cdf + sf = 1 up to one rounding and a small tail never comes out of a subtraction. The
// tail on the side of k away from the mean is tried first; it is the smaller one unless it
// exceeds one half (k near the mean, or skewed laws such as K = 1), and only then is the
// other side summed as well.
template <bool Log>
inline double tail_probability(const Hypergeometric& h, std::int64_t k, Tail want) {
  const bool lower_is_direct = h.below_mean(k);
  auto sum_side = [&](bool lower, auto precise) {
    constexpr bool P = decltype(precise)::value;
    return lower ? outward_tail<P, Direction::down>(h, k)
                 : outward_tail<P, Direction::up>(h, k + 1);
  };
  auto small = [](const TailSum& t) { return Log ? static_cast<double>(t.log()) : t.value; };
  auto large = [](const TailSum& t) { return Log ? std::log1p(-t.value) : 1.0 - t.value; };
  const bool want_direct = (want == Tail::lower) == lower_is_direct;
  // When the direct side is only needed for a plain complement, double precision suffices:
  // the long-double path matters only when it is tiny, and then 1 - s rounds to the same.
  const TailSum s = (want_direct || Log) ? sum_side(lower_is_direct, std::true_type{})
                                         : sum_side(lower_is_direct, std::false_type{});
  if (s.value <= 0.5) return want_direct ? small(s) : large(s);
  const TailSum t = sum_side(!lower_is_direct, std::true_type{});
  return want_direct ? large(t) : small(t);
}

// The public tails: validate, answer k outside the support exactly, else sum.
template <bool Log>
inline double checked_tail(std::string_view function, std::int64_t k, std::int64_t N,
                           std::int64_t K, std::int64_t n, Tail want) {
  check_hypergeometric(function, N, K, n);
  const Hypergeometric h(N, K, n);
  const double none = Log ? -std::numeric_limits<double>::infinity() : 0.0;
  const double all = Log ? 0.0 : 1.0;
  if (k < h.lo) return want == Tail::lower ? none : all;
  if (k >= h.hi) return want == Tail::lower ? all : none;
  return tail_probability<Log>(h, k, want);
}

}  // namespace ltt::detail

#if defined(__clang__)
#pragma clang diagnostic pop
#endif
