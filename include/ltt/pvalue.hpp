#pragma once
// Composition p-values (paper, section 4.3 and Lemma "super-uniformity").
//
// H0 for a selection of N_sel trajectories: it holds more than alpha N_sel unsafe ones, i.e.
// U >= U* = floor(alpha N_sel) + 1. If m calibration draws landed in the selection and k of
// them are unsafe, then under the least favourable null k ~ Hyp(N_sel, U*, m), and
//     p = F_hyp(k; N_sel, U*, m) = P[Hyp(N_sel, U*, m) <= k]
// is super-uniform: P[p <= delta] <= delta under every U >= U*, for every m.
//
//   null_boundary(N_sel, alpha)          U* = floor(alpha N_sel) + 1, exactly
//   composition_pvalue(k, m, N_sel, alpha)
//   CompositionPvalueTable(N_sel, alpha, m_max)   every p-value for k <= m <= m_max at once
//
// The rule for floor(alpha N_sel): alpha is taken to be the decimal number it prints as, the
// shortest decimal that reads back as the same double (std::to_chars). alpha = 0.3 is 3/10,
// not 0.299999999999999988897769753748, so alpha = 0.3 with N_sel = 10 allows 3 unsafe
// (U* = 4); alpha = 0.25 with N_sel = 400 gives U* = 101. The product is then formed in exact
// integer arithmetic. This matches what a user who types alpha means, and it is never less
// conservative than the certificate's own statement "at most alpha N_sel unsafe".

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <span>
#include <system_error>
#include <vector>

#include <ltt/detail/check.hpp>
#include <ltt/detail/hypergeometric_tail.hpp>
#include <ltt/detail/int128.hpp>

namespace ltt {

namespace detail {

// alpha as its shortest round-trip decimal, digits / power with power = 10^s; power = 0 when
// s >= 34, where digits * N / 10^s < 1 for every N <= 2^53 (digits < 10^17).
struct ShortestDecimal {
  int128 digits = 0, power = 0;
};

inline ShortestDecimal shortest_decimal(double alpha) {
  char buf[40];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, alpha, std::chars_format::scientific);
  if (ec != std::errc{}) invalid("null_boundary", "alpha", show(alpha), "could not be printed");
  // buf holds "d[.ddd]e-XX": collect the digits and the decimal exponent.
  int128 digits = 0;
  int fraction_digits = 0;
  const char* p = buf;
  bool after_point = false;
  for (; p < end && *p != 'e'; ++p) {
    if (*p == '.') {
      after_point = true;
      continue;
    }
    digits = digits * 10 + (*p - '0');
    if (after_point) ++fraction_digits;
  }
  int exponent = 0;
  std::from_chars(p + 1, end, exponent);  // "e-05" -> -5 (from_chars accepts the sign)
  // alpha = digits * 10^(exponent - fraction_digits), a negative power since alpha < 1.
  const int scale = fraction_digits - exponent;
  // digits < 10^17 and N <= 2^53 < 10^16: the product is below 10^33, so floor is 0 past that.
  if (scale >= 34) return {digits, 0};
  int128 power = 1;
  for (int i = 0; i < scale; ++i) power *= 10;
  return {digits, power};
}

// floor(alpha * N) by the decimal of alpha, for the products near an integer (below).
__attribute__((noinline)) inline std::int64_t floor_decimal_product_exactly(double alpha,
                                                                           std::int64_t N) {
  // Near an integer the decimal decides. A loop over N with one alpha (a walk, a sweep) comes
  // here whenever alpha N is a whole number (every fourth N at alpha = 0.25), and printing
  // alpha was 15% of a composition_pvalue call on bench_pvalue's dsrl workload: the last
  // alpha's decimal is kept, per thread. 0 is never a valid alpha, and its decimal is 0 / 0.
  thread_local double cached_alpha = 0.0;
  thread_local ShortestDecimal cached{};
  if (alpha != cached_alpha) {
    cached = shortest_decimal(alpha);
    cached_alpha = alpha;
  }
  if (cached.power == 0) return 0;
  return static_cast<std::int64_t>(cached.digits * N / cached.power);
}

// floor(alpha * N) for alpha in (0, 1) read as its shortest round-trip decimal a / 10^s.
inline std::int64_t floor_decimal_product(double alpha, std::int64_t N) {
  // Fast path: the decimal lies within half an ulp of alpha and the product x below is within
  // half an ulp of alpha N, so both exact products are within 2^-52 x of x; when x is farther
  // than 2^-50 x + 2^-1022 from every integer, they share its floor. Inlined (the exact path
  // is not): a call was 4% of a composition_pvalue call on bench_pvalue's large workload.
  const double x = alpha * static_cast<double>(N);
  const double f = std::floor(x);
  const double margin = 0x1p-50 * x + 0x1p-1022;
  if (x - f > margin && f + 1.0 - x > margin) return static_cast<std::int64_t>(f);
  return floor_decimal_product_exactly(alpha, N);
}

// A p-value is valid only if it is never below the exact one: super-uniformity is a statement
// about exact values, and a p-value one ulp below an attainable exact value (0.8 computed as
// 0.79999999999999993, 1/3 as the double below it) would be rejected at a delta the exact one
// is not. The computed tails carry a relative error below 64 DBL_EPSILON (measured worst about
// 18, tests/ltt/hypergeometric.test.cpp), so every composition p-value is rounded up by the
// factor 1 + 2^-45 (128 DBL_EPSILON): at least the exact value, at most 4e-14 above it.
// Exact 0 and 1 stay exact; tests/ltt/pvalue.test.cpp checks p >= exact on every reference row.
inline double round_up_pvalue(double p) {
  constexpr double inflation = 1.0 + 0x1p-45;
  return p <= 0.0 ? 0.0 : std::min(1.0, p * inflation);
}

inline void check_composition(std::string_view function, std::int64_t k, std::int64_t m,
                              std::int64_t N_sel, double alpha) {
  require_count(function, "N_sel", N_sel);
  require_count(function, "m", m);
  require_at_most(function, "m", m, "N_sel", N_sel);
  require_count(function, "k", k);
  require_at_most(function, "k", k, "m", m);
  require_open_unit(function, "alpha", alpha);
}

}  // namespace detail

