#pragma once
// Argument checks shared by the curation layer. Each failure throws std::invalid_argument
// through ltt::detail::invalid, so the message names the function, the parameter (with the
// offending index for an array) and the value it got, as in the statistics layer.

#include <ltt/detail/check.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ltt::curation::detail {

using ltt::detail::invalid;
using ltt::detail::show;

inline std::string at(std::string_view parameter, std::size_t i) {
  return std::string(parameter) + "[" + std::to_string(i) + "]";
}

inline std::int64_t ssize(std::size_t n) { return static_cast<std::int64_t>(n); }

inline void require_finite(std::string_view function, std::string_view parameter, double x) {
  if (!std::isfinite(x)) invalid(function, parameter, show(x), "must be a finite number");
}

// Checked one by one so the message can name the first offending index.
inline void require_finite(std::string_view function, std::string_view parameter,
                           std::span<const double> x) {
  for (std::size_t i = 0; i < x.size(); ++i)
    if (!std::isfinite(x[i]))
      invalid(function, at(parameter, i), show(x[i]), "must be a finite number");
}

inline void require_nonempty(std::string_view function, std::string_view parameter,
                             std::size_t size) {
  if (size == 0) invalid(function, std::string(parameter) + ".size()", "0", "must be at least 1");
}

inline void require_same_size(std::string_view function, std::string_view parameter,
                              std::size_t size, std::string_view other, std::size_t other_size) {
  if (size != other_size)
    invalid(function, std::string(parameter) + ".size()", show(ssize(size)),
            "must equal " + std::string(other) + ".size() = " + show(ssize(other_size)));
}

// A probability that may be 0 or 1 (noise rates, fractions); NaN fails.
inline void require_closed_unit(std::string_view function, std::string_view parameter, double x) {
  if (!(x >= 0.0 && x <= 1.0)) invalid(function, parameter, show(x), "must lie in [0, 1]");
}

inline void require_positive(std::string_view function, std::string_view parameter,
                             std::int64_t x) {
  if (x < 1) invalid(function, parameter, show(x), "must be at least 1");
}

// Every id occurs once. The message names one duplicated id, not just its position, because
// an id is what a user can find in their file.
inline void require_unique_ids(std::string_view function, std::string_view parameter,
                               std::span<const std::int64_t> ids) {
  std::vector<std::int64_t> sorted(ids.begin(), ids.end());
  std::sort(sorted.begin(), sorted.end());
  const auto d = std::adjacent_find(sorted.begin(), sorted.end());
  if (d != sorted.end())
    invalid(function, parameter, "{..., " + show(*d) + ", ...}",
            "must not repeat an id; id " + show(*d) + " occurs twice");
}

// CSR layout: trajectory i owns values[offsets[i], offsets[i + 1]). offsets has N + 1 entries,
// starts at 0, never decreases and ends at values.size().
inline void require_offsets(std::string_view function, std::span<const std::int64_t> offsets,
                            std::size_t values) {
  if (offsets.size() < 2)
    invalid(function, "offsets.size()", show(ssize(offsets.size())),
            "must be at least 2 (N + 1 offsets for N >= 1 trajectories)");
  if (offsets.front() != 0) invalid(function, "offsets[0]", show(offsets.front()), "must be 0");
  for (std::size_t i = 1; i < offsets.size(); ++i)
    if (offsets[i] < offsets[i - 1])
      invalid(function, at("offsets", i), show(offsets[i]),
              "must not be below offsets[" + std::to_string(i - 1) + "] = " + show(offsets[i - 1]));
  if (offsets.back() != ssize(values))
    invalid(function, at("offsets", offsets.size() - 1), show(offsets.back()),
            "must equal the number of values, " + show(ssize(values)));
}

}  // namespace ltt::curation::detail
