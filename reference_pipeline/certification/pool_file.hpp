#pragma once
// The program's input files for curation (docs/cli.md, "ltt certify"): a trajectory pool, the
// calibration labels for some of its trajectories, and optionally per-state values to
// aggregate into scores. Each reader checks what the curation headers would refuse, and says
// where: `pool.csv:17: score 'nan' is not a finite number`.
//
//   pool      CSV with a header holding at least id and score; optional return, cost (finite
//             numbers) and length (an integer >= 0); any order, other columns ignored. An id
//             is any non-empty text ("traj01391", "ep-0007", "17"), unique in the pool, and
//             is written back exactly as read; ids that read as integers are compared as
//             integers ("007" and "7" are one id), others byte for byte. Or a .npy file holding a
//             one-dimensional float64 (or float32) array of scores, the trajectory at row i having
//             id i. A DSRL dataset is a pool too (dataset_file.hpp): one trajectory per episode, id
//             = episode index.
//   labels    CSV id,unsafe (unsafe 0 or 1), other columns ignored; every id in the pool, none
//             twice, no more labels than trajectories.
//   states    CSV id,value: one row per state, rows of a trajectory in any order and
//             interleaved with others; every pool trajectory needs at least one state.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <curation/calibration.hpp>
#include <curation/score_aggregation.hpp>
#include <curation/trajectory_pool.hpp>

#include <data/dataset_files.hpp>
#include <data/npy.hpp>

#include "bad_input.hpp"
#include "format.hpp"
#include "table_reader.hpp"

namespace ltt::certification {

// Where a pool's trajectories come from: a CSV file, a .npy array of scores, or the episodes
// of a DSRL dataset.
enum class PoolSource { csv, npy, dataset };

struct PoolFile {
  std::string name;  // the file as the user typed it
  PoolSource source = PoolSource::csv;
  // Score is empty until the scores are read. The library's ids are the CSV rows' positions
  // (a CSV's ids are text) or the .npy rows' and episodes' indices.
  curation::TrajectoryPool pool;
  std::vector<std::int64_t> line;    // CSV line of each trajectory (empty otherwise)
  std::vector<std::string> id_text;  // CSV: each trajectory's id as written (empty otherwise)
  std::unordered_map<std::string, std::int64_t> position_by_key;  // CSV: id_key -> position
  std::vector<data::DsrlPart> parts;  // a dataset: its files (ids FILE:EPISODE for several)

  std::int64_t size() const { return static_cast<std::int64_t>(pool.id.size()); }
  bool npy() const { return source == PoolSource::npy; }

  // Read from a dataset of several files: ids name the file and the episode.
  bool several_files() const { return parts.size() > 1; }

  // "pool.csv:17", "scores.npy, row 17", "CarCircle.hdf5, episode 17" or (several files)
  // "data/part-2.hdf5, episode 17", for messages about one trajectory.
  std::string where(std::int64_t position) const {
    switch (source) {
      case PoolSource::npy:
        return cat(name, ", row ", std::to_string(position));
      case PoolSource::dataset:
        if (several_files()) {
          const data::DsrlPart& part = data::part_of_episode(parts, position);
          return cat(part.file, ", episode ", std::to_string(position - part.first_episode));
        }
        return cat(name, ", episode ", std::to_string(position));
      case PoolSource::csv:
        break;
    }
    return cat(name, ":", std::to_string(line[static_cast<std::size_t>(position)]));
  }

  // The id of the trajectory at `position` as the user wrote it (a row or episode index for
  // .npy and dataset pools, FILE:EPISODE for a dataset of several files).
  std::string id_of(std::int64_t position) const {
    const auto p = static_cast<std::size_t>(position);
    if (several_files()) return data::episode_id(parts, position);
    return source == PoolSource::csv ? id_text[p] : std::to_string(pool.id[p]);
  }

  // True when every id reads as an integer (JSON output then writes ids as numbers).
  bool integer_ids() const {
    if (several_files()) return false;
    return source != PoolSource::csv ||
           std::all_of(id_text.begin(), id_text.end(),
                       [](const std::string& id) { return integer_id(id).has_value(); });
  }

  // "id 7 is not in the pool pool.csv", or for a dataset "id 400 is not an episode of
  // CarCircle.hdf5 (400 episodes, 0 to 399)".
  std::string not_in(std::string_view id) const {
    if (several_files())
      return cat("id ", id, " is not an episode of ", name, " (ids FILE:EPISODE, FILE one of ",
                 parts.front().name, " to ", parts.back().name, ")");
    if (source == PoolSource::dataset)
      return cat("id ", id, " is not an episode of ", name, " (", std::to_string(size()),
                 " episodes, 0 to ", std::to_string(size() - 1), ")");
    return cat("id ", id, " is not in the pool ", name);
  }

