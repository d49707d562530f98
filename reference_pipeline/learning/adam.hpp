#pragma once
// Adam's hyperparameters (Kingma and Ba 2015) with PyTorch's defaults and the paper's learning
// rate (appendix "Hyperparameters": 3e-4). Every backend applies the update exactly as
// torch.optim.Adam does (no weight decay, no AMSGrad), with t the step count from 1:
//   m <- b1 m + (1 - b1) g,   v <- b2 v + (1 - b2) g^2,
//   p <- p - (lr / (1 - b1^t)) * m / (sqrt(v) / sqrt(1 - b2^t) + eps).

#include <string_view>

namespace ltt::learning {

struct AdamOptions {
  double learning_rate = 3e-4;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double epsilon = 1e-8;
};

// Throws std::invalid_argument naming the field unless lr > 0, betas in [0, 1), eps >= 0.
void check_adam(std::string_view function, const AdamOptions& adam);

}  // namespace ltt::learning
