#pragma once
// The checkpoint file of a behavior policy: what a constrained-RL run (ppo_lagrangian.hpp)
// saves every few epochs, and what data collection loads (from a file, or from bytes the
// program carries). Version 1, every field little-endian whatever the host:
//
//   offset  size   field
//   0       8      magic, the bytes "ltt.ckp\n"
//   8       4      u32 version = 1
//   12      4      u32 T, the task name's length, 1 to 256
//   16      T      the task name (printable ASCII)
//           8      u64 epoch (from 1)
//           8      u64 environment steps of the run so far
//           8      f64 the cost limit of that epoch
//           8      f64 the Lagrange multiplier after that epoch's update of it
//           4      u32 A, the action dimensions, 1 to 2^24
//           4 A    f32 log standard deviations
//           8      u64 M, the length of the model file that follows
//           M      the policy's mean network as a model file (learning/model_file.hpp: its
//                  own magic, version and hash; one network, tanh output of width A, taking
//                  raw observations)
//   end     8      u64 FNV-1a (64-bit) hash of every byte before it
//
// Reading checks all of it and names the file and the problem: not a checkpoint (magic), a
// newer version, a bad name, count or value, truncated, trailing bytes, a hash mismatch
// (corrupt), and the model file's own problems. Writing is atomic (data::write_stream_atomically):
// a failed save leaves any earlier file at the path as it was.

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>

#include "behavior/gaussian_policy.hpp"

namespace ltt::behavior {

// A checkpoint that cannot be read or written: input the user can fix (exit code 2 in the
// program), like learning::ModelFileError.
class CheckpointError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

inline constexpr std::uint32_t checkpoint_version = 1;

struct PolicyCheckpoint {
  std::string task;
  std::int64_t epoch = 0, environment_steps = 0;
  double cost_limit = 0, multiplier = 0;
  GaussianPolicy policy;

  friend bool operator==(const PolicyCheckpoint&, const PolicyCheckpoint&) = default;
};

// The file's bytes (every field checked: a task name of 1 to 256 printable ASCII characters,
// epoch and steps >= 0, cost limit and multiplier finite, the policy as check_policy wants it).
std::string encode_checkpoint(const PolicyCheckpoint& checkpoint);
// The checkpoint in `bytes`; `source` names them in error messages (a path, or the name of
// bytes built into a program).
PolicyCheckpoint decode_checkpoint(std::string_view bytes,
                                   std::string_view source = "checkpoint bytes");

void save_checkpoint(const std::filesystem::path& path, const PolicyCheckpoint& checkpoint);
PolicyCheckpoint load_checkpoint(const std::filesystem::path& path);

}  // namespace ltt::behavior
