#pragma once
// The tasks layer's argument checks: std::invalid_argument in the library's form,
// "ltt::tasks::generate_car_run: parameter 'episodes' = 0 must be >= 1" (data/text.hpp).
#include <data/text.hpp>

namespace ltt::tasks::detail {

using data::show;

inline constexpr data::InvalidArgument invalid{"ltt::tasks::"};

}  // namespace ltt::tasks::detail
