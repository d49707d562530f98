#pragma once
// Datasets in the DSRL layout (Liu et al. 2023, "Datasets and benchmarks for offline safe RL";
// github.com/liuzuxin/DSRL), read and written in one of two stores with the same API:
//
//   HDF5        one file (.hdf5 or .h5): what DSRL publishes and OSRL trainers read. Needs the
//               library built with HDF5 (CMake option LTT_WITH_HDF5, on when HDF5 is found).
//   .npy dir    a directory holding one .npy file per key (observations.npy, ...). Always
//               available; np.load on each file gives what h5py gives for the key.
//
// The layout: seven keys, one row per transition, N rows each,
//   observations, next_observations   float32 or float64, shape (N, obs_dim)
//   actions                           float32 or float64, shape (N, act_dim)
//   rewards, costs                    float32 or float64 (integers accepted), shape (N,) or (N, 1)
//   terminals, timeouts               flags 0/1, shape (N,) or (N, 1): bool (h5py stores it as
//                                     an enum of int8 with FALSE = 0, TRUE = 1), uint8 or any
//                                     integer or float type holding only 0 and 1
// Other keys are allowed and ignored when reading; a selection carries them along.
//
// Episodes (docs/dsrl.md): an episode ends at each row where terminals | timeouts; episode
// i spans the rows after the end of episode i - 1 up to and including its own end. This is
// the rule of DSRL's OfflineEnv.pre_process_data and OSRL's process_sequence_dataset. Rows
// after the last end (a truncated final episode with neither flag) belong to no episode:
// DSRL and OSRL drop them, and so does this reader, reporting how many in dropped_tail.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <curation/trajectory_pool.hpp>

#include "array.hpp"
#include "world_geometry.hpp"

namespace ltt::data {

inline constexpr std::string_view dsrl_keys[] = {
    "observations", "next_observations", "actions", "rewards", "costs", "terminals", "timeouts"};

enum class DsrlStore { hdf5, npy_directory };

// True when this build reads and writes HDF5 (LTT_WITH_HDF5).
bool hdf5_available();

// The store a path names: hdf5 for a .hdf5 or .h5 name, npy_directory otherwise.
DsrlStore store_for(const std::filesystem::path& path);

// Where a pool called `stem` goes in `directory` in this build's preferred store:
// directory/stem.hdf5 with HDF5, directory/stem (a .npy directory) without.
std::filesystem::path default_dsrl_path(const std::filesystem::path& directory,
                                        std::string_view stem);

// A whole dataset in memory: what the built-in tasks write and what read_dsrl returns.
// Flags are dtype bool; rewards and costs keep their float type (integer ones read as float64).
// `world` is the built-in tasks' world geometry (world_geometry.hpp), absent for other files.
struct DsrlDataset {
  Array observations, next_observations, actions, rewards, costs, terminals, timeouts;
  std::optional<WorldGeometry> world;

  const Array& operator[](std::string_view key) const;
  Array& operator[](std::string_view key);
};

// One episode of the file, in file order (of a dataset of several files, dataset_files.hpp:
// in the dataset's order, the files one after another).
struct Episode {
  std::int64_t index = 0;      // 0-based position among the file's (the dataset's) episodes
  std::int64_t start = 0;      // first row, counted in the file (the dataset's rows)
  std::int64_t length = 0;     // rows (transitions), >= 1
  double episodic_return = 0;  // sum of rewards over the rows, Neumaier-compensated in double
  double episodic_cost = 0;    // sum of costs
  bool terminal = false;       // ended by terminals (true) or by timeouts alone (false)
};

struct EpisodeSplit {
  std::vector<Episode> episodes;
  std::int64_t dropped_tail = 0;  // rows after the last end flag, in no episode
};

// The DSRL rule on the four per-row columns (equal lengths; flags 0 or 1).
EpisodeSplit split_episodes(std::span<const double> rewards, std::span<const double> costs,
                            std::span<const std::uint8_t> terminals,
                            std::span<const std::uint8_t> timeouts);

// One file of a pool: where its rows and episodes sit among the pool's. A pool read from one
// file has one part; a dataset of several files (dataset_files.hpp) one per file, in order.
struct DsrlPart {
  std::string file;  // the path read
  std::string name;  // how episode ids and a selection directory name the file (its file name
                     // for one file; dataset_files.hpp says how for several)
  DsrlStore store = DsrlStore::hdf5;
  std::int64_t first_row = 0, rows = 0;  // the pool's rows [first_row, first_row + rows)
  std::int64_t first_episode = 0, episodes = 0;
  std::int64_t dropped_tail = 0;  // the file's last rows, in no episode
};

// What the curation layer needs from a DSRL file: its episodes, with the file's shape.
struct DsrlPool {
  std::string file;  // the path (for several files: how messages name them all)
  DsrlStore store = DsrlStore::hdf5;
  std::int64_t transitions = 0;  // N, rows in the file
  std::int64_t observation_dim = 0;
  std::int64_t action_dim = 0;
  std::vector<Episode> episodes;
  std::int64_t dropped_tail = 0;  // rows after the last end flag (see above); for several
                                  // files the sum of theirs
  std::vector<DsrlPart> parts;    // the files, one part per file

