#pragma once
// The world geometry of a pool from a built-in task (docs/dsrl.md, "World geometry"): where the
// robot, its goal and the hazards are, in world coordinates, which DSRL's robot-frame
// observations do not say. It lives in extra keys beside the seven, which DSRL's get_dataset
// loads and ignores and a selection carries along:
//
//   infos/position       (N, 2) float32   the robot's x, y at each row's observation
//   infos/goal           (N, 2) float32   the goal's x, y then (a reached goal moves)
//   infos/hazards        (N, H, 2) float32  the hazard centres then (the same within an episode)
//   world/arena          (4,) float32     x_min, y_min, x_max, y_max of the field
//   world/hazard_radius  (1,) float32
//   world/goal_radius    (1,) float32
//
// A file carries it when it holds world/arena; then it must hold all six keys, consistent with
// the rows and episodes of the file, or it is refused.

#include <optional>
#include <string_view>

#include "array.hpp"

namespace ltt::data {

inline constexpr std::string_view world_keys[] = {"infos/position", "infos/goal",
                                                  "infos/hazards",  "world/arena",
                                                  "world/hazard_radius", "world/goal_radius"};

// Whether a key (or a .npy file's path in a directory) is one of world/'s, which describe the
// file, not its rows: a selection copies them whole, even when a length happens to equal the
// row count (world/arena in a pool of four rows).
constexpr bool is_per_file_world_key(std::string_view name) { return name.starts_with("world/"); }

struct WorldGeometry {
  Array position, goal, hazards, arena, hazard_radius, goal_radius;  // as above, float32

  const Array& operator[](std::string_view key) const;
  Array& operator[](std::string_view key);
};

}  // namespace ltt::data
