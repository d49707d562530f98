// Lemma "super-uniformity" tested, not assumed: for every selection size N_sel <= 60, every
// null count U >= floor(alpha N_sel) + 1 and every number of draws m, the exact probability
// that the library's floating-point composition p-value is <= delta, under k ~ Hyp(N_sel, U,
// m), is at most delta. The probability is an exact integer count over C(N_sel, m), and the
// comparison with delta uses delta's exact binary value, so neither side is rounded.

#include <ltt/detail/int128.hpp>
#include <ltt/pvalue.hpp>

#include <doctest/doctest.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

namespace {

using ltt::detail::uint128;

constexpr std::int64_t max_population = 60;  // C(60, 30) < 2^57 fits every count below

using BinomialTable = std::array<std::array<std::uint64_t, max_population + 1>, max_population + 1>;

BinomialTable binomials() {
  BinomialTable C{};
  for (std::size_t a = 0; a <= max_population; ++a) {
    C[a][0] = 1;
    for (std::size_t b = 1; b <= a; ++b) C[a][b] = C[a - 1][b - 1] + C[a - 1][b];
  }
  return C;
}

const BinomialTable choose = binomials();

std::uint64_t C(std::int64_t a, std::int64_t b) {
  if (b < 0 || b > a) return 0;
  return choose[static_cast<std::size_t>(a)][static_cast<std::size_t>(b)];
}

// delta = mantissa / 2^shift exactly (delta in (0, 1) is a dyadic rational).
struct Dyadic {
  std::uint64_t mantissa = 0;
  int shift = 0;
};

Dyadic exact_binary(double delta) {
  int exponent = 0;
  const double fraction = std::frexp(delta, &exponent);  // delta = fraction * 2^exponent
  Dyadic d{static_cast<std::uint64_t>(std::ldexp(fraction, 53)), 53 - exponent};
  while (d.mantissa % 2 == 0 && d.shift > 0) {
    d.mantissa /= 2;
    --d.shift;
  }
  return d;
}

// count / total <= delta, decided exactly: count * 2^shift <= mantissa * total. The right side
// is below 2^53 * 2^57 = 2^110; a left side of 2^110 or more (count >= 1 with a large shift)
// is therefore larger, and anything smaller fits 128 bits.
bool at_most(std::uint64_t count, std::uint64_t total, const Dyadic& delta) {
  if (count == 0) return true;
  if (std::bit_width(count) - 1 + delta.shift >= 110) return false;
  return (uint128{count} << delta.shift) <= uint128{delta.mantissa} * total;
}

// alpha as the decimal a user types, numerator / denominator; the double is their quotient.
struct DecimalAlpha {
  std::uint64_t numerator;
  std::uint64_t denominator;
  double value() const { return static_cast<double>(numerator) / static_cast<double>(denominator); }
};

constexpr DecimalAlpha alphas[] = {
    {1, 10},
    {1, 4},
    {3, 10},
    {1, 2},
    {1, 20},
    {15, 100},
    {7, 10},
    {9, 10},
    {3333333333333333, 10000000000000000},  // 1/3 as it prints: 0.3333333333333333
};

constexpr double deltas[] = {0.001,  0.01,   0.05, 0.1,   0.2,  0.5,             // round
                             0.0123, 0.0371, 0.07, 0.137, 0.25, 1.0 / 3.0, 0.9,  // odd
                             0.999,  0.0001};

}  // namespace

TEST_CASE("composition_pvalue: null boundary is floor(alpha N_sel) + 1 for the typed alpha") {
  for (const auto& a : alphas)
    for (std::int64_t N = 1; N <= max_population; ++N) {
      const auto expected =
          static_cast<std::int64_t>(uint128{a.numerator} * static_cast<std::uint64_t>(N) /
                                    a.denominator) +
          1;
      INFO("alpha = ", a.value(), " N_sel = ", N);
      CHECK(ltt::null_boundary(N, a.value()) == expected);
    }
}

