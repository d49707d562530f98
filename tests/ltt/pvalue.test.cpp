// Composition p-values: the exact null boundary, single calls and the batch table against the
// exact rational table tests/reference/pvalue_table.csv (pvalue_table_reference.py).

#include <doctest/doctest.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <functional>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>

#include <ltt/hypergeometric.hpp>
#include <ltt/pvalue.hpp>

#include "../support/reference_csv.hpp"
#include "../support/throws.hpp"

namespace {

constexpr long double pvalue_tolerance = 1e-13L;

}  // namespace

TEST_CASE("null_boundary reads alpha as the decimal it prints as") {
  CHECK(ltt::null_boundary(400, 0.25) == 101);
  CHECK(ltt::null_boundary(10, 0.3) == 4);     // 0.3 * 10 = 2.9999999999999996 in binary
  CHECK(ltt::null_boundary(100, 0.57) == 58);  // 0.57 * 100 = 56.999999999999993 in binary
  CHECK(ltt::null_boundary(100, 0.29) == 30);  // 0.29 * 100 = 28.999999999999996 in binary
  CHECK(ltt::null_boundary(3, 0.1) == 1);
  CHECK(ltt::null_boundary(1000000, 1e-5) == 11);
  CHECK(ltt::null_boundary(7, 1e-300) == 1);
  CHECK(ltt::null_boundary(0, 0.5) == 1);
  CHECK(ltt::null_boundary(std::int64_t{1} << 53, 0.5) == (std::int64_t{1} << 52) + 1);
  CHECK(ltt::null_boundary(std::int64_t{1} << 53, 0.999999) ==
        (std::int64_t{1} << 53) - 9007199255 + 1);  // 2^53 - 9007199254.740992, floored
  // The double just below 0.25 prints as 0.24999999999999997: 99.999999999999988 -> 99.
  CHECK(ltt::null_boundary(400, std::nextafter(0.25, 0.0)) == 100);
  // Every alpha of a fine decimal grid against exact integer arithmetic.
  for (int a = 1; a < 1000; ++a)
    for (std::int64_t N : {1, 7, 10, 99, 400, 1001, 123457}) {
      const double alpha = a / 1000.0;
      CHECK(ltt::null_boundary(N, alpha) == a * N / 1000 + 1);
    }
}

// floor_decimal_product keeps the last alpha's decimal per thread (pvalue.hpp): alternating
// alphas, neighbours one ulp apart among them, and two threads at once must each get their own.
// Every N here is a multiple of 1000, so alpha N is (near) a whole number and the decimal decides.
TEST_CASE("null_boundary: the kept decimal of one alpha never answers for another") {
  const double below = std::nextafter(0.25, 0.0);  // prints as 0.24999999999999997
  auto expected = [below](double alpha, std::int64_t N) -> std::int64_t {
    if (alpha == below) return static_cast<std::int64_t>(
        static_cast<ltt::detail::int128>(24999999999999997) * N / 100000000000000000) + 1;
    return static_cast<std::int64_t>(std::llround(alpha * 1000)) * N / 1000 + 1;
  };
  const double alphas[] = {0.25, below, 0.3, 0.25, 0.57, below, 0.1, 0.001, 0.999, 0.25};
  auto sweep = [&](int offset, int& failures) {
    for (std::int64_t N = 1000; N <= 400000; N += 1000)
      for (std::size_t i = 0; i < std::size(alphas); ++i) {
        const double alpha = alphas[(i + static_cast<std::size_t>(offset)) % std::size(alphas)];
        if (ltt::null_boundary(N, alpha) != expected(alpha, N)) ++failures;
      }
  };
  int here = 0, there = 0;
  std::thread other(sweep, 3, std::ref(there));
  sweep(0, here);
  other.join();
  CHECK(here == 0);
  CHECK(there == 0);
  CHECK(ltt::null_boundary(400, 0.25) == 101);
  CHECK(ltt::null_boundary(400, below) == 100);
}

TEST_CASE("composition p-values match exact rationals") {
  const auto rows = ltt_test::read_reference("pvalue_table.csv");
  REQUIRE(rows.size() > 3000);
  long double worst = 0;
  for (const auto& r : rows) {
    const std::int64_t N = r.integer("N_sel"), m = r.integer("m"), k = r.integer("k");
    const double alpha = std::stod(r.text("alpha"));
    REQUIRE(ltt::null_boundary(N, alpha) == r.integer("U"));
    const long double exact = r.number("p");
    const double p = ltt::composition_pvalue(k, m, N, alpha);
    // Rounded up from the cdf, and never below the exact value (validity of the p-value).
    const double cdf = ltt::hypergeometric_cdf(k, N, r.integer("U"), m);
    CHECK(p >= cdf);
    CHECK(p <= cdf * (1 + 0x1p-45));
    CHECK_MESSAGE(static_cast<long double>(p) >= exact, "k=" << k << " m=" << m << " N_sel=" << N);
    if (exact >= DBL_MIN) {
      const long double e = ltt_test::relative_error(p, exact);
      if (e > worst) worst = e;
      CHECK_MESSAGE(e <= pvalue_tolerance, "k=" << k << " m=" << m << " N_sel=" << N << " p=" << p);
    }
  }
  MESSAGE("composition_pvalue worst relative error: " << static_cast<double>(worst / DBL_EPSILON)
                                                      << " eps");
}

