#pragma once
// The Lagrange multiplier of PPO-Lagrangian, updated by a PID controller on the constraint's
// error (Stooke, Achiam and Abbeel 2020, "Responsive safety in reinforcement learning by PID
// Lagrangian methods"), exactly as FSRL's LagrangianOptimizer.step does it
// (fsrl/utils/optim_util.py) once per epoch, before the policy update, on the epoch's mean
// episodic cost J against the cost limit d (LagrangianPolicy.pre_update_fn):
//
//   e = J - d,   D = max(0, e - e_previous),   I <- max(0, I + e),   e_previous <- e,
//   lambda = max(0, K_P e + K_I I + K_D D).
//
// The integral is clamped at 0 (it never stores credit for being under the limit), and the
// derivative term counts only rises of the error; FSRL smooths neither the error nor its
// difference. All three start at 0, so the first update's derivative is e itself when e > 0. Gains:
// FSRL's and DSRL's lagrangian_pid = (0.05, 0.0005, 0.1) (DSRL scripts/train_ppol_v1.py).

namespace ltt::behavior {

struct PidGains {
  double proportional = 0.05, integral = 0.0005, derivative = 0.1;
};

class PidLagrangian {
 public:
  // Throws std::invalid_argument naming 'gains.proportional' etc. unless each is finite and >= 0.
  explicit PidLagrangian(const PidGains& gains = {});

  // One update with the epoch's cost `value` against `limit`; returns the new multiplier.
  double update(double value, double limit);

  double multiplier() const { return multiplier_; }
  double integral() const { return integral_; }
  double previous_error() const { return previous_error_; }
  const PidGains& gains() const { return gains_; }

 private:
  PidGains gains_;
  double previous_error_ = 0, integral_ = 0, multiplier_ = 0;
};

}  // namespace ltt::behavior
