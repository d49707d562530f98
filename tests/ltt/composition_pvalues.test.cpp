// composition_pvalues (the batch): every element the scalar composition_pvalue to the bit, on
// the exact rational table tests/reference/pvalue_table.csv and on random workloads shaped
// like bench_pvalue's (DSRL-sized selections, and laws up to N = 1e12 that take the scalar
// path), with p >= exact on every reference row.

#include <doctest/doctest.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <ltt/composition_pvalues.hpp>
#include <ltt/pvalue.hpp>

#include "../support/reference_csv.hpp"
#include "../support/throws.hpp"

namespace {

// Bit-for-bit equality with the scalar call; returns the number of cases that differ.
int bits_differ(const std::vector<ltt::CompositionCase>& cases) {
  std::vector<double> out(cases.size(), -1.0);
  ltt::composition_pvalues(cases, out);
  int differ = 0;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const auto& c = cases[i];
    const double single = ltt::composition_pvalue(c.k, c.m, c.N_sel, c.alpha);
    if (std::memcmp(&single, &out[i], sizeof single) != 0 && differ++ < 5)
      MESSAGE("case " << i << ": k=" << c.k << " m=" << c.m << " N_sel=" << c.N_sel
                      << " alpha=" << c.alpha << " batch " << out[i] << " single " << single);
  }
  return differ;
}

}  // namespace

TEST_CASE("composition_pvalues equals composition_pvalue on the exact reference rows") {
  const auto rows = ltt_test::read_reference("pvalue_table.csv");
  REQUIRE(rows.size() > 3000);
  std::vector<ltt::CompositionCase> cases;
  std::vector<long double> exact;
  for (const auto& r : rows) {
    cases.push_back({r.integer("k"), r.integer("m"), r.integer("N_sel"), std::stod(r.text("alpha"))});
    exact.push_back(r.number("p"));
  }
  CHECK(bits_differ(cases) == 0);
  std::vector<double> out(cases.size());
  ltt::composition_pvalues(cases, out);
  for (std::size_t i = 0; i < cases.size(); ++i)
    CHECK_MESSAGE(static_cast<long double>(out[i]) >= exact[i], "row " << i);
}

TEST_CASE("composition_pvalues equals composition_pvalue on random workloads") {
  std::mt19937_64 rng(20261207);
  std::vector<ltt::CompositionCase> dsrl(20000), large(2000), mixed;
  const double alphas[] = {0.25, 0.1, 0.3, 0.05};
  for (auto& c : dsrl) {  // bench_pvalue's dsrl workload, with several alphas and m up to N_sel
    c.N_sel = std::uniform_int_distribution<std::int64_t>(0, 1500)(rng);
    c.m = std::uniform_int_distribution<std::int64_t>(0, std::min<std::int64_t>(c.N_sel, 80))(rng);
    c.k = std::uniform_int_distribution<std::int64_t>(0, c.m)(rng);
    c.alpha = alphas[rng() % 4];
  }
  std::uniform_real_distribution<double> logN(std::log(1e3), std::log(1e12));
  for (auto& c : large) {  // both sides of the table limit (N_sel = 4096)
    c.N_sel = static_cast<std::int64_t>(std::exp(logN(rng)));
    c.m = std::uniform_int_distribution<std::int64_t>(0, std::min<std::int64_t>(c.N_sel, 3000))(rng);
    c.k = std::uniform_int_distribution<std::int64_t>(0, c.m)(rng);
    c.alpha = alphas[rng() % 4];
  }
  CHECK(bits_differ(dsrl) == 0);
  CHECK(bits_differ(large) == 0);
  mixed = dsrl;
  mixed.insert(mixed.begin() + 777, large.begin(), large.end());
  CHECK(bits_differ(mixed) == 0);
  // Whole rows, where the deep tails reach below DBL_MIN (rebuilt from logs) and k = m.
  std::vector<ltt::CompositionCase> rows;
  for (std::int64_t N : {1, 2, 60, 4096, 4097})
    for (std::int64_t m = 0; m <= std::min<std::int64_t>(N, 4096); m += 1 + m / 7)
      for (std::int64_t k = 0; k <= m; k += 1 + k / 5) rows.push_back({k, m, N, 0.25});
  CHECK(bits_differ(rows) == 0);
  CHECK(bits_differ({}) == 0);
}

TEST_CASE("composition_pvalues names the parameter and the case it rejects") {
  std::vector<double> out(3);
  const std::vector<ltt::CompositionCase> bad_k = {{1, 10, 100, 0.25}, {2, 10, 100, 0.25},
                                                   {11, 10, 100, 0.25}};
  try {
    ltt::composition_pvalues(bad_k, out);
    FAIL("k > m was accepted");
  } catch (const std::invalid_argument& e) {
    CHECK(std::string(e.what()) ==
          "composition_pvalues (case 2): parameter 'k' = 11 must not exceed m = 10");
  }
  const ltt::CompositionCase c = {1, 10, 100, 0.25};
  std::vector<double> one(1);
  using Cases = std::vector<ltt::CompositionCase>;
  ltt_test::check_throws_naming([&] { ltt::composition_pvalues(Cases{{-1, 10, 100, 0.25}}, one); }, "k");
  ltt_test::check_throws_naming([&] { ltt::composition_pvalues(Cases{{1, 101, 100, 0.25}}, one); }, "m");
  ltt_test::check_throws_naming([&] { ltt::composition_pvalues(Cases{{1, 10, -5, 0.25}}, one); }, "N_sel");
  ltt_test::check_throws_naming(
      [&] { ltt::composition_pvalues(Cases{{1, 10, 100, ltt_test::not_a_number}}, one); }, "alpha");
  ltt_test::check_throws_naming([&] { ltt::composition_pvalues(Cases{c, c}, out); }, "out");
}
