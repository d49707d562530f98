// Observation normalization (normalization.hpp).

#include "learning/normalization.hpp"

#include "learning/detail/data.hpp"

#include <cmath>
#include <string>

namespace ltt::learning {

using detail::invalid;
using detail::show;

ObservationNormalization observation_normalization(std::span<const float> observations,
                                                   std::int64_t obs_dim) {
  constexpr std::string_view fn = "ltt::learning::observation_normalization";
  if (obs_dim < 1) invalid(fn, "obs_dim", show(obs_dim), "must be at least 1");
  const auto d = static_cast<std::size_t>(obs_dim);
  if (observations.empty() || observations.size() % d != 0)
    invalid(fn, "observations.size()", show(detail::ssize(observations.size())),
            "must be a positive multiple of obs_dim = " + show(obs_dim));
  const auto rows = static_cast<double>(observations.size() / d);
  ObservationNormalization z;
  z.mean.assign(d, 0.0);
  z.scale.assign(d, 0.0);
  for (std::size_t i = 0; i < observations.size(); ++i) z.mean[i % d] += observations[i];
  for (double& m : z.mean) m /= rows;
  for (std::size_t i = 0; i < observations.size(); ++i) {
    const double e = observations[i] - z.mean[i % d];
    z.scale[i % d] += e * e;
  }
  for (double& v : z.scale) {
    const double sd = std::sqrt(v / rows);
    v = sd > 0.0 && std::isfinite(sd) ? sd : 1.0;
  }
  return z;
}

std::vector<float> normalized_rows(std::span<const float> observations,
                                   const ObservationNormalization& z) {
  const std::size_t d = z.mean.size();
  if (d == 0 || z.scale.size() != d || observations.size() % d != 0)
    invalid("ltt::learning::normalized_rows", "observations.size()",
            show(detail::ssize(observations.size())),
            "must be a multiple of the normalization's width " + show(detail::ssize(d)));
  std::vector<float> out(observations.size());
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i] = static_cast<float>((observations[i] - z.mean[i % d]) / z.scale[i % d]);
  return out;
}

}  // namespace ltt::learning