TEST_CASE("composition_pvalue: the exact hypergeometric CDF, rounded up (exact rationals)") {
  // F(k) = sum_{j <= k} C(U*, j) C(N - U*, m - j) / C(N, m), summed in integers. pvalue.hpp
  // promises p >= F exactly (checked as F <= p in integers, below) and p <= F (1 + 4e-14);
  // the worst relative excess is reported in units of epsilon.
  constexpr double eps = std::numeric_limits<double>::epsilon();
  double worst_ulps = 0.0;
  std::string worst_case;
  for (const auto& a : alphas) {
    const double alpha = a.value();
    for (std::int64_t N = 1; N <= max_population; ++N) {
      const std::int64_t U = ltt::null_boundary(N, alpha);
      for (std::int64_t m = 0; m <= N; ++m) {
        const std::uint64_t total = C(N, m);
        std::uint64_t cumulative = 0;
        for (std::int64_t k = 0; k <= m; ++k) {
          cumulative += C(U, k) * C(N - U, m - k);
          const double p = ltt::composition_pvalue(k, m, N, alpha);
          if (cumulative == 0) {
            CHECK(p == 0.0);
            continue;
          }
          if (cumulative == total) {
            CHECK(p == 1.0);
            continue;
          }
          if (!at_most(cumulative, total, exact_binary(p))) {
            INFO("p below the exact CDF: alpha = ", alpha, " N_sel = ", N, " m = ", m, " k = ", k,
                 ": p = ", p, ", F = ", cumulative, " / ", total);
            CHECK(false);
          }
          // Both integers are below 2^64, so long double holds them exactly and the quotient
          // to 2^-64 relative, far below the tolerance.
          const long double exact =
              static_cast<long double>(cumulative) / static_cast<long double>(total);
          const double ulps =
              static_cast<double>(std::fabs((static_cast<long double>(p) - exact) / exact)) / eps;
          if (ulps > worst_ulps) {
            worst_ulps = ulps;
            worst_case = "alpha = " + std::to_string(alpha) + " N_sel = " + std::to_string(N) +
                         " m = " + std::to_string(m) + " k = " + std::to_string(k);
          }
        }
      }
    }
  }
  INFO("worst relative error ", worst_ulps, " eps at ", worst_case);
  CHECK(worst_ulps * eps <= 4e-14);
}

namespace {

// The p-values the software would use, for k = 0..m: composition_pvalue one at a time, or
// a row of CompositionPvalueTable; both must be super-uniform.
enum class Source { function, table };

std::vector<double> pvalue_row(Source source, std::int64_t m, std::int64_t N, double alpha) {
  std::vector<double> p(static_cast<std::size_t>(m + 1));
  if (source == Source::table) {
    const ltt::CompositionPvalueTable table(N, alpha, m);
    const auto row = table.row(m);
    p.assign(row.begin(), row.end());
  } else {
    for (std::int64_t k = 0; k <= m; ++k)
      p[static_cast<std::size_t>(k)] = ltt::composition_pvalue(k, m, N, alpha);
  }
  return p;
}

std::string source_name(Source source) {
  return source == Source::table ? "CompositionPvalueTable" : "composition_pvalue";
}

// Count, exactly, the m-subsets of a selection of N with U unsafe whose k has p_k <= delta.
std::uint64_t rejecting_subsets(const std::vector<double>& p, double delta, std::int64_t N,
                                std::int64_t U) {
  const auto m = static_cast<std::int64_t>(p.size()) - 1;
  std::uint64_t count = 0;
  for (std::int64_t k = 0; k <= m; ++k)
    if (p[static_cast<std::size_t>(k)] <= delta) count += C(U, k) * C(N - U, m - k);
  return count;
}

// Violations found, with the first few spelled out so a failure can be checked by hand.
struct Violations {
  std::int64_t count = 0;
  std::string examples;
  void add(const std::string& what) {
    if (++count <= 5) examples += "\n  " + what;
  }
};

std::string describe(Source source, double alpha, std::int64_t N, std::int64_t U, std::int64_t m,
                     double delta, std::uint64_t count, std::uint64_t total) {
  char delta_text[32];
  std::snprintf(delta_text, sizeof delta_text, "%.17g", delta);
  return source_name(source) + ": alpha = " + std::to_string(alpha) +
         " N_sel = " + std::to_string(N) + " U = " + std::to_string(U) +
         " m = " + std::to_string(m) + " delta = " + delta_text +
         ": Pr[p <= delta] = " + std::to_string(count) + " / " + std::to_string(total);
}

}  // namespace

