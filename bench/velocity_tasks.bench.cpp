// The velocity tasks (tasks/velocity.hpp) against MuJoCo alone on the same model, in the same
// run: environment steps per second through VelocityEnvironment, and the same physics as raw
// mj_step calls, so the wrapper's cost is a ratio.
//
//   task/<name>   one iteration is one 1000-step episode twice: through a fresh
//                 VelocityEnvironment of seed i (model lookup, mjData, reset noise, mj_forward,
//                 then 1000 steps), and on MuJoCo alone (one mjData kept for the whole run:
//                 mj_resetData, the same start copied in, mj_forward, then per step ctrl = the
//                 clipped action and frame_skip mj_step calls). The two halves run back to back,
//                 in turn first, so a change in the machine's load reaches both.
// Times are the thread's CPU time (CLOCK_THREAD_CPUTIME_ID), so other work on a shared machine
// stretches neither half. The iteration time is the wrapper's; the counters:
//   env_steps/s      environment steps per second through VelocityEnvironment
//   mujoco_steps/s   the same steps per second as raw mj_step calls (the peer)
//   ratio            wrapper time / raw time (1.0: no overhead)
//   physics_steps/s  mj_step calls per second through the wrapper (frame_skip per step)
//   start/<name>  an episode's start alone: a fresh VelocityEnvironment (counters as above,
//                 per start), against mj_resetData, a start copied in and mj_forward on a kept
//                 mjData; what a short episode (a falling hopper) pays on top of its steps
// Actions: a table of 1000 draws in [-1.1, 1.1]^action_dim (seed 1), the same in both halves.
// The hopper's health rule is widened so that it never ends an episode (the test still runs):
// every episode has 1000 steps on both sides. The halves must end in the same state, bit for
// bit, or the benchmark stops with an error.

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <time.h>

#include <tasks/episode_log.hpp>
#include <tasks/mujoco_model.hpp>
#include <tasks/velocity.hpp>

namespace {

namespace tasks = ltt::tasks;

// CPU seconds this thread has run.
double thread_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

constexpr std::int64_t episode_steps = 1000;

tasks::VelocityTaskSpec bench_spec(std::string_view name) {
  tasks::VelocityTaskSpec t = tasks::velocity_task(name);
  if (t.health) t.health = tasks::HealthRule{{-INFINITY, INFINITY}, {-INFINITY, INFINITY},
                                             {-INFINITY, INFINITY}};
  return t;
}

void BM_task(benchmark::State& state, std::string_view name) {
  const tasks::VelocityTaskSpec t = bench_spec(name);
  const auto action_dim = static_cast<std::size_t>(t.action_dim);
  std::vector<double> actions(episode_steps * action_dim);
  std::mt19937_64 rng(1);
  for (double& a : actions) a = tasks::uniform(rng, -1.1, 1.1);

  const mjModel& m = tasks::mujoco_model(t.model);
  const tasks::DataPointer raw = tasks::make_data(m);
  mjData& d = *raw;
  double wrapper_seconds = 0, raw_seconds = 0;
  std::uint64_t seed = 0;
  for (auto _ : state) {
    // One episode through the environment, from a fresh one of this seed.
    std::unique_ptr<tasks::VelocityEnvironment> env;
    const auto wrapped = [&] {
      const double start = thread_seconds();
      env = std::make_unique<tasks::VelocityEnvironment>(t, seed);
      for (std::int64_t k = 0; k < episode_steps; ++k)
        benchmark::DoNotOptimize(env->step(std::span(actions).subspan(
            static_cast<std::size_t>(k) * action_dim, action_dim)));
      return thread_seconds() - start;
    };
    // The same episode on MuJoCo alone. Its start is read from a second environment of the
    // same seed, outside the clock; mj_resetData, copying it in and mj_forward are timed.
    const tasks::VelocityEnvironment start_of(t, seed);
    const auto alone = [&] {
      const double start = thread_seconds();
      mj_resetData(&m, &d);
      std::copy(start_of.qpos().begin(), start_of.qpos().end(), d.qpos);
      std::copy(start_of.qvel().begin(), start_of.qvel().end(), d.qvel);
      mj_forward(&m, &d);
      for (std::int64_t k = 0; k < episode_steps; ++k) {
        for (std::size_t j = 0; j < action_dim; ++j)
          d.ctrl[j] =
              std::clamp(actions[static_cast<std::size_t>(k) * action_dim + j], -1.0, 1.0);
        for (std::int64_t f = 0; f < t.frame_skip; ++f) mj_step(&m, &d);
      }
      benchmark::DoNotOptimize(d.qpos[0]);
      return thread_seconds() - start;
    };
    // Which half goes first alternates, so neither always finds the caches the other left.
    double w = 0, r = 0;
    if (seed % 2 == 0) {
      w = wrapped();
      r = alone();
    } else {
      r = alone();
      w = wrapped();
    }
    ++seed;
    if (std::memcmp(d.qpos, env->qpos().data(), env->qpos().size_bytes()) != 0) {
      state.SkipWithError("the raw episode did not end where the environment's did");
      break;
    }
    state.SetIterationTime(w);
    wrapper_seconds += w;
    raw_seconds += r;
  }
  const double steps = static_cast<double>(state.iterations() * episode_steps);
  state.counters["env_steps/s"] = steps / wrapper_seconds;
  state.counters["mujoco_steps/s"] = steps / raw_seconds;
  state.counters["ratio"] = wrapper_seconds / raw_seconds;
  state.counters["physics_steps/s"] = steps * static_cast<double>(t.frame_skip) / wrapper_seconds;
  state.SetItemsProcessed(static_cast<std::int64_t>(steps));
}

void BM_start(benchmark::State& state, std::string_view name) {
  const tasks::VelocityTaskSpec& t = tasks::velocity_task(name);
  const mjModel& m = tasks::mujoco_model(t.model);
  const tasks::DataPointer raw = tasks::make_data(m);
  mjData& d = *raw;
  const tasks::VelocityEnvironment start_of(t, 1);
  double wrapper_seconds = 0, raw_seconds = 0;
  std::uint64_t seed = 0;
  for (auto _ : state) {
    double start = thread_seconds();
    {
      const tasks::VelocityEnvironment env(t, seed++);
      benchmark::DoNotOptimize(env.qpos()[0]);
    }
    const double w = thread_seconds() - start;
    start = thread_seconds();
    mj_resetData(&m, &d);
    std::copy(start_of.qpos().begin(), start_of.qpos().end(), d.qpos);
    std::copy(start_of.qvel().begin(), start_of.qvel().end(), d.qvel);
    mj_forward(&m, &d);
    benchmark::DoNotOptimize(d.qacc[0]);
    raw_seconds += thread_seconds() - start;
    state.SetIterationTime(w);
    wrapper_seconds += w;
  }
  const auto starts = static_cast<double>(state.iterations());
  state.counters["env_starts/s"] = starts / wrapper_seconds;
  state.counters["mujoco_starts/s"] = starts / raw_seconds;
  state.counters["ratio"] = wrapper_seconds / raw_seconds;
}

}  // namespace

BENCHMARK_CAPTURE(BM_start, half-cheetah-velocity, "half-cheetah-velocity")
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_start, hopper-velocity, "hopper-velocity")
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_start, swimmer-velocity, "swimmer-velocity")
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_task, half-cheetah-velocity, "half-cheetah-velocity")
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_task, hopper-velocity, "hopper-velocity")
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_task, swimmer-velocity, "swimmer-velocity")
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
