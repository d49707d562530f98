#pragma once
// --pairs-file: the preference pairs of `ltt score` given by the user instead of synthesized
// from the file's costs (docs/cli.md, "ltt score").

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string_view>

#include <data/dataset_files.hpp>
#include <data/dsrl.hpp>
#include <learning/value_training.hpp>

#include <certification/format.hpp>
#include <certification/table_reader.hpp>

namespace ltt::cli {

// --pairs-file: episode_a,start_a,episode_b,start_b,preferred, starts counted from the first
// row of each episode, preferred naming the safer segment; an episode is its index (FILE:INDEX
// in a dataset of several files, data/dataset_files.hpp). Returned as rows of the dataset.
inline learning::SegmentPairs read_pairs_file(const std::filesystem::path& path,
                                              const data::DsrlPool& dataset, std::int64_t H) {
  CsvFile csv = CsvFile::read(path);
  const std::size_t columns[] = {csv.column("episode_a"), csv.column("start_a"),
                                 csv.column("episode_b"), csv.column("start_b"),
                                 csv.column("preferred", " (a or b: the safer segment)")};
  learning::SegmentPairs pairs{H, {}, {}};
  for (CsvRecord row; csv.next(row);) {
    std::int64_t first[2];
    for (int side = 0; side < 2; ++side) {
      const std::string_view name = side == 0 ? "a" : "b";
      std::int64_t e = 0;
      if (dataset.several_files()) {
        const std::string_view id = row.fields[columns[2 * side]];
        const std::optional<std::int64_t> found = data::find_episode(dataset, id);
        if (!found)
          csv.fail(row.line, cat("episode_", name, " ", in_quotes(id),
                                 " names no episode: ids are FILE:INDEX, FILE one of ",
                                 dataset.parts.front().name, " to ", dataset.parts.back().name));
        e = *found;
      } else {
        e = integer_field(csv, row, columns[2 * side], cat("episode_", name));
        if (e < 0 || e >= dataset.size())
          csv.fail(row.line,
                   cat("episode_", name, " ", std::to_string(e), " does not exist: ", dataset.file,
                       " holds episodes 0 to ", std::to_string(dataset.size() - 1)));
      }
      const data::Episode& episode = dataset.episodes[static_cast<std::size_t>(e)];
      const std::int64_t start =
          integer_field(csv, row, columns[2 * side + 1], cat("start_", name));
      if (start < 0 || start + H > episode.length)
        csv.fail(row.line, cat("start_", name, " ", std::to_string(start), ": a segment of H = ",
                               std::to_string(H), " rows from there does not fit episode ",
                               data::episode_id(dataset, e), " (", std::to_string(episode.length),
                               " rows; starts 0 to ", std::to_string(episode.length - H), ")"));
      first[side] = episode.start + start;
    }
    const std::string_view preferred = row.fields[columns[4]];
    if (preferred != "a" && preferred != "b")
      csv.fail(row.line, cat("preferred ", in_quotes(preferred), " is not a or b"));
    const bool a = preferred == "a";
    pairs.preferred.push_back(first[a ? 0 : 1]);
    pairs.rejected.push_back(first[a ? 1 : 0]);
  }
  if (pairs.preferred.empty()) csv.fail_file("holds no pairs");
  return pairs;
}

}  // namespace ltt::cli