  std::int64_t size() const { return static_cast<std::int64_t>(episodes.size()); }
  // Read from more than one file (episode ids then name the file, dataset_files.hpp).
  bool several_files() const { return parts.size() > 1; }
};

// Reads the layout of a DSRL dataset (file or .npy directory) and splits its episodes. Only
// rewards, costs, terminals and timeouts are read in full; the other keys are checked for
// presence, rank and row count. Throws DataError naming the file and key on a missing key,
// a wrong rank or element type, mismatched row counts, a flag other than 0/1, an unreadable
// file, or a dataset without a single complete episode.
DsrlPool load_dsrl_pool(const std::filesystem::path& path);

// One key of a DSRL dataset read alone, for learning and scoring a value on a file larger than
// memory allows in full (`ltt score`): the layout is checked as load_dsrl_pool checks it, and
// nothing else is read, so next_observations and actions never enter memory.
//   read_dsrl_float32   a float key (observations) as float32, shape (N, dim); a float64 key
//                       is converted as it is read (HDF5) or straight from its bytes (.npy)
//   read_dsrl_costs     the per-row costs as double, shape (N,), each finite
//   read_dsrl_rewards   the per-row rewards, the same way (`ltt label` plots them)
Array read_dsrl_float32(const std::filesystem::path& path, std::string_view key);

// A float key (observations) streamed a block of rows at a time, for scoring a file of any
// size in bounded memory (`ltt score`, docs/scale.md): the layout checked as read_dsrl_float32
// checks it, then use(first_row, values) for blocks of block_rows rows (>= 1; the last block
// shorter) in row order, each block's values float32 row after row, converted exactly as
// read_dsrl_float32 converts them, so the blocks put end to end are its array. Memory: one
// block in this process (an HDF5 file's reader child holds one 16 MiB block of its own). An
// exception from `use` stops the reading and goes on.
using RowBlockUse = std::function<void(std::int64_t first_row, std::span<const float> values)>;
void for_each_dsrl_float32_block(const std::filesystem::path& path, std::string_view key,
                                 std::int64_t block_rows, const RowBlockUse& use);
std::vector<double> read_dsrl_costs(const std::filesystem::path& path);
std::vector<double> read_dsrl_rewards(const std::filesystem::path& path);

// The world geometry of a pool from a built-in task (world_geometry.hpp), or nothing when the
// file holds no world/arena. Checked against the layout and the episodes of `pool` (read from
// the same file): each key present with its shape, finite float values, a non-empty arena,
// positive radii, hazards that stay put within each episode; else DataError naming the key.
std::optional<WorldGeometry> read_world_geometry(const std::filesystem::path& path,
                                                 const DsrlPool& pool);

// The episodes as a curation pool: id = episode index, with length, return and cost, and
// the given scores (one per episode, in episode order). The unsafe bit for a budget b is
// curation::unsafe_bits(pool.episodic_cost, b).
curation::TrajectoryPool to_trajectory_pool(const DsrlPool& pool, std::span<const double> scores);

// The same without scores (score left empty), for callers that read the scores afterwards.
curation::TrajectoryPool episode_pool(const DsrlPool& pool);

// Every key of a DSRL dataset, checked as load_dsrl_pool checks it, with its world geometry
// when it has one (read_world_geometry).
DsrlDataset read_dsrl(const std::filesystem::path& path);

// Writes a dataset in the store its path names (store_for), atomically. The seven arrays
// must have equal row counts and the ranks above; flags must be bool or uint8 0/1 (written
// as bool: h5py's enum in HDF5, '|b1' in .npy); a world geometry is checked as
// read_world_geometry checks it and written as its six keys (in a .npy directory, infos/ and
// world/ are subdirectories). Throws DataError otherwise.
void write_dsrl(const std::filesystem::path& path, const DsrlDataset& dataset);

// Writes the selected episodes of the dataset at `in` to `out`, in the same store (out must
// end in .hdf5/.h5 exactly when `in` is HDF5): every key, with the file's own element types
// (enum flags stay enum flags), holding the selected episodes' rows one episode after
// another in the order given. An index may repeat (resampling); then its rows repeat. Keys
// with one row per transition besides the seven are sliced the same way, other keys copied
// as they are; the dropped tail is never written. `in` and `out` may be the same path.
// Throws DataError on an empty selection or an index outside [0, episodes).
void write_dsrl_selection(const std::filesystem::path& in, const std::filesystem::path& out,
                          std::span<const std::int64_t> episode_indices);

// A selection as .npy-ready arrays (write them with write_npy):
//   selection_indices         int64, the indices as given (order and repeats kept)
//   selection_episode_mask    bool, one per episode of the pool: selected or not
//   selection_transition_mask bool, one per row of the file (N): the row belongs to a
//                             selected episode; dataset[k][mask] in numpy keeps exactly the
//                             selected episodes (in file order, without repeats)
// Each throws DataError on an index outside [0, pool.size()).
Array selection_indices(const DsrlPool& pool, std::span<const std::int64_t> episode_indices);
Array selection_episode_mask(const DsrlPool& pool, std::span<const std::int64_t> episode_indices);
Array selection_transition_mask(const DsrlPool& pool,
                                std::span<const std::int64_t> episode_indices);

}  // namespace ltt::data
