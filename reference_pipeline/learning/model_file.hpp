#pragma once
// The model file: one or more networks (a policy, or the K members of a value ensemble) in a
// small binary format that every backend reads and writes, so a trained model can be reused and
// compared across backends. Version 1, every field little-endian whatever the host:
//
//   offset  size          field
//   0       8             magic, the bytes "ltt.mlp\n"
//   8       4             u32 version = 1
//   12      4             u32 K, the number of networks, 1 to 65536
//   then K times:
//           4             u32 output activation: 0 identity, 1 tanh
//           4             u32 L, the number of linear layers, 1 to 1024
//           4 (L + 1)     u32 widths: input, hidden..., output; each 1 to 2^24
//           4 P           f32 parameters, P = sum over layers of (out in + out), in the MlpWeights
//                         layout: per layer the weight out x in row-major (PyTorch's
//                         nn.Linear.weight), then the bias
//   end     8             u64 FNV-1a (64-bit) hash of every byte before it
//
// Reading checks all of it and names the file and the problem: not a model file (magic), a newer
// version, a bad count or width, truncated (the sizes announce more bytes than there are),
// trailing bytes, a hash mismatch (corrupt), a non-finite parameter. A PyTorch reader is a few
// lines of struct.unpack and numpy.frombuffer(dtype='<f4') (docs/learning.md).

#include "learning/mlp.hpp"

#include <cstdint>
#include <filesystem>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace ltt::learning {

// A model file that cannot be read or written. Derives from std::invalid_argument: like a bad
// argument, it is input the user can fix, and the ltt program reports it with exit code 2.
class ModelFileError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

inline constexpr std::uint32_t model_file_version = 1;

// The file's bytes for these networks (each shape checked, parameters finite and complete).
std::string encode_models(std::span<const MlpWeights> networks);
// The networks in `bytes`; `source` names them in error messages (a path).
std::vector<MlpWeights> decode_models(std::string_view bytes,
                                      std::string_view source = "model bytes");

// Written whole or not at all (ltt::data::write_stream_atomically): a failed save leaves any
// earlier file at `path` as it was.
void save_models(const std::filesystem::path& path, std::span<const MlpWeights> networks);
std::vector<MlpWeights> load_models(const std::filesystem::path& path);

// One network: a file holding exactly one.
void save_model(const std::filesystem::path& path, const MlpWeights& network);
MlpWeights load_model(const std::filesystem::path& path);

}  // namespace ltt::learning