TEST_CASE("composition_pvalue: super-uniform under every null, exactly") {
  // For each (alpha, N_sel, m) the p-values of every k are computed once by the library;
  // then for every U in [U*, N_sel] and every delta, the number of m-subsets whose k gives
  // p <= delta is counted exactly and compared with delta * C(N_sel, m).
  std::vector<Dyadic> exact_deltas;
  for (const double delta : deltas) exact_deltas.push_back(exact_binary(delta));

  for (const Source source : {Source::function, Source::table}) {
    std::int64_t checked = 0;
    double worst_ratio = 0.0;  // max over all cases of Pr[p <= delta] / delta (as double)
    std::string worst_case;
    Violations violations;
    for (const auto& a : alphas) {
      const double alpha = a.value();
      for (std::int64_t N = 1; N <= max_population; ++N) {
        const std::int64_t U_star = ltt::null_boundary(N, alpha);
        for (std::int64_t m = 0; m <= N; ++m) {
          const auto p = pvalue_row(source, m, N, alpha);
          const std::uint64_t total = C(N, m);
          for (std::int64_t U = U_star; U <= N; ++U) {
            for (std::size_t d = 0; d < exact_deltas.size(); ++d) {
              const std::uint64_t count = rejecting_subsets(p, deltas[d], N, U);
              ++checked;
              const double ratio =
                  static_cast<double>(count) / static_cast<double>(total) / deltas[d];
              if (ratio > worst_ratio) {
                worst_ratio = ratio;
                worst_case = describe(source, alpha, N, U, m, deltas[d], count, total);
              }
              if (!at_most(count, total, exact_deltas[d]))
                violations.add(describe(source, alpha, N, U, m, deltas[d], count, total));
            }
          }
        }
      }
    }
    INFO(source_name(source), ": ", checked, " cases; worst Pr[p <= delta] / delta = ", worst_ratio,
         " at ", worst_case);
    INFO("NOT super-uniform in ", violations.count, " cases:", violations.examples);
    CHECK(checked > 1000000);
    CHECK(violations.count == 0);
  }
}

TEST_CASE("composition_pvalue: super-uniform at delta equal to an attainable p-value") {
  // The lemma holds for every delta in (0, 1); the hardest deltas are the p-values the test
  // can return. At delta = p(k0) the least-favorable null U* rejects with probability at
  // least F(k0), so super-uniformity at every double delta needs every returned p-value to be
  // at or above its exact CDF value: a p-value rounded to nearest fails by an ulp whenever
  // F(k0) is not a double and rounds down (F = 1/3 as 0.333...3148 < 1/3), which is why
  // pvalue.hpp rounds up.
  for (const Source source : {Source::function, Source::table}) {
    std::int64_t checked = 0;
    Violations violations;
    for (const auto& a : alphas) {
      const double alpha = a.value();
      for (std::int64_t N = 1; N <= max_population; ++N) {
        const std::int64_t U_star = ltt::null_boundary(N, alpha);
        for (std::int64_t m = 1; m <= N; ++m) {
          const auto p = pvalue_row(source, m, N, alpha);
          const std::uint64_t total = C(N, m);
          for (const double delta : p) {
            if (!(delta > 0.0 && delta < 1.0)) continue;
            const Dyadic exact_delta = exact_binary(delta);
            for (const std::int64_t U : {U_star, U_star + 1}) {
              if (U > N) continue;
              const std::uint64_t count = rejecting_subsets(p, delta, N, U);
              ++checked;
              if (!at_most(count, total, exact_delta))
                violations.add(describe(source, alpha, N, U, m, delta, count, total));
            }
          }
        }
      }
    }
    INFO(source_name(source), ": ", checked, " cases");
    INFO("NOT super-uniform in ", violations.count, " cases:", violations.examples);
    CHECK(checked > 100000);
    CHECK(violations.count == 0);
  }
}
