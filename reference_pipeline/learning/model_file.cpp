// The model file format (model_file.hpp).

#include "learning/model_file.hpp"

#include "learning/binary_fields.hpp"
#include "learning/detail/check.hpp"

#include <data/atomic_output.hpp>
#include <data/error.hpp>
#include <data/fnv1a.hpp>

#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

namespace ltt::learning {

namespace {

using data::fnv1a;

constexpr std::string_view magic{"ltt.mlp\n", 8};
constexpr std::uint32_t max_networks = 65536;
constexpr std::uint32_t max_layers = 1024;

[[noreturn]] void fail(std::string_view source, const std::string& problem) {
  throw ModelFileError(std::string(source) + ": " + problem);
}

using Reader = FieldReader<ModelFileError>;

}  // namespace

std::string encode_models(std::span<const MlpWeights> networks) {
  constexpr std::string_view fn = "ltt::learning::encode_models";
  if (networks.empty() || networks.size() > max_networks)
    detail::invalid(fn, "networks.size()", std::to_string(networks.size()),
                    "must lie in [1, 65536]");
  std::string out(magic);
  put_u32(out, model_file_version);
  put_u32(out, static_cast<std::uint32_t>(networks.size()));
  for (std::size_t k = 0; k < networks.size(); ++k) {
    const MlpWeights& net = networks[k];
    const std::string who = "networks[" + std::to_string(k) + "]";
    check_shape(fn, who + ".shape", net.shape);
    if (net.shape.layers() > static_cast<std::int64_t>(max_layers))
      detail::invalid(fn, who + ".shape.widths.size()", std::to_string(net.shape.widths.size()),
                      "must be at most 1025 (1024 layers)");
    if (static_cast<std::int64_t>(net.parameters.size()) != net.shape.parameter_count())
      detail::invalid(
          fn, who + ".parameters.size()", std::to_string(net.parameters.size()),
          "must equal shape.parameter_count() = " + std::to_string(net.shape.parameter_count()));
    put_u32(out, static_cast<std::uint32_t>(net.shape.output));
    put_u32(out, static_cast<std::uint32_t>(net.shape.layers()));
    for (const auto w : net.shape.widths) put_u32(out, static_cast<std::uint32_t>(w));
    for (std::size_t i = 0; i < net.parameters.size(); ++i) {
      if (!std::isfinite(net.parameters[i]))
        detail::invalid(fn, who + ".parameters[" + std::to_string(i) + "]",
                        detail::show(static_cast<double>(net.parameters[i])),
                        "must be finite (training diverged?)");
      put_u32(out, std::bit_cast<std::uint32_t>(net.parameters[i]));
    }
  }
  put_u64(out, fnv1a(out));
  return out;
}

std::vector<MlpWeights> decode_models(std::string_view bytes, std::string_view source) {
  Reader in(bytes, source);
  if (bytes.size() < magic.size() || bytes.substr(0, magic.size()) != magic)
    fail(source, "not an ltt model file (it does not start with the magic bytes \"ltt.mlp\\n\")");
  in.take(magic.size(), "magic");
  const std::uint32_t version = in.u32("the version");
  if (version != model_file_version)
    fail(source, "model file version " + std::to_string(version) +
                     " is not one this program reads (" + std::to_string(model_file_version) + ")");
  const std::uint32_t count = in.u32("the network count");
  if (count < 1 || count > max_networks)
    fail(source, "network count " + std::to_string(count) + " is outside [1, 65536]");
  std::vector<MlpWeights> networks;
  for (std::uint32_t k = 0; k < count; ++k) {
    const std::string who = "network " + std::to_string(k);
    MlpWeights net;
    const std::uint32_t activation = in.u32(who + "'s output activation");
    if (activation > 1)
      fail(source, who + ": output activation " + std::to_string(activation) +
                       " is not 0 (identity) or 1 (tanh)");
    net.shape.output = static_cast<OutputActivation>(activation);
    const std::uint32_t layers = in.u32(who + "'s layer count");
    if (layers < 1 || layers > max_layers)
      fail(source, who + ": layer count " + std::to_string(layers) + " is outside [1, 1024]");
    in.need(4 * (std::size_t{layers} + 1), who + "'s widths");
    for (std::uint32_t i = 0; i <= layers; ++i) {
      const std::uint32_t w = in.u32("a width");
      if (w < 1 || w > static_cast<std::uint32_t>(max_width))
        fail(source, who + ": width " + std::to_string(i) + " = " + std::to_string(w) +
                         " is outside [1, 2^24]");
      net.shape.widths.push_back(w);
    }
    const auto count_p = static_cast<std::size_t>(net.shape.parameter_count());
    const std::string_view raw =
        in.take(4 * count_p, who + "'s " + std::to_string(count_p) + " parameters");
    net.parameters.resize(count_p);
    for (std::size_t i = 0; i < count_p; ++i) {
      std::uint32_t u = 0;
      for (std::size_t b = 0; b < 4; ++b)
        u |= static_cast<std::uint32_t>(static_cast<unsigned char>(raw[4 * i + b])) << (8 * b);
      net.parameters[i] = std::bit_cast<float>(u);
      if (!std::isfinite(net.parameters[i]))
        fail(source, who + ": parameter " + std::to_string(i) + " is not finite (corrupt)");
    }
    networks.push_back(std::move(net));
  }
  const std::size_t body = in.position();
  if (in.u64("the hash") != fnv1a(bytes.substr(0, body)))
    fail(source, "corrupt: the FNV-1a hash of its first " + std::to_string(body) +
                     " bytes does not match the one stored after them");
  if (in.left() != 0)
    fail(source, std::to_string(in.left()) + " trailing bytes after the hash (offset " +
                     std::to_string(in.position()) + ")");
  return networks;
}

void save_models(const std::filesystem::path& path, std::span<const MlpWeights> networks) {
  const std::string bytes = encode_models(networks);
  try {
    data::write_stream_atomically(path, [&](std::ostream& out) {
      out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    });
  } catch (const data::DataError& e) {
    throw ModelFileError(e.what());
  }
}

std::vector<MlpWeights> load_models(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path.string(), "cannot open for reading: " + std::string(std::strerror(errno)));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) fail(path.string(), "read error");
  const std::string bytes = std::move(buffer).str();
  return decode_models(bytes, path.string());
}

void save_model(const std::filesystem::path& path, const MlpWeights& network) {
  save_models(path, std::span<const MlpWeights>(&network, 1));
}

MlpWeights load_model(const std::filesystem::path& path) {
  auto networks = load_models(path);
  if (networks.size() != 1)
    fail(path.string(), "holds " + std::to_string(networks.size()) +
                            " networks (a value ensemble?); expected exactly one");
  return std::move(networks.front());
}

}  // namespace ltt::learning
