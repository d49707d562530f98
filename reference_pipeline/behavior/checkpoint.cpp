// The checkpoint file (checkpoint.hpp).

#include "behavior/checkpoint.hpp"

#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

#include <data/atomic_output.hpp>
#include <data/error.hpp>
#include <data/fnv1a.hpp>
#include <learning/binary_fields.hpp>
#include <learning/model_file.hpp>

#include "behavior/check.hpp"

namespace ltt::behavior {

namespace {

constexpr std::string_view magic{"ltt.ckp\n", 8};
constexpr std::uint32_t max_name = 256;
constexpr std::uint32_t max_actions = std::uint32_t{1} << 24;

[[noreturn]] void fail(std::string_view source, const std::string& problem) {
  throw CheckpointError(data::cat(source, ": ", problem));
}

bool printable(std::string_view name) {
  for (const char c : name)
    if (c < 0x20 || c > 0x7e) return false;
  return true;
}

void put_f64(std::string& out, double x) {
  learning::put_u64(out, std::bit_cast<std::uint64_t>(x));
}

}  // namespace

std::string encode_checkpoint(const PolicyCheckpoint& c) {
  constexpr std::string_view fn = "encode_checkpoint";
  if (c.task.empty() || c.task.size() > max_name || !printable(c.task))
    detail::invalid(fn, "checkpoint.task", data::in_quotes(c.task),
                    "must be 1 to 256 printable ASCII characters");
  if (c.epoch < 0) detail::invalid(fn, "checkpoint.epoch", detail::show(c.epoch), "must be >= 0");
  if (c.environment_steps < 0)
    detail::invalid(fn, "checkpoint.environment_steps", detail::show(c.environment_steps),
                    "must be >= 0");
  if (!std::isfinite(c.cost_limit))
    detail::invalid(fn, "checkpoint.cost_limit", detail::show(c.cost_limit), "must be finite");
  if (!std::isfinite(c.multiplier))
    detail::invalid(fn, "checkpoint.multiplier", detail::show(c.multiplier), "must be finite");
  check_policy(fn, "checkpoint.policy", c.policy);
  const std::string model = learning::encode_models(std::span(&c.policy.mean, 1));
  std::string out(magic);
  learning::put_u32(out, checkpoint_version);
  learning::put_u32(out, static_cast<std::uint32_t>(c.task.size()));
  out += c.task;
  learning::put_u64(out, static_cast<std::uint64_t>(c.epoch));
  learning::put_u64(out, static_cast<std::uint64_t>(c.environment_steps));
  put_f64(out, c.cost_limit);
  put_f64(out, c.multiplier);
  learning::put_u32(out, static_cast<std::uint32_t>(c.policy.log_std.size()));
  for (const float s : c.policy.log_std) learning::put_u32(out, std::bit_cast<std::uint32_t>(s));
  learning::put_u64(out, model.size());
  out += model;
  learning::put_u64(out, data::fnv1a(out));
  return out;
}

PolicyCheckpoint decode_checkpoint(std::string_view bytes, std::string_view source) {
  learning::FieldReader<CheckpointError> in(bytes, source);
  if (bytes.size() < magic.size() || bytes.substr(0, magic.size()) != magic)
    fail(source, "not an ltt checkpoint (it does not start with the magic bytes \"ltt.ckp\\n\")");
  in.take(magic.size(), "magic");
  const std::uint32_t version = in.u32("the version");
  if (version != checkpoint_version)
    fail(source,
         data::cat("checkpoint version ", std::to_string(version),
                   " is not one this program reads (", std::to_string(checkpoint_version), ")"));
  PolicyCheckpoint c;
  const std::uint32_t name = in.u32("the task name's length");
  if (name < 1 || name > max_name)
    fail(source, data::cat("task name length ", std::to_string(name), " is outside [1, 256]"));
  c.task = std::string(in.take(name, "the task name"));
  if (!printable(c.task)) fail(source, "the task name is not printable ASCII (corrupt)");
  c.epoch = static_cast<std::int64_t>(in.u64("the epoch"));
  c.environment_steps = static_cast<std::int64_t>(in.u64("the environment steps"));
  c.cost_limit = std::bit_cast<double>(in.u64("the cost limit"));
  c.multiplier = std::bit_cast<double>(in.u64("the multiplier"));
  if (c.epoch < 0 || c.environment_steps < 0 || !std::isfinite(c.cost_limit) ||
      !std::isfinite(c.multiplier))
    fail(source, "the epoch, steps, cost limit or multiplier is out of range (corrupt)");
  const std::uint32_t actions = in.u32("the action dimensions");
  if (actions < 1 || actions > max_actions)
    fail(source,
         data::cat("action dimensions ", std::to_string(actions), " are outside [1, 2^24]"));
  in.need(4 * std::size_t{actions}, "the log standard deviations");
  for (std::uint32_t j = 0; j < actions; ++j) {
    c.policy.log_std.push_back(std::bit_cast<float>(in.u32("a log standard deviation")));
    if (!std::isfinite(c.policy.log_std.back()))
      fail(source,
           data::cat("log standard deviation ", std::to_string(j), " is not finite (corrupt)"));
  }
  const std::uint64_t model_size = in.u64("the model file's length");
  if (model_size > in.left())
    fail(source, data::cat("truncated: the model file needs ", std::to_string(model_size),
                           " bytes at offset ", std::to_string(in.position()), ", the file has ",
                           std::to_string(in.left()), " left (", std::to_string(bytes.size()),
                           " bytes in all)"));
  const std::string_view model = in.take(static_cast<std::size_t>(model_size), "the model file");
  const std::size_t body = in.position();
  if (in.u64("the hash") != data::fnv1a(bytes.substr(0, body)))
    fail(source, data::cat("corrupt: the FNV-1a hash of its first ", std::to_string(body),
                           " bytes does not match the one stored after them"));
  if (in.left() != 0)
    fail(source, data::cat(std::to_string(in.left()), " trailing bytes after the hash (offset ",
                           std::to_string(in.position()), ")"));
  std::vector<learning::MlpWeights> networks;
  try {
    networks = learning::decode_models(model, data::cat(source, ": the policy's mean network"));
  } catch (const learning::ModelFileError& e) {
    throw CheckpointError(e.what());
  }
  if (networks.size() != 1)
    fail(source, data::cat("the policy's mean network: the model file holds ",
                           std::to_string(networks.size()), " networks, not 1"));
  c.policy.mean = std::move(networks.front());
  if (c.policy.mean.shape.output != learning::OutputActivation::tanh ||
      c.policy.action_dim() != static_cast<std::int64_t>(actions))
    fail(source, data::cat("the policy's mean network has no tanh output of the ",
                           std::to_string(actions), " action dimensions"));
  return c;
}

void save_checkpoint(const std::filesystem::path& path, const PolicyCheckpoint& checkpoint) {
  const std::string bytes = encode_checkpoint(checkpoint);
  try {
    data::write_stream_atomically(path, [&](std::ostream& out) {
      out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    });
  } catch (const data::DataError& e) {
    throw CheckpointError(e.what());
  }
}

PolicyCheckpoint load_checkpoint(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path.string(), data::cat("cannot open for reading: ", std::strerror(errno)));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) fail(path.string(), "read error");
  return decode_checkpoint(std::move(buffer).str(), path.string());
}

}  // namespace ltt::behavior
