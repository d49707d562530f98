#pragma once
// The built-in tasks that the pipeline's every-task cases run on: all of them but two of the
// three MuJoCo velocity tasks. The velocity tasks share their code (tasks::VelocityEnvironment,
// behavior::collect_dataset) and differ in their specs, which tests/tasks and tests/behavior
// check one by one; here hopper-velocity stands for them, the one whose episodes end early and
// the cheapest to collect (a pool of 1000-step episodes from 30 checkpoints takes most of a
// minute under the sanitizers).

#include <pipeline/task.hpp>

#include <string_view>
#include <vector>

namespace ltt_pipeline_test {

inline std::vector<ltt::pipeline::Task> every_task_kind() {
  std::vector<ltt::pipeline::Task> out;
  for (const ltt::pipeline::Task& t : ltt::pipeline::builtin_tasks())
    if (t.name != "half-cheetah-velocity" && t.name != "swimmer-velocity") out.push_back(t);
  return out;
}

}  // namespace ltt_pipeline_test
