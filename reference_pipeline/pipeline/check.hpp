#pragma once
// The pipeline layer's argument check: std::invalid_argument naming the option and what it must
// be ("ltt::pipeline: 'episodes' must be >= 2").
#include <stdexcept>
#include <string>
#include <string_view>

#include <data/text.hpp>

namespace ltt::pipeline::detail {

inline void require(bool ok, std::string_view name, const std::string& what) {
  if (!ok) throw std::invalid_argument(data::cat("ltt::pipeline: '", name, "' ", what));
}

}  // namespace ltt::pipeline::detail
