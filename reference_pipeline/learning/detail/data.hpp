#pragma once
// Checks and helpers the trainers share: row-major float tables, finite values, the seeded
// shuffle and the worker pool for ensemble members. The argument checks are detail/check.hpp.

#include "learning/detail/check.hpp"
#include "learning/mlp.hpp"

#include <cmath>
#include <cstdint>
#include <exception>
#include <functional>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ltt::learning::detail {

// Rows of a row-major table of `width` columns whose values must all be finite.
inline std::int64_t table_rows(std::string_view function, std::string_view parameter,
                               std::span<const float> table, std::string_view width_name,
                               std::int64_t width) {
  if (width < 1) invalid(function, width_name, show(width), "must be at least 1");
  if (table.size() % static_cast<std::size_t>(width) != 0)
    invalid(function, std::string(parameter) + ".size()", show(ssize(table.size())),
            "must be a multiple of " + std::string(width_name) + " = " + show(width));
  for (std::size_t i = 0; i < table.size(); ++i)
    if (!std::isfinite(table[i]))
      invalid(function,
              std::string(parameter) + "[" + std::to_string(i / static_cast<std::size_t>(width)) +
                  "][" + std::to_string(i % static_cast<std::size_t>(width)) + "]",
              show(static_cast<double>(table[i])), "must be a finite number");
  return ssize(table.size()) / width;
}

// Hidden widths given in training options, each in [1, 2^24].
inline void check_hidden(std::string_view function, std::span<const std::int64_t> hidden) {
  for (std::size_t i = 0; i < hidden.size(); ++i)
    if (hidden[i] < 1 || hidden[i] > max_width)
      invalid(function, "options.hidden[" + std::to_string(i) + "]", show(hidden[i]),
              "must lie in [1, 2^24]");
}

// Fisher-Yates from the back with the curation layer's portable bounded draws.
void shuffle(std::vector<std::int64_t>& order, std::mt19937_64& rng);

// Runs task(i) for i in [0, count) on min(threads, count) threads (inline when 1), each index
// exactly once; rethrows the first exception by index after all have finished.
void run_indexed(std::int64_t count, std::int64_t threads,
                 const std::function<void(std::int64_t)>& task);

}  // namespace ltt::learning::detail
