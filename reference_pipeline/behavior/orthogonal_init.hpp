#pragma once
// The initial networks of FSRL's PPO-Lagrangian agent (fsrl/agent/ppo_lag_agent.py, and DSRL's
// scripts/train_trpol_expert.py alike): every linear layer's weight orthogonal
// (torch.nn.init.orthogonal_, gain 1), every bias zero.
//
// torch.nn.init.orthogonal_ on an out x in weight: a matrix of standard normal draws, transposed
// when out < in so it is tall; its QR decomposition with the signs of R's diagonal moved into Q
// (so that diagonal is positive); Q, transposed back. The weight then has orthonormal columns
// (out >= in) or rows (out < in). Q with R's diagonal positive is what Gram-Schmidt gives on the
// columns of the tall matrix, so that is how it is computed here: modified Gram-Schmidt in
// double, run twice over each column (Giraud et al. 2005, "twice is enough": orthogonal to
// working precision), then rounded to float32. The draws are tasks::standard_normal's from
// `rng`, layer after layer, each weight's out x in values row-major, so a seed gives the same
// network everywhere.

#include <random>

#include <learning/mlp.hpp>

namespace ltt::behavior {

learning::MlpWeights orthogonal_weights(const learning::MlpShape& shape, std::mt19937_64& rng);

}  // namespace ltt::behavior
