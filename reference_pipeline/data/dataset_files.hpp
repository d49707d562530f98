#pragma once
// A dataset of several DSRL files read as one (docs/dsrl.md, "Several files"): what a team
// holding logs in many files curates at once. The files' episodes are concatenated in the order
// the files are given, and so are their rows, each file's dropped tail kept in place (it belongs
// to no episode, as in one file).
//
//   dataset_paths      what the user named (files, directories, glob patterns) -> the files
//   load_dsrl_pool     the files -> one pool: episode i of the whole, row r of the whole
//   episode_id         an episode's id: its index for one file, NAME:INDEX for several, NAME the
//                      file's path relative to the deepest directory holding every file
//                      ("part-03.hdf5:17", "robot2/log.hdf5:17") and INDEX its index in that file
//   find_episode       an id back to the episode's position
//
// Scoring streams each file from its own row 0 (so each file's scores are those of the file
// alone), and a selection is written per file (write_dsrl_selection below).

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "array.hpp"
#include "dsrl.hpp"

namespace ltt::data {

// The files a dataset names, in order: each entry is
//   a file (.hdf5, .h5)                       itself;
//   a directory holding observations.npy     itself (a dataset stored as .npy files);
//   another directory                        its .hdf5/.h5 files and .npy-store subdirectories,
//                                            sorted by name (not recursive);
//   a name that does not exist and holds * ? or [   the paths the glob pattern matches, sorted.
// Throws DataError on a name that does not exist, a directory or pattern that yields no
// dataset, or a file named twice (the same file by two names too: its episodes would count
// twice).
std::vector<std::filesystem::path> dataset_paths(std::span<const std::string> named);

// The files as one pool (each read and checked by load_dsrl_pool(path)). Episode indices and
// rows count from the first file's; DsrlPart says where each file sits. Throws DataError when
// the files disagree on observation_dim or action_dim (one environment's data), or on an empty
// list. One file gives exactly load_dsrl_pool(path).
DsrlPool load_dsrl_pool(std::span<const std::filesystem::path> files);

// The part (file) holding episode `e` of the pool whose parts are `parts`.
const DsrlPart& part_of_episode(std::span<const DsrlPart> parts, std::int64_t e);

// The id of episode `e`: "17" for a pool of one file, "NAME:17" for several.
std::string episode_id(std::span<const DsrlPart> parts, std::int64_t e);

// The position of the episode an id names (as episode_id writes it; for one file any integer
// spelling: "7", "007", "+7"), or nullopt.
std::optional<std::int64_t> find_episode(std::span<const DsrlPart> parts, std::string_view id);

// The same on a pool's parts.
inline const DsrlPart& part_of_episode(const DsrlPool& pool, std::int64_t e) {
  return part_of_episode(pool.parts, e);
}
inline std::string episode_id(const DsrlPool& pool, std::int64_t e) {
  return episode_id(pool.parts, e);
}
inline std::optional<std::int64_t> find_episode(const DsrlPool& pool, std::string_view id) {
  return find_episode(pool.parts, id);
}

// Episode i owns rows [offsets[i], offsets[i + 1]) of the episodes' rows put end to end (the
// rows of the dataset without each file's dropped tail; for one file its first rows).
std::vector<std::int64_t> episode_offsets(const DsrlPool& pool);

// The values of the episodes' rows, from one value per row of the pool: the dropped tails left
// out, so that episode_offsets indexes the result. Throws DataError unless per_row has one
// value per row.
std::vector<double> episode_rows(const DsrlPool& pool, std::span<const double> per_row);

// Maps rows of the episodes' rows (episode_offsets' numbering) to the pool's rows, in place.
void to_pool_rows(const DsrlPool& pool, std::span<std::int64_t> rows);

// The per-row costs of every file, one after another (read_dsrl_costs of each).
std::vector<double> read_dsrl_costs(const DsrlPool& pool);

// A float key of every file, one after another, as read_dsrl_float32 reads each.
Array read_dsrl_float32(const DsrlPool& pool, std::string_view key);

// Writes the selected episodes (positions in the pool, in the order given, repeats kept):
//   one file     write_dsrl_selection(file, out, indices) (dsrl.hpp)
//   several      `out` is a directory holding, for each file with a selected episode, that
//                file's selection under its name (DsrlPart::name), in the file's own store;
//                files without one are not written. Written whole or not at all (a directory
//                already at `out` is replaced only when it holds nothing but DSRL datasets).
// Returns the episodes written per part (0 for a part left out).
std::vector<std::int64_t> write_dsrl_selection(const DsrlPool& pool,
                                               const std::filesystem::path& out,
                                               std::span<const std::int64_t> episode_indices);

}  // namespace ltt::data
