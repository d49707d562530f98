#pragma once
// Gradients checked against central differences: the relative error of an analytic derivative,
// and its worst over every parameter of a network (tests of learning/ and behavior/).

#include <learning/eigen_mlp.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace ltt_test {

// |analytic - numeric| / max(1e-3, |numeric|): relative where the derivative is not small.
inline double relative_error(double analytic, double numeric) {
  return std::abs(analytic - numeric) / std::max(1e-3, std::abs(numeric));
}

// The worst relative_error over the parameters of `mlp` between the gradient `loss()` leaves in
// mlp.gradient() and central differences of loss()'s value (step 1e-5).
template <class Loss>
double worst_relative_error(ltt::learning::EigenMlp<double>& mlp, Loss loss) {
  loss();
  const std::vector<double> analytic(mlp.gradient().begin(), mlp.gradient().end());
  const double h = 1e-5;
  double worst = 0.0;
  auto p = mlp.parameters();
  for (std::size_t i = 0; i < p.size(); ++i) {
    const double saved = p[i];
    p[i] = saved + h;
    const double up = loss();
    p[i] = saved - h;
    const double down = loss();
    p[i] = saved;
    worst = std::max(worst, relative_error(analytic[i], (up - down) / (2 * h)));
  }
  return worst;
}

}  // namespace ltt_test
