#pragma once
// Double-double arithmetic: a number carried as hi + lo, two doubles with |lo| <= ulp(hi)/2, about
// 106 bits, written once for T = double and for T = Four, four doubles of a GCC/Clang vector
// whose lanes each do what a double would (one IEEE rounding per operation). The hypergeometric
// saddle point (<ltt/detail/hypergeometric_tail.hpp>) forms the deviances of its four cells this
// way, one cell per lane, where x87 long double used to be: logl, log1pl, expl and a series loop
// on the x87 stack were 40% of a composition_pvalue call on bench_pvalue's large workload.
//
// The error-free transformations are Knuth's two_sum, Dekker's fast_two_sum and the FMA product;
// every product whose rounding error matters goes through an explicit FMA, so a compiler that
// contracts a * b + c into an FMA (GCC's default in GNU modes) cannot change them: each product
// p = a * b below also feeds an FMA, which keeps GCC from fusing it elsewhere.

#include <bit>
#include <cmath>
#include <cstdint>

#if defined(__FMA__)
#include <immintrin.h>
#endif

#include <ltt/detail/log_table.hpp>

// Four is four doubles whatever the target: without AVX, GCC and Clang warn (-Wpsabi, an error
// under -Werror) that passing or returning one has another ABI than with AVX, which cannot
// matter to these inline functions. Clang warns at the calls, so the headers that pass Four
// silence it for their own lines; GCC warns at the end of the file (below).
#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wunknown-warning-option"
#pragma clang diagnostic ignored "-Wpsabi"
#elif defined(__GNUC__) && !defined(__AVX__)
// GCC checks the ABI of these functions at the end of the including file, where a push/pop
// pair would have restored the warning: without AVX it stays off for the rest of the file.
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