  // The position of the trajectory whose id is `id` (as written in another file).
  std::optional<std::int64_t> position_of(std::string_view id) const {
    if (source == PoolSource::csv) {
      const auto it = position_by_key.find(id_key(id));
      if (it == position_by_key.end()) return std::nullopt;
      return it->second;
    }
    if (several_files()) return data::find_episode(parts, id);
    // .npy rows and episodes: the id is the index (episode_pool numbers episodes from 0).
    const std::optional<std::int64_t> index = integer_id(id);
    if (!index || *index < 0 || *index >= size() ||
        pool.id[static_cast<std::size_t>(*index)] != *index)
      return std::nullopt;
    return *index;
  }

  // An id as an integer, when it reads as one ("17", "+17", "-3", "007"); nullopt for a name.
  static std::optional<std::int64_t> integer_id(std::string_view id) { return parse_integer(id); }

  // The key two spellings of one id share: an integer's decimal form, or a name's bytes. A
  // name never reads as an integer, so the two kinds of key cannot meet.
  static std::string id_key(std::string_view id) {
    const std::optional<std::int64_t> x = integer_id(id);
    return x ? std::to_string(*x) : std::string(id);
  }
};

// A pool from a CSV file already in memory (read_pool reads the file). With need_score false
// (scores come from state values) a score column is not read, even if present.
inline PoolFile read_pool_csv(CsvFile csv, bool need_score = true) {
  PoolFile f;
  f.name = csv.name();
  curation::TrajectoryPool& p = f.pool;
  // Absent columns are `none` (an optional here trips GCC 12's -Wmaybe-uninitialized).
  constexpr std::size_t none = std::numeric_limits<std::size_t>::max();
  const std::size_t id_column = csv.column("id");
  const std::size_t score_column = need_score ? csv.column("score") : none;
  const std::size_t return_column = csv.find_column("return").value_or(none);
  const std::size_t cost_column = csv.find_column("cost").value_or(none);
  const std::size_t length_column = csv.find_column("length").value_or(none);
  for (CsvRecord row; csv.next(row);) {
    const std::string_view id = row.fields[id_column];
    if (id.empty()) csv.fail(row.line, "id is missing");
    const auto position = static_cast<std::int64_t>(p.id.size());
    const auto [it, fresh] = f.position_by_key.emplace(PoolFile::id_key(id), position);
    if (!fresh)
      csv.fail(row.line, cat("id ", id, " repeats the id of line ",
                             std::to_string(f.line[static_cast<std::size_t>(it->second)])));
    p.id.push_back(position);
    f.id_text.emplace_back(id);
    if (score_column != none) p.score.push_back(finite_field(csv, row, score_column, "score"));
    if (return_column != none)
      p.episodic_return.push_back(finite_field(csv, row, return_column, "return"));
    if (cost_column != none) p.episodic_cost.push_back(finite_field(csv, row, cost_column, "cost"));
    if (length_column != none) {
      const std::int64_t length = integer_field(csv, row, length_column, "length");
      if (length < 0)
        csv.fail(row.line, cat("length ", std::to_string(length), " must not be negative"));
      p.length.push_back(length);
    }
    f.line.push_back(row.line);
  }
  if (p.id.empty())
    csv.fail(csv.header_line(), "no trajectories after the header: the pool is empty");
  return f;
}

// A pool from a .npy array of scores (float64 or float32); the trajectory at row i has id i.
inline PoolFile read_pool_npy(const std::string& path, bool need_score = true) {
  PoolFile f;
  f.name = path;
  f.source = PoolSource::npy;
  curation::TrajectoryPool& p = f.pool;
  p.score = data::read_npy_vector(path);
  if (p.score.empty())
    throw BadInput(cat(path, ": the array is empty: the pool has no trajectories"));
  for (std::size_t i = 0; i < p.score.size(); ++i)
    if (!std::isfinite(p.score[i]))
      throw BadInput(cat(f.where(static_cast<std::int64_t>(i)), ": score ", shortest(p.score[i]),
                         " is not a finite number"));
  p.id.resize(p.score.size());
  for (std::size_t i = 0; i < p.id.size(); ++i) p.id[i] = static_cast<std::int64_t>(i);
  if (!need_score) p.score.clear();
  return f;
}

// A pool from a file: .npy by its name, CSV otherwise.
inline PoolFile read_pool(const std::string& path, bool need_score = true) {
  return path.ends_with(".npy") ? read_pool_npy(path, need_score)
                                : read_pool_csv(CsvFile::read(path), need_score);
}

// One row of a labels CSV (id,unsafe), its id mapped to a pool position.
struct LabelRow {
  std::int64_t position = 0;
  bool unsafe = false;
};

// The pool position of a labels CSV row's id, checked with its line: at most one row per
// trajectory of the pool (`labeled` rows so far), a known id, labeled once (`line_of_position`:
// the line of each position labeled so far).
inline std::int64_t labeled_position(
    CsvFile& csv, const CsvRecord& row, std::string_view id, const PoolFile& pool,
    std::size_t labeled, std::unordered_map<std::int64_t, std::int64_t>& line_of_position) {
  if (static_cast<std::int64_t>(labeled) == pool.size())
    csv.fail(row.line, cat("more labels than the ", std::to_string(pool.size()),
                           " trajectories of the pool ", pool.name,
                           ": the labels are drawn from the pool"));
  const std::optional<std::int64_t> position = pool.position_of(id);
  if (!position) csv.fail(row.line, pool.not_in(id));
  const auto [it, fresh] = line_of_position.emplace(*position, row.line);
  if (!fresh)
    csv.fail(row.line,
             cat("id ", id, " is labeled twice (also on line ", std::to_string(it->second), ")"));
  return *position;
}

// The rows of a labels CSV already in memory, each checked with its line: a known id, labeled
// once, unsafe 0 or 1; at most one row per trajectory of the pool.
inline std::vector<LabelRow> read_label_rows(CsvFile& csv, const PoolFile& pool) {
  const std::size_t id_column = csv.column("id");
  const std::size_t unsafe_column = csv.column("unsafe");
  std::vector<LabelRow> rows;
  std::unordered_map<std::int64_t, std::int64_t> line_of_position;
  for (CsvRecord row; csv.next(row);) {
    const std::string_view id = row.fields[id_column];
    if (id.empty()) csv.fail(row.line, "id is missing");
    const std::string_view bit = row.fields[unsafe_column];
    if (bit != "0" && bit != "1")
      csv.fail(row.line, bit.empty() ? std::string("unsafe is missing (0 or 1)")
                                     : cat("unsafe ", in_quotes(bit), " must be 0 or 1"));
    rows.push_back(
        {labeled_position(csv, row, id, pool, rows.size(), line_of_position), bit == "1"});
  }
  return rows;
}

// The same from a file.
inline std::vector<LabelRow> read_label_rows(const std::string& path, const PoolFile& pool) {
  CsvFile csv = CsvFile::read(path);
  return read_label_rows(csv, pool);
}

// A labeled calibration set, mapped onto the pool's positions by the library
// (curation::calibration_from_labels) once every row has been checked here with its line;
// from a CSV file already in memory (read_labels below reads the file).
inline curation::Calibration read_labels(CsvFile csv, const PoolFile& pool) {
  const std::vector<LabelRow> rows = read_label_rows(csv, pool);
  if (rows.empty())
    csv.fail(csv.header_line(), "no labels after the header: at least one is needed");
  std::vector<std::int64_t> ids, bits;
  for (const LabelRow& row : rows) {
    ids.push_back(pool.pool.id[static_cast<std::size_t>(row.position)]);
    bits.push_back(row.unsafe ? 1 : 0);
  }
  return curation::calibration_from_labels(pool.pool.id, ids, bits);
}

// The same from a file.
inline curation::Calibration read_labels(const std::string& path, const PoolFile& pool) {
  return read_labels(CsvFile::read(path), pool);
}

// One score per pool trajectory from its states' values (curation::trajectory_scores), from
// a CSV file already in memory (id,value: the rows of a trajectory in any order).
inline std::vector<double> read_state_scores(CsvFile csv, const PoolFile& pool,
                                             const curation::Aggregator& aggregator) {
  const std::size_t id_column = csv.column("id");
  const std::size_t value_column = csv.column("value");
  std::vector<std::int64_t> owner;
  std::vector<double> value;
  for (CsvRecord row; csv.next(row);) {
    const std::string_view id = row.fields[id_column];
    if (id.empty()) csv.fail(row.line, "id is missing");
    const std::optional<std::int64_t> position = pool.position_of(id);
    if (!position) csv.fail(row.line, pool.not_in(id));
    owner.push_back(*position);
    value.push_back(finite_field(csv, row, value_column, "value"));
  }
  // Group by trajectory (a stable counting sort), then aggregate.
  const auto N = static_cast<std::size_t>(pool.size());
  std::vector<std::int64_t> offsets(N + 1, 0);
  for (const std::int64_t p : owner) ++offsets[static_cast<std::size_t>(p) + 1];
  for (std::size_t i = 0; i < N; ++i)
    if (offsets[i + 1] == 0)
      csv.fail_file(cat("no state values for id ", pool.id_of(static_cast<std::int64_t>(i)), " (",
                        pool.where(static_cast<std::int64_t>(i)), ")"));
  for (std::size_t i = 0; i < N; ++i) offsets[i + 1] += offsets[i];
  std::vector<std::int64_t> next(offsets.begin(), offsets.end() - 1);
  std::vector<double> grouped(value.size());
  for (std::size_t r = 0; r < value.size(); ++r)
    grouped[static_cast<std::size_t>(next[static_cast<std::size_t>(owner[r])]++)] = value[r];
  return curation::trajectory_scores(grouped, offsets, aggregator);
}

// The same from a file.
inline std::vector<double> read_state_scores(const std::string& path, const PoolFile& pool,
                                             const curation::Aggregator& aggregator) {
  return read_state_scores(CsvFile::read(path), pool, aggregator);
}

}  // namespace ltt::certification
