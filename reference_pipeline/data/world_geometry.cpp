// The world geometry keys of a DSRL file (world_geometry.hpp, docs/dsrl.md "World geometry"):
// each key's shape and element kind, the values' checks, and the reader that read_dsrl and
// read_world_geometry use; write_dsrl checks what it writes with the same functions.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <ltt/detail/check.hpp>

#include "dsrl_store.hpp"
#include "error.hpp"
#include "world_geometry.hpp"

namespace ltt::data {

using detail::cat;
using detail::ColumnInfo;
using detail::DsrlSource;
using detail::ElementKind;
using detail::in_quotes;

namespace {

template <class Geometry>
auto& world_key(Geometry& w, std::string_view key) {
  if (key == "infos/position") return w.position;
  if (key == "infos/goal") return w.goal;
  if (key == "infos/hazards") return w.hazards;
  if (key == "world/arena") return w.arena;
  if (key == "world/hazard_radius") return w.hazard_radius;
  if (key == "world/goal_radius") return w.goal_radius;
  throw DataError(cat("WorldGeometry: ", in_quotes(key), " is not a world key"));
}

}  // namespace

const Array& WorldGeometry::operator[](std::string_view key) const { return world_key(*this, key); }
Array& WorldGeometry::operator[](std::string_view key) { return world_key(*this, key); }

namespace {

// The shape each world key must have in a file of `rows` rows; -1 where any extent goes (the
// number of hazards).
std::vector<std::int64_t> world_shape(std::string_view key, std::int64_t rows) {
  if (key == "infos/hazards") return {rows, -1, 2};
  if (key == "world/arena") return {4};
  if (key == "world/hazard_radius" || key == "world/goal_radius") return {1};
  return {rows, 2};
}

std::string shape_pattern(const std::vector<std::int64_t>& shape) {
  std::string text = "(";
  for (std::size_t i = 0; i < shape.size(); ++i)
    text += cat(i > 0 ? ", " : "", shape[i] < 0 ? std::string("H") : std::to_string(shape[i]));
  return text + (shape.size() == 1 ? ",)" : ")");
}

}  // namespace

namespace detail {

// One key's element kind and shape, before its values are read.
void check_world_column(const std::string& name, std::string_view key, const ColumnInfo& info,
                        std::int64_t rows) {
  const std::vector<std::int64_t> want = world_shape(key, rows);
  bool fits = info.shape.size() == want.size();
  for (std::size_t i = 0; fits && i < want.size(); ++i)
    fits = want[i] < 0 || info.shape[i] == want[i];
  if (!fits)
    detail::fail(name, cat("world geometry: key ", in_quotes(key), " has shape ",
                           shape_text(info.shape), "; expected ", shape_pattern(want)));
  if (info.kind != ElementKind::floating)
    detail::fail(name, cat("world geometry: key ", in_quotes(key), " holds ", info.type_text,
                           "; expected float32 or float64"));
}

// The values: finite, a field of positive width and height, positive radii, and hazards that
// stay put within each episode (they are the episode's layout; a selection keeps it whole).
void check_world_values(const std::string& name, const WorldGeometry& w,
                        std::span<const Episode> episodes) {
  for (const std::string_view key : world_keys) {
    const std::span<const float> v = w[key].values<float>();
    for (std::size_t i = 0; i < v.size(); ++i)
      if (!std::isfinite(v[i]))
        detail::fail(name, cat("world geometry: key ", in_quotes(key), " element ",
                               std::to_string(i), " is not a finite number"));
  }
  const std::span<const float> arena = w.arena.values<float>();
  if (!(arena[0] < arena[2] && arena[1] < arena[3]))
    detail::fail(name, cat("world geometry: key 'world/arena' holds x_min, y_min, x_max, y_max = ",
                           ltt::detail::show(arena[0]), ", ", ltt::detail::show(arena[1]), ", ",
                           ltt::detail::show(arena[2]), ", ", ltt::detail::show(arena[3]),
                           "; the field must have a positive width and height"));
  for (const std::string_view key : {"world/hazard_radius", "world/goal_radius"})
    if (!(w[key].values<float>()[0] > 0))
      detail::fail(name, cat("world geometry: key ", in_quotes(key), " holds ",
                             ltt::detail::show(w[key].values<float>()[0]), "; a radius is > 0"));
  const std::span<const float> hazards = w.hazards.values<float>();
  const auto per_row = static_cast<std::size_t>(w.hazards.shape[1] * 2);
  for (const Episode& e : episodes) {
    const auto first = static_cast<std::size_t>(e.start) * per_row;
    for (std::int64_t r = 1; r < e.length; ++r) {
      const std::size_t at = first + static_cast<std::size_t>(r) * per_row;
      if (!std::equal(hazards.begin() + static_cast<std::ptrdiff_t>(at),
                      hazards.begin() + static_cast<std::ptrdiff_t>(at + per_row),
                      hazards.begin() + static_cast<std::ptrdiff_t>(first)))
        detail::fail(name,
                     cat("world geometry: key 'infos/hazards' row ", std::to_string(e.start + r),
                         " moves the hazards of episode ", std::to_string(e.index), " (rows ",
                         std::to_string(e.start), "..", std::to_string(e.start + e.length - 1),
                         "); they stay put within an episode"));
    }
  }
}

std::optional<WorldGeometry> read_world(const DsrlSource& s, const DsrlPool& pool) {
  if (!s.has("world/arena")) return std::nullopt;
  WorldGeometry w;
  for (const std::string_view key : world_keys) {
    if (!s.has(key))
      detail::fail(s.name(), cat("world geometry: key ", in_quotes(key),
                                 " is missing; a file with 'world/arena' holds infos/position, "
                                 "infos/goal, infos/hazards, world/arena, world/hazard_radius "
                                 "and world/goal_radius"));
    check_world_column(s.name(), key, s.info(key), pool.transitions);
    w[key] = s.read_float(key, DType::float32);
  }
  check_world_values(s.name(), w, pool.episodes);
  return w;
}

}  // namespace detail

}  // namespace ltt::data
