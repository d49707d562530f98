#pragma once
// A DSRL dataset as the program's pool (docs/dsrl.md, docs/cli.md "ltt certify --dataset"):
// one trajectory per episode, id = episode index (DSRL's and OSRL's episode order), with the
// episode's length, return and cost from the file. A dataset of several files
// (data/dataset_files.hpp) has their episodes one file after another, id = FILE:EPISODE. The
// scores come from a second file:
//
//   per episode (--scores)          CSV id,score with every episode index once, or a .npy of
//                                   one float per episode, in episode order
//   per transition (--state-values) a .npy of one float per row of the dataset, or CSV with a
//                                   'value' column, one record per row in row order; or CSV
//                                   id,value (id = episode index, as for a pool). Aggregated
//                                   per episode (curation::trajectory_scores); values of the
//                                   dropped tail's rows are checked but belong to no episode.
//
// Each reader says where a problem is: the file, and the line, row or episode.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <curation/score_aggregation.hpp>
#include <data/dataset_files.hpp>
#include <data/dsrl.hpp>
#include <data/json_writer.hpp>
#include <data/npy.hpp>

#include "bad_input.hpp"
#include "format.hpp"
#include "pool_file.hpp"
#include "table_reader.hpp"

namespace ltt::certification {

// What --dataset names: the files (one, or several from files, directories and glob patterns,
// data::dataset_paths) and how messages and JSON name them all: the one file's path, or the
// names as typed.
struct DatasetNames {
  std::string shown;
  std::vector<std::filesystem::path> files;
};

inline DatasetNames dataset_names(const std::vector<std::string>& named) {
  DatasetNames r;
  try {
    r.files = data::dataset_paths(named);
  } catch (const data::DataError& e) {
    throw BadInput(cat("--dataset: ", e.what()));
  }
  for (const std::string& name : named) r.shown += cat(r.shown.empty() ? "" : " ", name);
  if (named.size() == 1 && r.files.size() == 1) r.shown = r.files.front().string();
  return r;
}

// A store as JSON names it.
inline std::string_view store_name(data::DsrlStore store) {
  return store == data::DsrlStore::hdf5 ? "hdf5" : "npy-directory";
}

// A dataset of several files: "files", one object per file (its path, the name ids give it,
// where its episodes and rows sit). Nothing for one file.
inline void write_dataset_parts_json(data::JsonWriter& json, const data::DsrlPool& dataset) {
  if (!dataset.several_files()) return;
  json.key("files").begin_array();
  for (const data::DsrlPart& p : dataset.parts)
    json.begin_object()
        .field("file", p.file)
        .field("name", p.name)
        .field("store", store_name(p.store))
        .field("first_episode", p.first_episode)
        .field("episodes", p.episodes)
        .field("first_row", p.first_row)
        .field("transitions", p.rows)
        .field("dropped_tail", p.dropped_tail)
        .end_object();
  json.end_array();
}

// For a summary line: the rows in no episode, or nothing when there are none.
inline std::string dropped_tail_text(const data::DsrlPool& dataset) {
  if (dataset.dropped_tail == 0) return {};
  if (dataset.several_files())
    return cat(" (", std::to_string(dataset.dropped_tail),
               " rows in all, truncated episodes at the ends of files, are in none)");
  return cat(" (the last ", std::to_string(dataset.dropped_tail),
             " rows, a truncated episode, are in none)");
}

// The episodes of `dataset` as a pool without scores.
inline PoolFile dataset_pool(const data::DsrlPool& dataset, const std::string& name) {
  PoolFile f;
  f.name = name;
  f.source = PoolSource::dataset;
  f.pool = data::episode_pool(dataset);
  f.parts = dataset.parts;
  return f;
}

// One score per episode, in episode order.
inline std::vector<double> read_episode_scores(const std::string& path, const PoolFile& pool,
                                               const data::DsrlPool& dataset) {
  const auto E = static_cast<std::size_t>(pool.size());
  if (path.ends_with(".npy")) {
    std::vector<double> score = data::read_npy_vector(path);
    if (score.size() != E)
      throw BadInput(cat(path, ": ", std::to_string(score.size()), " scores for the ",
                         std::to_string(E), " episodes of ", pool.name,
                         "; one score per episode, in episode order",
                         static_cast<std::int64_t>(score.size()) == dataset.transitions
                             ? " (one per transition row is --state-values)"
                             : ""));
    for (std::size_t i = 0; i < E; ++i)
      if (!std::isfinite(score[i]))
        throw BadInput(cat(path, ", row ", std::to_string(i), ": score ", shortest(score[i]),
                           " is not a finite number"));
    return score;
  }
  CsvFile csv = CsvFile::read(path);
  const std::size_t id_column = csv.column("id", " (the episode index)");
  const std::size_t score_column = csv.column("score");
  std::vector<double> score(E, 0.0);
  std::vector<std::int64_t> line_of(E, 0);
  for (CsvRecord row; csv.next(row);) {
    const std::string_view id = row.fields[id_column];
    if (id.empty()) csv.fail(row.line, "id is missing");
    const std::optional<std::int64_t> position = pool.position_of(id);
    if (!position) csv.fail(row.line, pool.not_in(id));
    const auto p = static_cast<std::size_t>(*position);
    if (line_of[p] != 0)
      csv.fail(row.line, cat("episode ", std::to_string(*position),
                             " is scored twice (also on line ", std::to_string(line_of[p]), ")"));
    line_of[p] = row.line;
    score[p] = finite_field(csv, row, score_column, "score");
  }
  for (std::size_t p = 0; p < E; ++p)
    if (line_of[p] == 0)
      csv.fail_file(cat("no score for episode ", std::to_string(pool.pool.id[p]), " of ", pool.name,
                        " (", std::to_string(E), " episodes: every one needs a score)"));
  return score;
}

// One score per episode from one value per transition row: the aggregate of the rows of each
// episode.
inline std::vector<double> read_transition_scores(const std::string& path, const PoolFile& pool,
                                                  const data::DsrlPool& dataset,
                                                  const curation::Aggregator& aggregator) {
  const auto N = static_cast<std::size_t>(dataset.transitions);
  const auto count_message = [&](std::size_t count) {
    return cat(std::to_string(count), " state values for the ", std::to_string(N),
               " transition rows of ", pool.name, "; one value per row, in row order",
               static_cast<std::int64_t>(count) == dataset.size()
                   ? " (one score per episode is --scores)"
                   : "");
  };
  std::vector<double> value;
  if (path.ends_with(".npy")) {
    value = data::read_npy_vector(path);
    if (value.size() != N) throw BadInput(cat(path, ": ", count_message(value.size())));
    for (std::size_t r = 0; r < N; ++r)
      if (!std::isfinite(value[r]))
        throw BadInput(cat(path, ", row ", std::to_string(r), ": value ", shortest(value[r]),
                           " is not a finite number"));
  } else {
    CsvFile csv = CsvFile::read(path);
    if (csv.find_column("id")) return read_state_scores(std::move(csv), pool, aggregator);
    const std::size_t value_column = csv.column("value", " (one per transition row)");
    for (CsvRecord row; csv.next(row);) {
      if (value.size() == N)
        csv.fail(row.line, cat("more state values than the ", std::to_string(N),
                               " transition rows of ", pool.name));
      value.push_back(finite_field(csv, row, value_column, "value"));
    }
    if (value.size() != N) csv.fail_file(count_message(value.size()));
  }
  // The rows of the dropped tails belong to no episode.
  return curation::trajectory_scores(data::episode_rows(dataset, value),
                                     data::episode_offsets(dataset), aggregator);
}

}  // namespace ltt::certification
