#pragma once
// Log binomial coefficients, log beta functions and the prior of the sequential p-values in
// long double, for the tests that compute their posteriors straight from the definitions.

#include <cmath>
#include <cstddef>
#include <cstdint>

#include <ltt/sequential_pvalue.hpp>

namespace ltt_test {

inline long double log_choose(std::int64_t n, std::int64_t r) {
  return std::lgamma(static_cast<long double>(n + 1)) -
         std::lgamma(static_cast<long double>(r + 1)) -
         std::lgamma(static_cast<long double>(n - r + 1));
}

inline long double log_beta(long double x, long double y) {
  return std::lgamma(x) + std::lgamma(y) - std::lgamma(x + y);
}

// The prior's mass at U = u: sum_i w_i BetaBin(u; N, a_i, b_i).
inline long double prior_mass(std::int64_t N, std::int64_t u, const ltt::BetaMixturePrior& prior) {
  long double mass = 0.0L;
  for (std::size_t i = 0; i < prior.components.size(); ++i) {
    const long double a = prior.components[i].a, b = prior.components[i].b;
    mass +=
        prior.weights[i] * std::exp(log_choose(N, u) + log_beta(u + a, N - u + b) - log_beta(a, b));
  }
  return mass;
}

}  // namespace ltt_test
