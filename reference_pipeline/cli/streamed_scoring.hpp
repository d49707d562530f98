#pragma once
// V-bar on every row of a DSRL file and the per-episode scores, in bounded memory (`ltt score`,
// `ltt curate`; docs/scale.md): the observations are read a block of rows at a time (HDF5
// hyperslabs in the crash-isolated reader child, data::for_each_dsrl_float32_block), each block
// is evaluated on all threads, its values go into the per-episode sums
// (curation::TrajectoryScoreStream) and, as float32, into a staged state_values.npy; then the
// block is dropped. Memory: one block, sized from --memory (block_rows), besides the episode
// table.
//
// The same bytes as one evaluation of the whole table, whatever the budget and thread count:
// every block but the last is a multiple of learning::state_values_chunk rows, so state_values
// makes the same forward calls on the same rows, and TrajectoryScoreStream repeats
// trajectory_scores' operations in its order. A dataset of several files is streamed one file
// after another, each from its own row 0: its scores and values are those of each file scored
// alone, put end to end (and ltt.dask's, which reads the files the same way).

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <curation/streamed_scores.hpp>

#include <data/atomic_output.hpp>
#include <data/dsrl.hpp>
#include <data/npy.hpp>
#include <learning/progress.hpp>
#include <learning/value_training.hpp>

#include <certification/bad_input.hpp>
#include <certification/format.hpp>

namespace ltt::cli {

// --memory's default: the block of rows evaluated at once, not the episode table.
inline constexpr std::int64_t default_scoring_memory = std::int64_t{1} << 30;

// Bytes held per row of a block: the float32 observations, every member's value and V-bar in
// double (learning::StateValues), and V-bar as float32 for state_values.npy.
inline std::int64_t scoring_bytes_per_row(std::int64_t observation_dim, std::int64_t members) {
  return 4 * observation_dim + 8 * members + 8 + 4;
}

// Rows per block: the most whole state_values chunks the budget holds.
inline std::int64_t scoring_block_rows(std::int64_t memory, std::int64_t bytes_per_row) {
  const std::int64_t chunk = learning::state_values_chunk;
  return memory / bytes_per_row / chunk * chunk;
}

// Refuses a --memory that holds no whole chunk of rows, before any work.
inline void check_scoring_memory(std::int64_t memory, std::int64_t observation_dim,
                                 std::int64_t members) {
  const std::int64_t per_row = scoring_bytes_per_row(observation_dim, members);
  if (scoring_block_rows(memory, per_row) == 0)
    throw BadInput(cat("--memory: ", std::to_string(memory), " bytes hold fewer than ",
                       std::to_string(learning::state_values_chunk), " rows of ",
                       std::to_string(per_row), " bytes (observations of ",
                       std::to_string(observation_dim), " values, ", std::to_string(members),
                       " members); give at least ",
                       std::to_string(learning::state_values_chunk * per_row)));
}

// A file filled while the run computes and moved into --out DIR with the other outputs: it lives
// next to DIR (same file system, so the move is a rename) and is removed unless moved.
class StagedFile {
 public:
  StagedFile(const std::filesystem::path& out, std::string_view name) {
    namespace fs = std::filesystem;
    const fs::path absolute = fs::absolute(out);
    // As write_output_directory does before it stages a new DIR: its parent may not exist yet.
    std::error_code ec;
    fs::create_directories(absolute.parent_path(), ec);
    std::string pattern =
        (absolute.parent_path() / cat(".", absolute.filename().string(), ".", name, ".ltt-XXXXXX"))
            .string();
    const int fd = ::mkstemp(pattern.data());
    if (fd < 0)
      throw BadInput(cat("--out: cannot create a file next to ", in_quotes(out.string()), ": ",
                         std::strerror(errno)));
    ::close(fd);
    path_ = pattern;
    stream_.open(path_, std::ios::binary | std::ios::trunc);
    if (!stream_) throw BadInput(cat("--out: cannot write ", in_quotes(path_.string())));
  }
  ~StagedFile() {
    std::error_code ec;
    std::filesystem::remove(path_, ec);
  }
  StagedFile(const StagedFile&) = delete;
  StagedFile& operator=(const StagedFile&) = delete;

  void write(const void* bytes, std::size_t n) {
    stream_.write(static_cast<const char*>(bytes), static_cast<std::streamsize>(n));
    if (!stream_) throw BadInput(cat("--out: cannot write ", in_quotes(path_.string())));
  }
  void close() {
    stream_.close();
    if (!stream_) throw BadInput(cat("--out: cannot write ", in_quotes(path_.string())));
  }
  // The file becomes `destination`, atomically (data::write_file_atomically's rules).
  void move_to(const std::filesystem::path& destination) const {
    data::write_file_atomically(destination, [&](const std::filesystem::path& temporary) {
      std::error_code ec;
      std::filesystem::rename(path_, temporary, ec);
      if (ec)  // another file system (DIR a mount point): copy
        std::filesystem::copy_file(path_, temporary,
                                   std::filesystem::copy_options::overwrite_existing);
    });
  }

