// ltt's functions over xtensor arrays (docs/install.md, "xtensor"): the library headers take
// plain counts and probabilities and know nothing of xtensor, and xt::vectorize broadcasts them
// as they are, numpy-style and lazily; a CompositionPvalueTable row is adapted without a copy.
// Every element is checked bit for bit against the scalar call, so this example is a test too
// (ctest: examples.xtensor_broadcast); built when CMake finds xtensor (Debian's xtensor-dev).

#include <array>
#include <bit>
#include <cstdint>
#include <cstdio>
#include <span>
#include <stdexcept>

#include <xtensor/xadapt.hpp>
#include <xtensor/xbuilder.hpp>
#include <xtensor/xtensor.hpp>
#include <xtensor/xvectorize.hpp>

#include <ltt/ltt.hpp>

namespace {

int failures = 0;

void same_bits(double got, double want, const char* what, std::size_t i, std::size_t j = 0) {
  if (std::bit_cast<std::uint64_t>(got) == std::bit_cast<std::uint64_t>(want)) return;
  std::printf("%s(%zu, %zu): %.17g from the array, %.17g from the scalar call\n", what, i, j, got,
              want);
  ++failures;
}

}  // namespace

int main() {
  // [docs/install.md: xtensor]
  // P[X <= k] for k = 0..3 (a row) and n = 10, 20 draws (a column): shape (2, 4).
  const xt::xtensor<std::int64_t, 1> k = xt::arange<std::int64_t>(0, 4);
  const xt::xtensor<std::int64_t, 2> n = {{10}, {20}};
  const auto cdf = xt::vectorize(&ltt::hypergeometric_cdf);
  const xt::xtensor<double, 2> p = cdf(k, 100, 30, n);  // evaluated on assignment

  // Composition p-values of a selection of 400 at alpha = 0.25: k unsafe among m draws.
  const xt::xtensor<std::int64_t, 2> m = {{40}, {60}, {80}};
  const auto pvalue = xt::vectorize(&ltt::composition_pvalue);
  const xt::xtensor<double, 2> pv = pvalue(k, m, 400, 0.25);  // shape (3, 4)

  // The certification rate of a pool of 1000 whose first step holds 100 (5 unsafe), per budget.
  const xt::xtensor<std::int64_t, 1> budgets = {20, 40, 80, 160};
  const auto rate = xt::vectorize(&ltt::certification_rate);
  const xt::xtensor<double, 1> r = rate(1000, 100, 5, budgets, 0.25, 0.1);

  // A row of the p-value table is a span over the table's own storage: adapt it, no copy.
  const ltt::CompositionPvalueTable table(400, 0.25, 40);
  const std::span<const double> row = table.row(40);  // k = 0..40 at m = 40
  const std::array shape{row.size()};
  const auto adapted = xt::adapt(row.data(), row.size(), xt::no_ownership(), shape);
  // [docs/install.md: xtensor]

  for (std::size_t i = 0; i < n.shape(0); ++i)
    for (std::size_t j = 0; j < k.size(); ++j)
      same_bits(p(i, j), ltt::hypergeometric_cdf(k(j), 100, 30, n(i, 0)), "cdf", i, j);
  for (std::size_t i = 0; i < m.shape(0); ++i)
    for (std::size_t j = 0; j < k.size(); ++j)
      same_bits(pv(i, j), ltt::composition_pvalue(k(j), m(i, 0), 400, 0.25), "composition_pvalue",
                i, j);
  for (std::size_t i = 0; i < budgets.size(); ++i)
    same_bits(r(i), ltt::certification_rate(1000, 100, 5, budgets(i), 0.25, 0.1),
              "certification_rate", i);
  if (adapted.data() != row.data() || adapted.size() != 41) {
    std::printf("the adapted row is not the table's storage\n");
    ++failures;
  }
  for (std::size_t j = 0; j < adapted.size(); ++j)
    same_bits(adapted(j), table(static_cast<std::int64_t>(j), 40), "table row 40", j);

  // Impossible parameters throw where the element is evaluated, naming the parameter.
  try {
    const xt::xtensor<double, 1> bad = cdf(k, 100, 300, 10);
    std::printf("K = 300 > N = 100 did not throw\n");
    ++failures;
  } catch (const std::invalid_argument& e) {
    std::printf("cdf(k, 100, 300, 10) throws: %s\n", e.what());
  }

  std::printf("p(1, 2) = %.17g = hypergeometric_cdf(2, 100, 30, 20)\n", p(1, 2));
  std::printf("certification rate at budgets 20, 40, 80, 160: %.6f %.6f %.6f %.6f\n", r(0), r(1),
              r(2), r(3));
  std::printf("%s\n",
              failures == 0 ? "every element equals the scalar call, bit for bit" : "MISMATCH");
  return failures == 0 ? 0 : 1;
}