TEST_CASE("CompositionPvalueTable matches exact rationals and single calls") {
  const auto rows = ltt_test::read_reference("pvalue_table.csv");
  std::map<std::pair<std::int64_t, std::string>, std::unique_ptr<ltt::CompositionPvalueTable>>
      tables;
  long double worst = 0;
  for (const auto& r : rows) {
    const std::int64_t N = r.integer("N_sel"), m = r.integer("m"), k = r.integer("k");
    auto& t = tables[{N, r.text("alpha")}];
    if (!t)
      t = std::make_unique<ltt::CompositionPvalueTable>(N, std::stod(r.text("alpha")),
                                                        std::min<std::int64_t>(N, 400));
    REQUIRE(t->null_boundary() == r.integer("U"));
    const long double exact = r.number("p");
    const double p = (*t)(k, m);
    CHECK_MESSAGE(static_cast<long double>(p) >= exact, "k=" << k << " m=" << m << " N_sel=" << N);
    if (exact >= DBL_MIN) {
      const long double e = ltt_test::relative_error(p, exact);
      if (e > worst) worst = e;
      CHECK_MESSAGE(e <= pvalue_tolerance, "k=" << k << " m=" << m << " N_sel=" << N << " p=" << p);
    } else {
      CHECK(p <= DBL_MIN);
    }
  }
  MESSAGE("table worst relative error: " << static_cast<double>(worst / DBL_EPSILON) << " eps");

  // Agreement with one call per entry over DSRL-sized selections, and monotone rows.
  for (std::int64_t N : {150, 333, 750, 5000}) {
    for (double alpha : {0.1, 0.25, 0.4}) {
      const ltt::CompositionPvalueTable t(N, alpha, 120);
      for (std::int64_t m = 0; m <= t.m_max(); ++m) {
        const auto row = t.row(m);
        REQUIRE(row.size() == static_cast<std::size_t>(m + 1));
        for (std::int64_t k = 0; k <= m; ++k) {
          const double single = ltt::composition_pvalue(k, m, N, alpha);
          const double p = row[static_cast<std::size_t>(k)];
          if (k > 0) CHECK(p >= row[static_cast<std::size_t>(k - 1)]);
          CHECK(p <= 1.0);
          if (single >= DBL_MIN)
            CHECK_MESSAGE(ltt_test::relative_error(p, single) <= 2 * pvalue_tolerance,
                          "k=" << k << " m=" << m << " N=" << N);
        }
      }
    }
  }
}

TEST_CASE("composition p-value edges") {
  CHECK(ltt::composition_pvalue(0, 0, 100, 0.25) == 1.0);  // no evidence
  CHECK(ltt::composition_pvalue(0, 0, 0, 0.25) == 1.0);
  // m = N_sel: the whole selection is labeled; p = 0 exactly when k < U*, else 1.
  CHECK(ltt::composition_pvalue(25, 100, 100, 0.25) == 0.0);
  CHECK(ltt::composition_pvalue(26, 100, 100, 0.25) == 1.0);
  // The paper's deployed draws report p for m = 28 ... 42 clean-ish labels; p is a probability.
  for (std::int64_t k = 0; k <= 42; ++k) {
    const double p = ltt::composition_pvalue(k, 42, 600, 0.25);
    CHECK(p >= 0.0);
    CHECK(p <= 1.0);
  }
}

TEST_CASE("composition p-value rejects impossible counts, naming them") {
  ltt_test::check_throws_naming([] { ltt::composition_pvalue(-1, 10, 100, 0.25); }, "k");
  ltt_test::check_throws_naming([] { ltt::composition_pvalue(11, 10, 100, 0.25); }, "k");
  ltt_test::check_throws_naming([] { ltt::composition_pvalue(1, -1, 100, 0.25); }, "m");
  ltt_test::check_throws_naming([] { ltt::composition_pvalue(1, 101, 100, 0.25); }, "m");
  ltt_test::check_throws_naming([] { ltt::composition_pvalue(1, 10, -5, 0.25); }, "N_sel");
  ltt_test::check_throws_naming([] { ltt::composition_pvalue(1, 10, 100, 0.0); }, "alpha");
  ltt_test::check_throws_naming([] { ltt::composition_pvalue(1, 10, 100, 1.0); }, "alpha");
  ltt_test::check_throws_naming([] { ltt::composition_pvalue(1, 10, 100, std::nan("")); }, "alpha");
  ltt_test::check_throws_naming([] { ltt::null_boundary(100, -0.1); }, "alpha");
  ltt_test::check_throws_naming([] { ltt::CompositionPvalueTable(100, 0.25, 101); }, "m_max");
  ltt_test::check_throws_naming([] { ltt::CompositionPvalueTable(100, 0.25, 50).row(51); }, "m");
  ltt_test::check_throws_naming([] { ltt::CompositionPvalueTable(100, 0.25, 50)(6, 5); }, "k");
}

TEST_CASE("messages quote a real value as the shortest decimal that reads back as it") {
  // A user who passed alpha = 1.1 reads 1.1, not 1.1000000000000001.
  try {
    ltt::composition_pvalue(1, 10, 100, 1.1);
    FAIL("alpha = 1.1 was accepted");
  } catch (const std::invalid_argument& e) {
    CHECK(std::string(e.what()).find("parameter 'alpha' = 1.1 ") != std::string::npos);
  }
  CHECK(ltt::detail::show(0.30000000000000004) == "0.30000000000000004");
  CHECK(ltt::detail::show(5e-324) == "5e-324");
}
