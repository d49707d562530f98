#pragma once
// The MuJoCo models of the velocity tasks (velocity.hpp, docs/tasks.md): the project's own MJCF
// files, models/*.xml, embedded in the library at build time (cmake/embed_text.cmake) and
// compiled through MuJoCo's virtual file system, so nothing is read from disk at run time.
// Each model is compiled once per process and shared, immutable, by every environment; each
// environment owns its mjData (MuJoCo's mj_step reads the model through a const pointer).
//
// Internal to ltt_tasks, its tests and its benchmark: this header names MuJoCo's types, so it is
// not installed (the top-level CMakeLists.txt) and velocity.hpp, which is, does not include it.
#include <memory>
#include <span>
#include <string_view>

#include <mujoco/mujoco.h>

namespace ltt::tasks {

struct EmbeddedModel {
  std::string_view file;  // "half_cheetah.xml"
  std::string_view xml;
};

// half_cheetah.xml, hopper.xml, swimmer.xml (defined in the generated embedded_models.cpp).
std::span<const EmbeddedModel> embedded_models();

struct ModelDeleter {
  void operator()(mjModel* m) const { mj_deleteModel(m); }
};
struct DataDeleter {
  void operator()(mjData* d) const { mj_deleteData(d); }
};
using ModelPointer = std::unique_ptr<mjModel, ModelDeleter>;
using DataPointer = std::unique_ptr<mjData, DataDeleter>;

// `xml` compiled by MuJoCo as the file `file` of a virtual file system holding only it. Throws
// std::runtime_error naming the file and quoting MuJoCo's message when it does not compile, or
// compiles with a warning (our models compile without one).
ModelPointer compile_model(std::string_view file, std::string_view xml);

// The embedded model `file`, compiled on its first use (thread-safe) and kept for the life of
// the process. Throws std::invalid_argument naming 'model' for a file that is not embedded, and
// compile_model's error when it does not compile (a later call tries again).
const mjModel& mujoco_model(std::string_view file);

// A fresh mjData of `model`: MuJoCo's initial state (qpos0, zero velocity, time 0).
DataPointer make_data(const mjModel& model);

}  // namespace ltt::tasks
