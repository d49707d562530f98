#pragma once
// The curation layer's sums are the statistics layer's compensated ones.

#include <ltt/detail/compensated_sum.hpp>

namespace ltt::curation::detail {
using ltt::detail::compensated_mean;
using ltt::detail::compensated_sum;
}  // namespace ltt::curation::detail
