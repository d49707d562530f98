#pragma once
// One episode of a task, stepped by a policy: what evaluation (pipeline/evaluation.hpp) and
// constrained-RL training step, whatever the task's dynamics. A task class with observation(),
// step() and done() (tasks/*.hpp) becomes one through EnvironmentAdapter.
#include <algorithm>
#include <span>

#include "check.hpp"
#include "episode_log.hpp"

namespace ltt::tasks {

class Environment {
 public:
  virtual ~Environment() = default;
  Environment() = default;
  Environment(const Environment&) = delete;
  Environment& operator=(const Environment&) = delete;
  // Writes the current observation (the task's observation_dim floats).
  virtual void observation(std::span<float> out) const = 0;
  // One step with an action in [-1, 1]^action_dim.
  virtual Step step(std::span<const double> action) = 0;
  virtual bool done() const = 0;
};

// A task class whose constructor takes the episode's seed, as an Environment.
template <class Env>
class EnvironmentAdapter final : public Environment {
 public:
  explicit EnvironmentAdapter(std::uint64_t seed) : env_(seed) {}
  void observation(std::span<float> out) const override {
    const auto o = env_.observation();
    if (out.size() != o.size())
      detail::invalid("Environment::observation", "out",
                      data::cat("must hold observation_dim = ", detail::show(o.size()),
                                " floats; it holds ", detail::show(out.size())));
    std::copy(o.begin(), o.end(), out.begin());
  }
  Step step(std::span<const double> action) override { return env_.step(action); }
  bool done() const override { return env_.done(); }

 private:
  Env env_;
};

}  // namespace ltt::tasks