// U* = floor(alpha N_sel) + 1, the smallest unsafe count in the selection that violates the
// target. Always in [1, N_sel] for N_sel >= 1 since alpha < 1.
inline std::int64_t null_boundary(std::int64_t N_sel, double alpha) {
  detail::require_count("null_boundary", "N_sel", N_sel);
  detail::require_open_unit("null_boundary", "alpha", alpha);
  return detail::floor_decimal_product(alpha, N_sel) + 1;
}

// p = F_hyp(k; N_sel, floor(alpha N_sel) + 1, m), rounded up (never below the exact value, at
// most 4e-14 above it; see round_up_pvalue). k unsafe among m calibration draws inside a
// selection of N_sel; 0 <= k <= m <= N_sel. With m = 0 the test has no evidence and p = 1.
inline double composition_pvalue(std::int64_t k, std::int64_t m, std::int64_t N_sel, double alpha) {
  detail::check_composition("composition_pvalue", k, m, N_sel, alpha);
  const std::int64_t U = detail::floor_decimal_product(alpha, N_sel) + 1;
  if (U > N_sel) return 1.0;  // N_sel = 0: an empty selection cannot be certified
  const detail::Hypergeometric h(N_sel, U, m);
  if (k < h.lo) return 0.0;
  if (k >= h.hi) return 1.0;
  return detail::round_up_pvalue(detail::tail_probability<false>(h, k, detail::Tail::lower));
}

// Every composition p-value of one selection size: p(k, m) for 0 <= k <= m <= m_max, filled a
// row (fixed m) at a time, with no call to the saddle point at all:
//  - each row is anchored at its mode by the one-more-draw identity
//      P_{m+1}(k) = [P_m(k) (N - K - m + k) + P_m(k-1) (K - k + 1)] / (N - m),
//    a sum of two positive terms, so errors do not grow beyond a few long-double units a row;
//  - from the mode, masses move outward by the ratio of consecutive masses in k. The ratios
//    are independent of one another, so they are formed first in a loop the compiler
//    vectorises, each as a double-double from exact FMA products of integer factors; only
//    the running product is sequential, carried in long double;
//  - each p-value is the prefix sum P[X <= k] of positive long-double terms, accurate to a
//    few long-double units whether it is tiny or close to one, then rounded up like
//    composition_pvalue.
// Accuracy matches composition_pvalue and the exact references (tests/ltt/pvalue.test.cpp).
class CompositionPvalueTable {
 public:
  CompositionPvalueTable(std::int64_t N_sel, double alpha, std::int64_t m_max)
      : N_sel_(N_sel), m_max_(m_max), alpha_(alpha) {
    constexpr std::string_view fn = "CompositionPvalueTable";
    detail::require_count(fn, "N_sel", N_sel);
    detail::require_count(fn, "m_max", m_max);
    detail::require_at_most(fn, "m_max", m_max, "N_sel", N_sel);
    detail::require_open_unit(fn, "alpha", alpha);
    U_ = detail::floor_decimal_product(alpha, N_sel) + 1;
    values_.resize(static_cast<std::size_t>((m_max + 1) * (m_max + 2) / 2));
    if (U_ > N_sel_) {  // N_sel = 0: an empty selection cannot be certified
      std::fill(values_.begin(), values_.end(), 1.0);
      return;
    }
    Scratch s(m_max);
    s.previous[0] = 1.0L;  // P_0(0) = 1
    fill_row(0, s);
    for (std::int64_t m = 1; m <= m_max; ++m) {
      std::swap(s.previous, s.current);
      fill_row(m, s);
    }
  }

  std::int64_t N_sel() const { return N_sel_; }
  std::int64_t m_max() const { return m_max_; }
  double alpha() const { return alpha_; }
  std::int64_t null_boundary() const { return U_; }

