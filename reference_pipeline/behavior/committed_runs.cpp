// The committed behavior runs, decoded from the binary (committed_runs.hpp).

#include "behavior/committed_runs.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <data/text.hpp>

namespace ltt::behavior {

namespace {

using Runs = std::map<std::string, std::vector<PolicyCheckpoint>, std::less<>>;

Runs decode_all() {
  Runs runs;
  for (const EmbeddedFile& f : embedded_run_files()) {
    const std::string_view folder = f.name.substr(0, f.name.find('/'));
    PolicyCheckpoint c = decode_checkpoint(f.bytes, f.name);
    if (c.task != folder)
      throw CheckpointError(data::cat("ltt::behavior::committed_run: ", f.name, " is a checkpoint of ",
                                      c.task, ", not of ", folder));
    runs[std::string(folder)].push_back(std::move(c));
  }
  for (auto& [task, checkpoints] : runs)
    std::sort(checkpoints.begin(), checkpoints.end(),
              [](const PolicyCheckpoint& a, const PolicyCheckpoint& b) { return a.epoch < b.epoch; });
  return runs;
}

}  // namespace

std::span<const PolicyCheckpoint> committed_run(std::string_view task) {
  static const Runs runs = decode_all();
  const auto it = runs.find(task);
  if (it == runs.end()) return {};
  return it->second;
}

}  // namespace ltt::behavior
