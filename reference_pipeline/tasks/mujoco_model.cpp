#include "mujoco_model.hpp"

#include <cstring>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>

#include "check.hpp"

namespace ltt::tasks {
namespace {

struct VfsDeleter {
  void operator()(mjVFS* vfs) const {
    mj_deleteVFS(vfs);
    delete vfs;
  }
};

std::string message_of(const char* error) {
  std::string text = error;
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

[[noreturn]] void refuse(std::string_view file, std::string_view what) {
  throw std::runtime_error(data::cat("ltt::tasks: MuJoCo model ", file, ": ", what));
}

}  // namespace

ModelPointer compile_model(std::string_view file, std::string_view xml) {
  const std::string name(file);
  // mjVFS holds 2000 file names of 1000 bytes: 2 MB, too much for the stack.
  std::unique_ptr<mjVFS, VfsDeleter> vfs(new mjVFS);
  mj_defaultVFS(vfs.get());
  // One byte more than the text, left 0: dm_control appends a NUL to every XML file it puts in
  // a VFS because MuJoCo's parser "sometimes reads past the end of the string"
  // (dm_control/mujoco/wrapper/core.py); tinyxml2 stops at it.
  if (mj_makeEmptyFileVFS(vfs.get(), name.c_str(), static_cast<int>(xml.size() + 1)) != 0)
    refuse(file, "could not be put in MuJoCo's virtual file system");
  const int index = mj_findFileVFS(vfs.get(), name.c_str());
  if (index < 0) refuse(file, "is missing from MuJoCo's virtual file system");
  auto* bytes = static_cast<char*>(vfs->filedata[index]);
  std::memcpy(bytes, xml.data(), xml.size());
  bytes[xml.size()] = '\0';

  // MuJoCo 2.2.2's XML compiler keeps the last model it compiled in a global (for
  // mj_saveLastXML): one compile at a time.
  static std::mutex compile_mutex;
  char error[1000] = "";
  ModelPointer model;
  {
    const std::lock_guard lock(compile_mutex);
    model.reset(mj_loadXML(name.c_str(), vfs.get(), error, sizeof error));
  }
  if (!model) refuse(file, data::cat("does not compile: ", message_of(error)));
  if (error[0] != '\0') refuse(file, data::cat("compiles with a warning: ", message_of(error)));
  return model;
}

const mjModel& mujoco_model(std::string_view file) {
  struct Slot {
    std::once_flag compiled;
    ModelPointer model;
  };
  const auto models = embedded_models();
  static const std::unique_ptr<Slot[]> slots(new Slot[models.size()]);
  for (std::size_t i = 0; i < models.size(); ++i) {
    if (models[i].file != file) continue;
    Slot& slot = slots[i];
    std::call_once(slot.compiled, [&] { slot.model = compile_model(file, models[i].xml); });
    return *slot.model;
  }
  std::string names;
  for (const EmbeddedModel& m : models) names += data::cat(names.empty() ? "" : ", ", m.file);
  detail::invalid("mujoco_model", "model", data::cat("\"", file, "\""),
                  data::cat("is not an embedded model (", names, ")"));
}

DataPointer make_data(const mjModel& model) {
  DataPointer data(mj_makeData(&model));
  if (!data) throw std::bad_alloc();
  return data;
}

}  // namespace ltt::tasks
