#pragma once
// The behavior layer's argument checks: std::invalid_argument in the library's form,
// "ltt::behavior::PpoLagrangian: parameter 'options.batch' = 0 must be >= 1" (data/text.hpp).
#include <cstdint>
#include <string_view>

#include <data/text.hpp>

namespace ltt::behavior::detail {

using data::show;

inline constexpr data::InvalidArgument invalid{"ltt::behavior::"};

inline void require_size(std::string_view function, std::string_view parameter, std::size_t size,
                         std::int64_t expected, std::string_view why) {
  if (static_cast<std::int64_t>(size) != expected)
    invalid(function, data::cat(parameter, ".size()"), show(static_cast<std::int64_t>(size)),
            data::cat("must equal ", why, " = ", show(expected)));
}

}  // namespace ltt::behavior::detail
