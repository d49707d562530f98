// Argument checks for AdamOptions (adam.hpp).

#include "learning/adam.hpp"

#include "learning/detail/check.hpp"

#include <cmath>

namespace ltt::learning {

void check_adam(std::string_view function, const AdamOptions& adam) {
  using detail::invalid;
  using detail::show;
  if (!(std::isfinite(adam.learning_rate) && adam.learning_rate > 0.0))
    invalid(function, "adam.learning_rate", show(adam.learning_rate), "must be finite and > 0");
  if (!(adam.beta1 >= 0.0 && adam.beta1 < 1.0))
    invalid(function, "adam.beta1", show(adam.beta1), "must lie in [0, 1)");
  if (!(adam.beta2 >= 0.0 && adam.beta2 < 1.0))
    invalid(function, "adam.beta2", show(adam.beta2), "must lie in [0, 1)");
  if (!(std::isfinite(adam.epsilon) && adam.epsilon >= 0.0))
    invalid(function, "adam.epsilon", show(adam.epsilon), "must be finite and >= 0");
}

}  // namespace ltt::learning
