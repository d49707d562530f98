// Uses both installed libraries through their umbrella headers.
#include <cmath>
#include <cstdio>

#include <curation/curation.hpp>
#include <ltt/ltt.hpp>

int main() {
  // 2 unsafe among 40 calibration draws from a 400-trajectory selection, alpha = 0.25.
  const double p = ltt::composition_pvalue(2, 40, 400, 0.25);
  std::printf("composition_pvalue(2, 40, 400, 0.25) = %.17g\n", p);
  return std::isfinite(p) && p >= 0.0 && p <= 1.0 ? 0 : 1;
}
