// Bradley-Terry value ensemble, state values and trajectory scores (value_training.hpp).

#include "learning/value_training.hpp"

#include "learning/detail/data.hpp"
#include "learning/losses.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <random>
#include <string>

namespace ltt::learning {

namespace {

using detail::invalid;
using detail::show;

// Copies pairs order[first, first + count) into batch: per pair H preferred rows, H others.
void gather_pairs(std::span<const float> states, std::int64_t obs_dim, const SegmentPairs& pairs,
                  std::span<const std::int64_t> order, std::vector<float>& batch) {
  const auto segment = static_cast<std::size_t>(pairs.segment_length * obs_dim);
  batch.resize(order.size() * 2 * segment);
  float* out = batch.data();
  for (const std::int64_t q : order) {
    const auto p = static_cast<std::size_t>(q);
    std::memcpy(out, states.data() + static_cast<std::size_t>(pairs.preferred[p] * obs_dim),
                segment * sizeof(float));
    std::memcpy(out + segment,
                states.data() + static_cast<std::size_t>(pairs.rejected[p] * obs_dim),
                segment * sizeof(float));
    out += 2 * segment;
  }
}

void check_ensemble(std::string_view fn, const ValueEnsemble& ensemble, std::int64_t obs_dim) {
  detail::require_at_least(fn, "ensemble.members.size()", detail::ssize(ensemble.members.size()),
                           1);
  for (std::size_t k = 0; k < ensemble.members.size(); ++k) {
    const auto& shape = ensemble.members[k].shape;
    const std::string who = "ensemble.members[" + std::to_string(k) + "]";
    check_shape(fn, who + ".shape", shape);
    if (shape.input() != obs_dim)
      invalid(fn, who + ".shape.widths[0]", show(shape.input()),
              "must equal obs_dim = " + show(obs_dim));
    if (shape.output_width() != 1 || shape.output != OutputActivation::identity)
      invalid(fn, who + ".shape", "output width " + show(shape.output_width()),
              "must be a value network (one identity output)");
  }
}

}  // namespace

// Checks the pairs against a table of `rows` states.
void detail::check_pairs(std::string_view fn, const SegmentPairs& pairs, std::int64_t rows) {
  detail::require_at_least(fn, "pairs.segment_length", pairs.segment_length, 1);
  if (pairs.preferred.size() != pairs.rejected.size())
    invalid(fn, "pairs.rejected.size()", show(detail::ssize(pairs.rejected.size())),
            "must equal pairs.preferred.size() = " + show(detail::ssize(pairs.preferred.size())));
  detail::require_at_least(fn, "pairs.preferred.size()", detail::ssize(pairs.preferred.size()), 1);
  const std::int64_t last = rows - pairs.segment_length;
  for (const auto* side : {&pairs.preferred, &pairs.rejected})
    for (std::size_t i = 0; i < side->size(); ++i)
      if ((*side)[i] < 0 || (*side)[i] > last)
        invalid(fn,
                std::string(side == &pairs.preferred ? "pairs.preferred" : "pairs.rejected") + "[" +
                    std::to_string(i) + "]",
                show((*side)[i]),
                "must lie in [0, rows - H] = [0, " + show(last) + "] (a segment of H = " +
                    show(pairs.segment_length) + " rows of " + show(rows) + ")");
}

SegmentPairs segment_pairs(const curation::PreferencePairs& pairs,
                           std::span<const std::int64_t> offsets, std::int64_t segment_length) {
  constexpr std::string_view fn = "ltt::learning::segment_pairs";
  detail::require_at_least(fn, "segment_length", segment_length, 1);
  SegmentPairs out;
  out.segment_length = segment_length;
  auto row = [&](const curation::Segment& s, const char* which, std::size_t i) {
    if (s.trajectory < 0 || s.trajectory + 1 >= detail::ssize(offsets.size()))
      invalid(fn, "pairs.pairs[" + std::to_string(i) + "]." + which + ".trajectory",
              show(s.trajectory),
              "must name a trajectory of offsets (" + show(detail::ssize(offsets.size()) - 1) +
                  " trajectories)");
    const auto t = static_cast<std::size_t>(s.trajectory);
    if (s.offset < 0 || offsets[t] + s.offset + segment_length > offsets[t + 1])
      invalid(fn, "pairs.pairs[" + std::to_string(i) + "]." + which + ".offset", show(s.offset),
              "must leave H = " + show(segment_length) + " steps inside trajectory " +
                  show(s.trajectory));
    return offsets[t] + s.offset;
  };
  for (std::size_t i = 0; i < pairs.pairs.size(); ++i) {
    const auto& p = pairs.pairs[i];
    const std::int64_t first = row(p.first, "first", i);
    const std::int64_t second = row(p.second, "second", i);
    out.preferred.push_back(p.first_preferred ? first : second);
    out.rejected.push_back(p.first_preferred ? second : first);
  }
  return out;
}

ValueTrainingResult train_value_ensemble(std::span<const float> states, std::int64_t obs_dim,
                                         const SegmentPairs& pairs,
                                         const ValueTrainingOptions& options,
                                         const Backend& backend) {
  constexpr std::string_view fn = "ltt::learning::train_value_ensemble";
  const std::int64_t rows = detail::table_rows(fn, "states", states, "obs_dim", obs_dim);
  detail::check_pairs(fn, pairs, rows);
  detail::require_at_least(fn, "options.members", options.members, 1);
  detail::require_at_least(fn, "options.epochs", options.epochs, 0);
  detail::require_at_least(fn, "options.batch_pairs", options.batch_pairs, 1);
  detail::require_at_least(fn, "options.threads", options.threads, 1);
  check_adam(fn, options.adam);
  detail::check_hidden(fn, options.hidden);
  const MlpShape shape = value_shape(obs_dim, options.hidden);

  const auto P = detail::ssize(pairs.preferred.size());
  const std::int64_t H = pairs.segment_length;
  ValueTrainingResult result;
  result.ensemble.members.resize(static_cast<std::size_t>(options.members));
  result.epoch_loss.resize(static_cast<std::size_t>(options.members));
  ProgressReporter progress(options.progress, "value ensemble", "states", options.members,
                            options.epochs);

  detail::run_indexed(options.members, options.threads, [&](std::int64_t k) {
    std::mt19937_64 rng(stream_seed(options.seed, static_cast<std::uint64_t>(k)));
    const auto net = backend.network(initial_weights(shape, rng()), options.adam);
    std::vector<std::int64_t> order(static_cast<std::size_t>(P));
    for (std::int64_t i = 0; i < P; ++i) order[static_cast<std::size_t>(i)] = i;
    std::vector<float> batch;
    auto& losses = result.epoch_loss[static_cast<std::size_t>(k)];
    for (std::int64_t epoch = 0; epoch < options.epochs; ++epoch) {
      const auto start = std::chrono::steady_clock::now();
      detail::shuffle(order, rng);
      double loss = 0.0;
      for (std::int64_t first = 0; first < P; first += options.batch_pairs) {
        const std::int64_t n = std::min(options.batch_pairs, P - first);
        gather_pairs(states, obs_dim, pairs,
                     std::span<const std::int64_t>(order).subspan(static_cast<std::size_t>(first),
                                                                  static_cast<std::size_t>(n)),
                     batch);
        loss += net->bradley_terry_step(batch, n, H) * static_cast<double>(n);
      }
      losses.push_back(loss / static_cast<double>(P));
      const std::chrono::duration<double> seconds = std::chrono::steady_clock::now() - start;
      progress.epoch_done(k, epoch, losses.back(),
                          static_cast<double>(2 * H * P) / std::max(seconds.count(), 1e-9));
    }
    result.ensemble.members[static_cast<std::size_t>(k)] = net->weights();
  });
  return result;
}

StateValues state_values(const ValueEnsemble& ensemble, std::span<const float> states,
                         std::int64_t obs_dim, const Backend& backend, std::int64_t threads) {
  constexpr std::string_view fn = "ltt::learning::state_values";
  const std::int64_t rows = detail::table_rows(fn, "states", states, "obs_dim", obs_dim);
  check_ensemble(fn, ensemble, obs_dim);
  detail::require_at_least(fn, "threads", threads, 1);
  StateValues out;
  out.members = detail::ssize(ensemble.members.size());
  out.rows = rows;
  out.per_member.resize(static_cast<std::size_t>(out.members * rows));
  // One task per (member, chunk of state_values_chunk rows), each with its own network: the chunks
  // are the same whatever the thread count, so every value is computed by the same arithmetic
  // and the bytes do not depend on `threads`.
  const std::int64_t chunks = (rows + state_values_chunk - 1) / state_values_chunk;
  detail::run_indexed(out.members * chunks, threads, [&](std::int64_t task) {
    const std::int64_t k = task / chunks;
    const std::int64_t first = (task % chunks) * state_values_chunk;
    const std::int64_t n = std::min(state_values_chunk, rows - first);
    const auto net = backend.network(ensemble.members[static_cast<std::size_t>(k)]);
    std::vector<float> values(static_cast<std::size_t>(n));
    net->predict(states.subspan(static_cast<std::size_t>(first * obs_dim),
                                static_cast<std::size_t>(n * obs_dim)),
                 n, values);
    std::copy(values.begin(), values.end(), out.per_member.begin() + k * rows + first);
  });
  // V-bar summed in member order, as the single-threaded loop did.
  out.mean.assign(static_cast<std::size_t>(rows), 0.0);
  for (std::int64_t k = 0; k < out.members; ++k) {
    const double* values = out.per_member.data() + k * rows;
    for (std::int64_t i = 0; i < rows; ++i) out.mean[static_cast<std::size_t>(i)] += values[i];
  }
  for (auto& v : out.mean) v /= static_cast<double>(out.members);
  return out;
}

std::vector<double> trajectory_scores(const ValueEnsemble& ensemble, std::span<const float> states,
                                      std::int64_t obs_dim, std::span<const std::int64_t> offsets,
                                      const curation::Aggregator& aggregator,
                                      const Backend& backend) {
  const StateValues values = state_values(ensemble, states, obs_dim, backend);
  return curation::trajectory_scores(values.mean, offsets, aggregator);
}

PairEvaluation evaluate_pairs(const ValueEnsemble& ensemble, std::span<const float> states,
                              std::int64_t obs_dim, const SegmentPairs& pairs,
                              const Backend& backend) {
  constexpr std::string_view fn = "ltt::learning::evaluate_pairs";
  const std::int64_t rows = detail::table_rows(fn, "states", states, "obs_dim", obs_dim);
  detail::check_pairs(fn, pairs, rows);
  check_ensemble(fn, ensemble, obs_dim);
  const auto P = detail::ssize(pairs.preferred.size());
  std::vector<std::int64_t> order(static_cast<std::size_t>(P));
  for (std::int64_t i = 0; i < P; ++i) order[static_cast<std::size_t>(i)] = i;
  std::vector<float> batch;
  gather_pairs(states, obs_dim, pairs, order, batch);
  const StateValues values = state_values(ensemble, batch, obs_dim, backend);
  std::vector<double> d(values.mean.size());
  PairEvaluation out;
  out.loss = bradley_terry_loss<double>(values.mean, P, pairs.segment_length, P, d) /
             static_cast<double>(P);
  out.accuracy = bradley_terry_accuracy<double>(values.mean, P, pairs.segment_length);
  return out;
}

}  // namespace ltt::learning
