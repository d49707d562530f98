#include "velocity.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>

#include "check.hpp"
#include "mujoco_model.hpp"

namespace ltt::tasks {
namespace {

constexpr double infinity = std::numeric_limits<double>::infinity();

// docs/tasks.md gives the source of every number: Gymnasium 0.28.1's gymnasium/envs/mujoco/
// half_cheetah_v4.py, hopper_v4.py, swimmer_v4.py (observation, frame skip, weights, noise,
// health), its assets/*.xml (timestep), and Safety-Gymnasium's safety_*_velocity_v1.py
// (threshold) and __init__.py (1000 steps); the budget is the paper's.
constexpr std::array<VelocityTaskSpec, 3> specs{{
    {.name = "half-cheetah-velocity",
     .model = "half_cheetah.xml",
     .observation_dim = 17,
     .action_dim = 6,
     .positions_skipped = 1,
     .frame_skip = 5,
     .timestep = 0.01,
     .velocity_threshold = 3.2096,
     .forward_reward_weight = 1.0,
     .healthy_reward = 0.0,
     .control_cost_weight = 0.1,
     .observed_velocity_limit = infinity,
     .reset_noise = VelocityResetNoise::uniform_then_normal,
     .reset_noise_scale = 0.1,
     .health = std::nullopt},
    {.name = "hopper-velocity",
     .model = "hopper.xml",
     .observation_dim = 11,
     .action_dim = 3,
     .positions_skipped = 1,
     .frame_skip = 4,
     .timestep = 0.002,
     .velocity_threshold = 0.7402,
     .forward_reward_weight = 1.0,
     .healthy_reward = 1.0,
     .control_cost_weight = 1e-3,
     .observed_velocity_limit = 10.0,
     .reset_noise = VelocityResetNoise::uniform,
     .reset_noise_scale = 5e-3,
     .health = HealthRule{.z = {0.7, infinity}, .angle = {-0.2, 0.2}, .state = {-100.0, 100.0}}},
    {.name = "swimmer-velocity",
     .model = "swimmer.xml",
     .observation_dim = 8,
     .action_dim = 2,
     .positions_skipped = 2,
     .frame_skip = 4,
     .timestep = 0.01,
     .velocity_threshold = 0.2282,
     .forward_reward_weight = 1.0,
     .healthy_reward = 0.0,
     .control_cost_weight = 1e-4,
     .observed_velocity_limit = infinity,
     .reset_noise = VelocityResetNoise::uniform,
     .reset_noise_scale = 0.1,
     .health = std::nullopt},
}};

std::string velocity_task_names() {
  std::string names;
  for (const VelocityTaskSpec& t : specs) names += data::cat(names.empty() ? "" : ", ", t.name);
  return names;
}

// MuJoCo counts each kind of warning in mjData; any of them means the state is not what the
// task promises (MuJoCo resets a diverged state to qpos0 and goes on).
void refuse_warnings(const mjData& d, std::string_view task, std::int64_t step) {
  for (int w = 0; w < mjNWARNING; ++w) {
    if (d.warning[w].number == 0) continue;
    throw std::runtime_error(data::cat("ltt::tasks::VelocityEnvironment: ", task, " at step ",
                                       detail::show(step), ": MuJoCo warned: ",
                                       mju_warningText(w, d.warning[w].lastinfo)));
  }
}

}  // namespace

std::span<const VelocityTaskSpec> velocity_tasks() { return specs; }

const VelocityTaskSpec& velocity_task(std::string_view name) {
  for (const VelocityTaskSpec& t : specs)
    if (t.name == name) return t;
  detail::invalid("velocity_task", "task", data::cat("\"", name, "\""),
                  data::cat("is not a velocity task (", velocity_task_names(), ")"));
}

struct VelocityEnvironment::Simulation {
  const mjModel& model;
  DataPointer data;
};

namespace {

// The spec against its model, so that a hand-made spec cannot index past MuJoCo's arrays.
void check_spec(const VelocityTaskSpec& t, const mjModel& m) {
  const auto refuse = [&](std::string_view requirement) {
    detail::invalid("VelocityEnvironment", "task", data::cat("\"", t.name, "\""), requirement);
  };
  const std::int64_t nq = m.nq, nv = m.nv, nu = m.nu;
  if (t.positions_skipped < 0 || t.positions_skipped > nq || (t.health && nq < 3))
    refuse(data::cat("skips ", detail::show(t.positions_skipped), " of the model's ",
                     detail::show(nq), " positions"));
  if (t.observation_dim != nq - t.positions_skipped + nv)
    refuse(data::cat("has observation_dim ", detail::show(t.observation_dim), "; its model ",
                     t.model, " observes ", detail::show(nq - t.positions_skipped + nv)));
  if (t.action_dim != nu)
    refuse(data::cat("has action_dim ", detail::show(t.action_dim), "; its model ", t.model,
                     " has ", detail::show(nu), " actuators"));
  if (t.timestep != m.opt.timestep)
    refuse(data::cat("has timestep ", detail::show(t.timestep), "; its model ", t.model, " has ",
                     detail::show(m.opt.timestep)));
  if (t.frame_skip < 1 || t.horizon < 1)
    refuse("must have frame_skip >= 1 and horizon >= 1");
  if (!(t.reset_noise_scale >= 0 && std::isfinite(t.reset_noise_scale)))
    refuse("must have a finite reset_noise_scale >= 0");
}

}  // namespace

VelocityEnvironment::VelocityEnvironment(const VelocityTaskSpec& task, std::uint64_t seed)
    : task_(task) {
  const mjModel& m = mujoco_model(task.model);
  check_spec(task_, m);
  sim_ = std::make_unique<Simulation>(Simulation{m, make_data(m)});
  mjData& d = *sim_->data;
  // Gymnasium's reset_model: init_qpos + U(-s, s) on every position, then the velocities.
  std::mt19937_64 rng(seed);
  const double s = task_.reset_noise_scale;
  for (int i = 0; i < m.nq; ++i) d.qpos[i] = m.qpos0[i] + uniform(rng, -s, s);
  for (int i = 0; i < m.nv; ++i)
    d.qvel[i] = task_.reset_noise == VelocityResetNoise::uniform ? uniform(rng, -s, s)
                                                                   : s * standard_normal(rng);
  // Gymnasium's set_state ends with mj_forward, which computes what the first mj_step reads.
  mj_forward(&m, &d);
  refuse_warnings(d, task_.name, 0);
}

VelocityEnvironment::~VelocityEnvironment() = default;

std::span<const double> VelocityEnvironment::qpos() const {
  return {sim_->data->qpos, static_cast<std::size_t>(sim_->model.nq)};
}

std::span<const double> VelocityEnvironment::qvel() const {
  return {sim_->data->qvel, static_cast<std::size_t>(sim_->model.nv)};
}

void VelocityEnvironment::observation(std::span<float> out) const {
  if (out.size() != static_cast<std::size_t>(task_.observation_dim))
    detail::invalid("VelocityEnvironment::observation", "out",
                    data::cat("must hold observation_dim = ", detail::show(task_.observation_dim),
                              " floats; it holds ", detail::show(out.size())));
  const auto q = qpos().subspan(static_cast<std::size_t>(task_.positions_skipped));
  const auto v = qvel();
  const double limit = task_.observed_velocity_limit;
  std::size_t k = 0;
  for (const double x : q) out[k++] = static_cast<float>(x);
  for (const double x : v) out[k++] = static_cast<float>(std::clamp(x, -limit, limit));
}

bool VelocityEnvironment::healthy() const {
  if (!task_.health) return true;
  const HealthRule& h = *task_.health;
  const auto q = qpos(), v = qvel();
  if (!h.z.contains(q[1]) || !h.angle.contains(q[2])) return false;
  for (std::size_t i = 2; i < q.size(); ++i)
    if (!h.state.contains(q[i])) return false;
  for (const double x : v)
    if (!h.state.contains(x)) return false;
  return true;
}

Step VelocityEnvironment::step(std::span<const double> action) {
  if (done_)
    throw std::logic_error(data::cat("ltt::tasks::VelocityEnvironment::step: the ", task_.name,
                                     " episode has ended"));
  if (action.size() != static_cast<std::size_t>(task_.action_dim))
    detail::invalid("VelocityEnvironment::step", "action",
                    data::cat("must have action_dim = ", detail::show(task_.action_dim),
                              " components for ", task_.name, "; it has ",
                              detail::show(action.size())));
  for (std::size_t j = 0; j < action.size(); ++j)
    if (!std::isfinite(action[j]))
      detail::invalid("VelocityEnvironment::step", "action",
                      data::cat("component ", detail::show(j), " is ", detail::show(action[j]),
                                "; it must be finite"));
  const mjModel& m = sim_->model;
  mjData& d = *sim_->data;
  double control = 0;
  for (std::size_t j = 0; j < action.size(); ++j) {
    const double a = std::clamp(action[j], -1.0, 1.0);
    d.ctrl[j] = a;
    control += a * a;
  }
  const double x_before = d.qpos[0];
  for (std::int64_t k = 0; k < task_.frame_skip; ++k) mj_step(&m, &d);
  ++steps_;
  refuse_warnings(d, task_.name, steps_);
  x_velocity_ = (d.qpos[0] - x_before) / task_.dt();

  Step s;
  // Gymnasium's order: forward reward plus healthy reward, minus the control cost.
  s.reward = (task_.forward_reward_weight * x_velocity_ + task_.healthy_reward) -
             task_.control_cost_weight * control;
  s.cost = x_velocity_ > task_.velocity_threshold ? 1.0 : 0.0;
  s.terminal = task_.health.has_value() && !healthy();
  s.timeout = !s.terminal && steps_ >= task_.horizon;
  done_ = s.terminal || steps_ >= task_.horizon;
  return s;
}

}  // namespace ltt::tasks