  // p-values for k = 0, ..., m.
  std::span<const double> row(std::int64_t m) const {
    if (m < 0 || m > m_max_)
      detail::invalid("CompositionPvalueTable::row", "m", detail::show(m),
                      "must lie in [0, m_max = " + detail::show(m_max_) + "]");
    return {values_.data() + offset(m), static_cast<std::size_t>(m + 1)};
  }

  double operator()(std::int64_t k, std::int64_t m) const {
    const std::span<const double> r = row(m);
    if (k < 0 || k > m)
      detail::invalid("CompositionPvalueTable", "k", detail::show(k),
                      "must lie in [0, m = " + detail::show(m) + "]");
    return r[static_cast<std::size_t>(k)];
  }

 private:
  struct Scratch {
    explicit Scratch(std::int64_t m_max)
        : a(static_cast<std::size_t>(m_max + 2)),
          b(a.size()),
          up_hi(a.size()),
          up_lo(a.size()),
          down_hi(a.size()),
          down_lo(a.size()) {}
    std::vector<long double> a, b;  // masses of the previous and current row, by k
    long double* previous = a.data();
    long double* current = b.data();
    std::vector<double> up_hi, up_lo;      // P(j+1)/P(j) as double-double
    std::vector<double> down_hi, down_lo;  // P(j)/P(j+1)
  };

  static std::size_t offset(std::int64_t m) { return static_cast<std::size_t>(m * (m + 1) / 2); }

  // x*y / (u*v) as hi + lo with |error| ~ 2^-100 relative: the products are exact through FMA.
  static void exact_ratio(double x, double y, double u, double v, double& hi, double& lo) {
    const double a = x * y, a_err = std::fma(x, y, -a);
    const double b = u * v, b_err = std::fma(u, v, -b);
    const double r = a / b;
    hi = r;
    lo = (std::fma(-r, b, a) + a_err - r * b_err) / b;
  }

  void fill_row(std::int64_t m, Scratch& s) {
    double* out = values_.data() + offset(m);
    const detail::Hypergeometric h(N_sel_, U_, m);
    const std::int64_t mode = h.mode();
    long double* mass = s.current;
    if (m == 0) {
      mass[0] = 1.0L;
    } else {  // one-more-draw identity from row m - 1 (whose masses are zero off its support)
      const detail::Hypergeometric g(N_sel_, U_, m - 1);
      const auto k = mode;
      const long double stay =
          (k >= g.lo && k <= g.hi)
              ? s.previous[k] * static_cast<long double>(N_sel_ - U_ - (m - 1) + k)
              : 0.0L;
      const long double step = (k - 1 >= g.lo && k - 1 <= g.hi)
                                   ? s.previous[k - 1] * static_cast<long double>(U_ - k + 1)
                                   : 0.0L;
      mass[k] = (stay + step) / static_cast<long double>(N_sel_ - (m - 1));
    }
    // Ratios for j in [lo, hi): P(j+1)/P(j) = (K - j)(m - j) / ((j + 1)(N - K - m + j + 1)).
    const double K = static_cast<double>(U_), md = static_cast<double>(m);
    const double d1 = static_cast<double>(N_sel_ - U_ - m + 1);
    for (std::int64_t j = h.lo; j < mode; ++j) {
      const double jd = static_cast<double>(j);
      exact_ratio(jd + 1.0, d1 + jd, K - jd, md - jd, s.down_hi[j], s.down_lo[j]);
    }
    for (std::int64_t j = mode; j < h.hi; ++j) {
      const double jd = static_cast<double>(j);
      exact_ratio(K - jd, md - jd, jd + 1.0, d1 + jd, s.up_hi[j], s.up_lo[j]);
    }
    for (std::int64_t j = mode; j > h.lo; --j)
      mass[j - 1] = mass[j] * (static_cast<long double>(s.down_hi[j - 1]) + s.down_lo[j - 1]);

    // p(k) = P[X <= k] as a prefix sum of positive long-double terms: accurate for every k,
    // small or close to one, so no complement is needed. Above the mode the masses are
    // produced in the same pass.
    for (std::int64_t k = 0; k < h.lo; ++k) out[k] = 0.0;
    for (std::int64_t k = h.hi; k <= m; ++k) out[k] = 1.0;
    long double F = 0.0L;
    for (std::int64_t k = h.lo; k < mode; ++k)
      out[k] = detail::round_up_pvalue(static_cast<double>(F += mass[k]));
    long double x = mass[mode];
    for (std::int64_t k = mode; k < h.hi; ++k) {
      out[k] = detail::round_up_pvalue(static_cast<double>(F += x));
      x *= static_cast<long double>(s.up_hi[k]) + s.up_lo[k];
      mass[k + 1] = x;
    }
    // Zeros just outside the support keep the next row's identity exact.
    if (h.lo > 0) mass[h.lo - 1] = 0.0L;
    mass[h.hi + 1] = 0.0L;
  }

  std::int64_t N_sel_, m_max_;
  double alpha_;
  std::int64_t U_ = 0;
  std::vector<double> values_;
};

}  // namespace ltt