 private:
  std::filesystem::path path_;
  std::ofstream stream_;
};

// "scoring: 3145728 of 50000000 rows, 61234 rows/s, 765 s left" on stderr after each block: in
// place on a terminal (automatic), one line per block with --progress, nothing with --quiet.
class ScoringProgress {
 public:
  ScoringProgress(learning::Progress mode, std::int64_t rows) : rows_(rows) {
    enabled_ = mode == learning::Progress::always ||
               (mode == learning::Progress::automatic && ::isatty(STDERR_FILENO));
    in_place_ = mode == learning::Progress::automatic;
  }
  ~ScoringProgress() {
    if (enabled_ && in_place_ && shown_) std::cerr << "\n";
  }
  void done(std::int64_t rows) {
    if (!enabled_) return;
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    const double rate = seconds > 0 ? static_cast<double>(rows) / seconds : 0.0;
    const double left = rate > 0 ? static_cast<double>(rows_ - rows) / rate : 0.0;
    std::cerr << (in_place_ ? "\r" : "") << "scoring: " << rows << " of " << rows_ << " rows, "
              << std::llround(rate) << " rows/s, " << std::llround(left) << " s left"
              << (in_place_ ? "" : "\n") << std::flush;
    shown_ = true;
  }

 private:
  std::int64_t rows_;
  bool enabled_ = false, in_place_ = false, shown_ = false;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

struct StreamedScores {
  std::vector<double> scores;                // one per episode
  std::unique_ptr<StagedFile> state_values;  // state_values.npy, unless not asked for
  std::int64_t block_rows = 0, blocks = 0, bytes_per_row = 0;
  double read_seconds = 0, score_seconds = 0;  // reading the blocks, evaluating them
};

struct StreamedScoring {
  std::filesystem::path out;
  std::int64_t memory = default_scoring_memory;
  bool state_values = true;  // stage state_values.npy
  std::int64_t threads = 1;
  const learning::Backend* backend = nullptr;
  curation::Aggregator aggregator{};
  learning::Progress progress = learning::Progress::automatic;
};

inline StreamedScores stream_scores(const StreamedScoring& s, const data::DsrlPool& dataset,
                                    const learning::ValueEnsemble& ensemble) {
  using clock = std::chrono::steady_clock;
  const std::int64_t d = dataset.observation_dim, rows = dataset.transitions;
  StreamedScores r;
  r.bytes_per_row = scoring_bytes_per_row(d, static_cast<std::int64_t>(ensemble.members.size()));
  r.block_rows = scoring_block_rows(s.memory, r.bytes_per_row);
  if (s.state_values) {
    r.state_values = std::make_unique<StagedFile>(s.out, "state_values.npy");
    const std::string header = data::npy_header(data::DType::float32, {rows});
    r.state_values->write(header.data(), header.size());
  }
  ScoringProgress progress(s.progress, rows);
  std::vector<float> as_float;
  const auto started = clock::now();
  r.scores.reserve(dataset.episodes.size());
  for (const data::DsrlPart& part : dataset.parts) {
    // The file's episodes on its own rows.
    std::vector<std::int64_t> offsets{0};
    for (std::int64_t e = 0; e < part.episodes; ++e)
      offsets.push_back(offsets.back() +
                        dataset.episodes[static_cast<std::size_t>(part.first_episode + e)].length);
    curation::TrajectoryScoreStream stream(std::move(offsets), s.aggregator);
    data::for_each_dsrl_float32_block(
        part.file, "observations", r.block_rows,
        [&](std::int64_t first, std::span<const float> block) {
          const auto t = clock::now();
          const learning::StateValues v =
              learning::state_values(ensemble, block, d, *s.backend, s.threads);
          stream.add(v.mean);
          if (r.state_values) {
            as_float.assign(v.mean.begin(), v.mean.end());
            r.state_values->write(as_float.data(), as_float.size() * sizeof(float));
          }
          r.score_seconds += std::chrono::duration<double>(clock::now() - t).count();
          ++r.blocks;
          progress.done(part.first_row + first + v.rows);
        });
    if (stream.rows() != part.rows)
      throw BadInput(cat(part.file, ": observations changed while being scored (",
                         std::to_string(stream.rows()), " rows of ", std::to_string(part.rows),
                         ")"));
    const std::vector<double>& scores = stream.scores();
    r.scores.insert(r.scores.end(), scores.begin(), scores.end());
  }
  r.read_seconds = std::chrono::duration<double>(clock::now() - started).count() - r.score_seconds;
  if (r.state_values) r.state_values->close();
  return r;
}

}  // namespace ltt::cli