namespace ltt::detail {

using Four = double __attribute__((vector_size(32)));
using FourBits = std::int64_t __attribute__((vector_size(32)));

// Each operation below is written twice, for double and for Four, as overloads rather than one
// template, and those on Four are always inlined (nothing is gained by calling them).

// a b + c rounded once, on a double or lane by lane.
inline double fma_lanes(double a, double b, double c) { return std::fma(a, b, c); }

__attribute__((always_inline)) inline Four fma_lanes(Four a, Four b, Four c) {
#if defined(__FMA__)
  return reinterpret_cast<Four>(_mm256_fmadd_pd(
      reinterpret_cast<__m256d>(a), reinterpret_cast<__m256d>(b), reinterpret_cast<__m256d>(c)));
#else
  Four r = a;
  for (int l = 0; l < 4; ++l) r[l] = std::fma(a[l], b[l], c[l]);
  return r;
#endif
}

template <class T>
struct DoubleDouble {
  T hi, lo;
};

// a + b = s + e exactly, for any a, b (Knuth).
inline DoubleDouble<double> two_sum(double a, double b) {
  const double s = a + b;
  const double bb = s - a;
  return {s, (a - (s - bb)) + (b - bb)};
}

__attribute__((always_inline)) inline DoubleDouble<Four> two_sum(Four a, Four b) {
  const Four s = a + b;
  const Four bb = s - a;
  return {s, (a - (s - bb)) + (b - bb)};
}

// a + b = s + e exactly, for |a| >= |b| or a = 0 (Dekker).
inline DoubleDouble<double> fast_two_sum(double a, double b) {
  const double s = a + b;
  return {s, b - (s - a)};
}

__attribute__((always_inline)) inline DoubleDouble<Four> fast_two_sum(Four a, Four b) {
  const Four s = a + b;
  return {s, b - (s - a)};
}

// a b = p + e exactly.
inline DoubleDouble<double> two_prod(double a, double b) {
  const double p = a * b;
  return {p, std::fma(a, b, -p)};
}

__attribute__((always_inline)) inline DoubleDouble<Four> two_prod(Four a, Four b) {
  const Four p = a * b;
  return {p, fma_lanes(a, b, -p)};
}

// a / b to about 2^-104 relative, with one division: q = a.hi (1 / b.hi) is within an ulp or two
// of the quotient, the remainder a - q b is formed by an FMA (exactly, or rounded at 2^-53 of
// itself, about 2^-105 of a), and the correction is the remainder times 1 / b.hi.
__attribute__((always_inline)) inline DoubleDouble<Four> divide(DoubleDouble<Four> a,
                                                                DoubleDouble<Four> b) {
  const Four reciprocal = 1.0 / b.hi;
  const Four q = a.hi * reciprocal;
  const Four remainder = (fma_lanes(-q, b.hi, a.hi) + a.lo) - q * b.lo;
  return fast_two_sum(q, remainder * reciprocal);
}

// log y, lane by lane, for positive normal doubles y, and of y (1 + t) for |t| <= 2^-52 through
// the first-order term t. y = 2^e m with m in [sqrt(1/2), sqrt(2)); m is taken to the nearest
// point c = 1 + j/128 of a grid, whose inv ~ 1/c and -log(inv) the table holds
// (scripts/log_table.py); then
//   log y = e log 2 - log(inv) + log1p(r),   r = m inv - 1,   |r| <= 2^-7.4,
// with r formed exactly (m inv = P + E by an FMA, P - 1 exact by Sterbenz's lemma) and log1p(r)
// = r - r^2/2 + r^3 p(r), p the Taylor polynomial 1/3 - r/4 + ... - r^7/10 (truncation below
// 2^-74 r), r and r^2/2 carried in double-double. The error is below about 2^-70 |log y| + 2^-74
// (2^-68 relative measured worst against a 113-bit log over 2e6 points).
// Always inlined, for the reason given at deviance_lanes (<ltt/detail/saddle_point.hpp>).
__attribute__((always_inline)) inline DoubleDouble<Four> log_double_double(Four y, Four t) {
  // m = y / 2^e in [sqrt(1/2), sqrt(2)): subtract the bits of sqrt(1/2) to read e off.
  constexpr std::int64_t sqrt_half_bits = 0x3fe6a09e667f3bcd;
  constexpr double shifter = 0x1.8p52;  // adding it leaves round(x) in the low bits of x
  using Unsigned = std::uint64_t __attribute__((vector_size(32)));
  const FourBits bits = reinterpret_cast<FourBits>(y);
  // e = floor((bits - sqrt_half_bits) / 2^52), by a logical shift of a positive offset (AVX2
  // has no arithmetic shift of 64-bit lanes).
  constexpr std::int64_t offset = (std::int64_t{1023} << 52) - sqrt_half_bits;
  const FourBits e =
      reinterpret_cast<FourBits>(reinterpret_cast<Unsigned>(bits + offset) >> 52) - 1023;
  const Four m = reinterpret_cast<Four>(bits - (e << 52));
  // e as a double, and j = round((m - 1) 128) in [-38, 53], by the shifter.
  const Four ed = reinterpret_cast<Four>(e + std::bit_cast<std::int64_t>(shifter)) - shifter;
  const FourBits j = reinterpret_cast<FourBits>((m - 1.0) * 128.0 + shifter) -
                     std::bit_cast<std::int64_t>(shifter);
  Four inv, minus_log_hi, minus_log_lo;
  for (int l = 0; l < 4; ++l) {
    const LogTableEntry& entry = log_table[j[l] + 64 - log_table_first];
    inv[l] = entry.inv, minus_log_hi[l] = entry.minus_log_hi, minus_log_lo[l] = entry.minus_log_lo;
  }
  const DoubleDouble<Four> product = two_prod(m, inv);
  const DoubleDouble<Four> r = fast_two_sum(product.hi - 1.0, product.lo);
  const DoubleDouble<Four> square = two_prod(r.hi, r.hi);
  // p by Estrin's scheme: three levels of FMAs instead of a chain of seven.
  const Four x = r.hi, x2 = square.hi, x4 = x2 * x2, zero = x - x;
  const Four p01 = fma_lanes(zero - 1.0 / 4, x, zero + 1.0 / 3);
  const Four p23 = fma_lanes(zero - 1.0 / 6, x, zero + 1.0 / 5);
  const Four p45 = fma_lanes(zero - 1.0 / 8, x, zero + 1.0 / 7);
  const Four p67 = fma_lanes(zero - 1.0 / 10, x, zero + 1.0 / 9);
  const Four p = fma_lanes(fma_lanes(p67, x2, p45), x4, fma_lanes(p23, x2, p01));
  // log1p(r) = (r.hi - square.hi / 2) + [r.lo - square.lo / 2 - r.hi r.lo + r^3 p(r)]
  const DoubleDouble<Four> head = two_sum(r.hi, -0.5 * square.hi);
  const Four tail = ((r.lo - 0.5 * square.lo) - r.hi * r.lo) + square.hi * r.hi * p;
  // e log 2: log2_hi has 42 significant bits, so e log2_hi is exact for every |e| < 2^11.
  constexpr double log2_hi = 0x1.62e42fefa3800p-1, log2_lo = 0x1.ef35793c7673p-45;
  const DoubleDouble<Four> big = two_sum(ed * log2_hi, minus_log_hi);
  const DoubleDouble<Four> sum = two_sum(big.hi, head.hi);
  const Four lo = ((big.lo + sum.lo) + (head.lo + tail)) + ((ed * log2_lo + minus_log_lo) + t);
  return fast_two_sum(sum.hi, lo);
}

}  // namespace ltt::detail

#if defined(__clang__)
#pragma clang diagnostic pop
#endif
