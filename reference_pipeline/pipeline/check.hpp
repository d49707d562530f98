#pragma once
// The pipeline layer's argument checks: std::invalid_argument in the library's form,
// "ltt::pipeline::run_pipeline: parameter 'episodes' = 1 must be >= 2" (data/text.hpp).
#include <string_view>

#include <data/text.hpp>

namespace ltt::pipeline::detail {

using data::show;

inline constexpr data::InvalidArgument invalid{"ltt::pipeline::"};

inline void require(bool ok, std::string_view function, std::string_view parameter,
                    std::string_view requirement) {
  if (!ok) invalid(function, parameter, requirement);
}

}  // namespace ltt::pipeline::detail
