// The PID Lagrange multiplier (pid_lagrangian.hpp).

#include "behavior/pid_lagrangian.hpp"

#include <algorithm>
#include <cmath>

#include "behavior/check.hpp"

namespace ltt::behavior {

PidLagrangian::PidLagrangian(const PidGains& gains) : gains_(gains) {
  for (const auto& [name, value] : {std::pair{"gains.proportional", gains.proportional},
                                    std::pair{"gains.integral", gains.integral},
                                    std::pair{"gains.derivative", gains.derivative}})
    if (!(std::isfinite(value) && value >= 0.0))
      detail::invalid("PidLagrangian", name, detail::show(value), "must be finite and >= 0");
}

double PidLagrangian::update(double value, double limit) {
  if (!std::isfinite(value))
    detail::invalid("PidLagrangian::update", "value", detail::show(value), "must be finite");
  if (!std::isfinite(limit))
    detail::invalid("PidLagrangian::update", "limit", detail::show(limit), "must be finite");
  const double error = value - limit;
  const double rise = std::max(0.0, error - previous_error_);
  integral_ = std::max(0.0, integral_ + error);
  previous_error_ = error;
  multiplier_ = std::max(
      0.0, gains_.proportional * error + gains_.integral * integral_ + gains_.derivative * rise);
  return multiplier_;
}

}  // namespace ltt::behavior
