#include "dataset_files.hpp"

#include <glob.h>
#include <sys/stat.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <system_error>
#include <utility>

#include "atomic_output.hpp"
#include "dsrl_store.hpp"
#include "error.hpp"

namespace ltt::data {

namespace fs = std::filesystem;
using detail::cat;
using detail::in_quotes;

namespace {

constexpr std::string_view fn_paths = "dataset_paths";

bool is_npy_store(const fs::path& dir) {
  std::error_code ec;
  return fs::is_directory(dir, ec) && fs::exists(dir / "observations.npy", ec);
}

bool is_hdf5_name(const fs::path& file) { return store_for(file) == DsrlStore::hdf5; }

// The datasets directly inside a directory that is not itself a .npy store, sorted by name.
std::vector<fs::path> datasets_in(const fs::path& dir) {
  std::vector<fs::path> found;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    const fs::path p = dir / e.path().filename();
    if ((e.is_regular_file(ec) && is_hdf5_name(p)) || is_npy_store(p)) found.push_back(p);
  }
  if (ec)
    throw DataError(cat(fn_paths, ": cannot list ", in_quotes(dir.string()), ": ", ec.message()));
  std::sort(found.begin(), found.end(),
            [](const fs::path& a, const fs::path& b) { return a.filename() < b.filename(); });
  if (found.empty())
    throw DataError(cat(in_quotes(dir.string()),
                        ": the directory holds no dataset (no .hdf5 or .h5 file, no directory "
                        "with observations.npy)"));
  return found;
}

std::vector<fs::path> glob_matches(const std::string& pattern) {
  glob_t g{};
  const int rc = ::glob(pattern.c_str(), GLOB_ERR, nullptr, &g);
  std::vector<fs::path> found;
  if (rc == 0)
    for (std::size_t i = 0; i < g.gl_pathc; ++i) found.emplace_back(g.gl_pathv[i]);
  ::globfree(&g);
  if (rc == GLOB_NOMATCH || (rc == 0 && found.empty()))
    throw DataError(cat(in_quotes(pattern), ": the pattern matches no file"));
  if (rc != 0) throw DataError(cat(in_quotes(pattern), ": the pattern cannot be read"));
  return found;  // glob(3) sorts them
}

// The deepest directory holding every path (absolute and lexically normal).
fs::path common_directory(const std::vector<fs::path>& absolute) {
  fs::path common = absolute.front().parent_path();
  for (const fs::path& p : absolute) {
    const fs::path parent = p.parent_path();
    fs::path next;
    auto a = common.begin();
    auto b = parent.begin();
    for (; a != common.end() && b != parent.end() && *a == *b; ++a, ++b) next /= *a;
    common = next;
  }
  return common;
}

}  // namespace

std::vector<fs::path> dataset_paths(std::span<const std::string> named) {
  if (named.empty()) throw DataError(cat(fn_paths, ": no dataset named"));
  std::vector<fs::path> files;
  for (const std::string& name : named) {
    const fs::path p(name);
    std::error_code ec;
    if (fs::exists(p, ec)) {
      if (fs::is_directory(p, ec) && !is_npy_store(p)) {
        const std::vector<fs::path> inside = datasets_in(p);
        files.insert(files.end(), inside.begin(), inside.end());
      } else {
        files.push_back(p);
      }
    } else if (name.find_first_of("*?[") != std::string::npos) {
      const std::vector<fs::path> matched = glob_matches(name);
      files.insert(files.end(), matched.begin(), matched.end());
    } else {
      files.push_back(p);  // load_dsrl_pool says it does not exist, in its words
    }
  }
  // A file named twice, or by two names (a link, "a/./b"): its episodes would count twice. One
  // stat per file and a lookup, so a fleet's thousands of files cost no more than listing them;
  // a name that does not exist is compared as written (load_dsrl_pool refuses it).
  std::map<std::pair<dev_t, ino_t>, std::size_t> by_inode;
  std::map<fs::path, std::size_t> by_name;
  for (std::size_t i = 0; i < files.size(); ++i) {
    struct stat st {};
    const bool found = ::stat(files[i].c_str(), &st) == 0;
    const std::size_t j = found ? by_inode.try_emplace({st.st_dev, st.st_ino}, i).first->second
                                : by_name.try_emplace(files[i], i).first->second;
    if (j != i)
      throw DataError(
          cat(in_quotes(files[i].string()), ": the dataset names this file twice",
              files[i] == files[j] ? "" : cat(" (also as ", in_quotes(files[j].string()), ")"),
              "; its episodes would count twice"));
  }
  return files;
}

DsrlPool load_dsrl_pool(std::span<const fs::path> files) {
  if (files.empty()) throw DataError("load_dsrl_pool: no file given");
  if (files.size() == 1) return load_dsrl_pool(files.front());
  std::vector<fs::path> absolute;
  for (const fs::path& f : files) absolute.push_back(fs::absolute(f).lexically_normal());
  for (fs::path& a : absolute)
    if (!a.has_filename()) a = a.parent_path();  // "d/": a .npy directory
  const fs::path common = common_directory(absolute);
  DsrlPool all;
  for (std::size_t i = 0; i < files.size(); ++i) {
    DsrlPool one = load_dsrl_pool(files[i]);
    if (i == 0) {
      all.observation_dim = one.observation_dim;
      all.action_dim = one.action_dim;
      all.store = one.store;
    } else if (one.observation_dim != all.observation_dim || one.action_dim != all.action_dim) {
      throw DataError(cat(one.file, ": observations of ", std::to_string(one.observation_dim),
                          " values and actions of ", std::to_string(one.action_dim), ", but ",
                          all.parts.front().file, " has ", std::to_string(all.observation_dim),
                          " and ", std::to_string(all.action_dim),
                          ": the files of one dataset share their shapes"));
    }
    DsrlPart part = one.parts.front();
    part.name = absolute[i].lexically_relative(common).string();
    part.first_row = all.transitions;
    part.first_episode = all.size();
    for (Episode e : one.episodes) {
      e.index += part.first_episode;
      e.start += part.first_row;
      all.episodes.push_back(e);
    }
    all.transitions += one.transitions;
    all.dropped_tail += one.dropped_tail;
    all.parts.push_back(std::move(part));
  }
  const fs::path shown = fs::path(files.front()).parent_path();
  all.file = cat(std::to_string(files.size()), " files",
                 shown.empty() ? std::string() : cat(" in ", shown.string()), " (",
                 all.parts.front().name, " to ", all.parts.back().name, ")");
  return all;
}

const DsrlPart& part_of_episode(std::span<const DsrlPart> parts, std::int64_t e) {
  const std::int64_t episodes =
      parts.empty() ? 0 : parts.back().first_episode + parts.back().episodes;
  if (e < 0 || e >= episodes)
    throw DataError(cat("part_of_episode: episode ", std::to_string(e), " is outside [0, ",
                        std::to_string(episodes), ")"));
  const auto it =
      std::upper_bound(parts.begin(), parts.end(), e,
                       [](std::int64_t x, const DsrlPart& p) { return x < p.first_episode; });
  return *std::prev(it);
}

std::string episode_id(std::span<const DsrlPart> parts, std::int64_t e) {
  const DsrlPart& part = part_of_episode(parts, e);
  if (parts.size() == 1) return std::to_string(e);
  return cat(part.name, ":", std::to_string(e - part.first_episode));
}

std::optional<std::int64_t> find_episode(std::span<const DsrlPart> parts, std::string_view id) {
  if (parts.size() == 1) {
    const std::optional<std::int64_t> e = parse_integer(id);
    if (!e || *e < 0 || *e >= parts.front().episodes) return std::nullopt;
    return e;
  }
  const std::size_t colon = id.rfind(':');
  if (colon == std::string_view::npos) return std::nullopt;
  const std::string_view name = id.substr(0, colon);
  const std::optional<std::int64_t> local = parse_integer(id.substr(colon + 1));
  if (!local) return std::nullopt;
  for (const DsrlPart& part : parts)
    if (part.name == name) {
      if (*local < 0 || *local >= part.episodes) return std::nullopt;
      return part.first_episode + *local;
    }
  return std::nullopt;
}

std::vector<std::int64_t> episode_offsets(const DsrlPool& pool) {
  std::vector<std::int64_t> offsets{0};
  offsets.reserve(pool.episodes.size() + 1);
  for (const Episode& e : pool.episodes) offsets.push_back(offsets.back() + e.length);
  return offsets;
}

std::vector<double> episode_rows(const DsrlPool& pool, std::span<const double> per_row) {
  if (static_cast<std::int64_t>(per_row.size()) != pool.transitions)
    throw DataError(cat("episode_rows: ", std::to_string(per_row.size()), " values for the ",
                        std::to_string(pool.transitions), " rows of ", pool.file));
  std::vector<double> kept;
  kept.reserve(static_cast<std::size_t>(pool.transitions - pool.dropped_tail));
  for (const DsrlPart& part : pool.parts) {
    const auto first = per_row.begin() + part.first_row;
    kept.insert(kept.end(), first, first + (part.rows - part.dropped_tail));
  }
  return kept;
}

void to_pool_rows(const DsrlPool& pool, std::span<std::int64_t> rows) {
  // Row r of the episodes' rows lies in the part whose episode rows cover it; the tails of the
  // parts before it are skipped.
  std::vector<std::int64_t> end_of_part;  // in the episodes' rows
  std::int64_t kept = 0;
  for (const DsrlPart& part : pool.parts)
    end_of_part.push_back(kept += part.rows - part.dropped_tail);
  for (std::int64_t& r : rows) {
    const auto p = static_cast<std::size_t>(
        std::upper_bound(end_of_part.begin(), end_of_part.end(), r) - end_of_part.begin());
    if (r < 0 || p == end_of_part.size())
      throw DataError(cat("to_pool_rows: row ", std::to_string(r), " is outside [0, ",
                          std::to_string(kept), ")"));
    const std::int64_t part_start = p == 0 ? 0 : end_of_part[p - 1];
    r = pool.parts[p].first_row + (r - part_start);
  }
}

std::vector<double> read_dsrl_costs(const DsrlPool& pool) {
  if (!pool.several_files()) return read_dsrl_costs(pool.parts.front().file);
  std::vector<double> costs;
  costs.reserve(static_cast<std::size_t>(pool.transitions));
  for (const DsrlPart& part : pool.parts) {
    const std::vector<double> one = read_dsrl_costs(part.file);
    if (static_cast<std::int64_t>(one.size()) != part.rows)
      throw DataError(cat(part.file, ": the file changed while being read (",
                          std::to_string(one.size()), " rows, then ", std::to_string(part.rows),
                          ")"));
    costs.insert(costs.end(), one.begin(), one.end());
  }
  return costs;
}

Array read_dsrl_float32(const DsrlPool& pool, std::string_view key) {
  if (!pool.several_files()) return read_dsrl_float32(pool.parts.front().file, key);
  Array all;
  for (const DsrlPart& part : pool.parts) {
    Array one = read_dsrl_float32(part.file, key);
    if (one.rows() != part.rows)
      throw DataError(cat(part.file, ": the file changed while being read (",
                          std::to_string(one.rows()), " rows, then ", std::to_string(part.rows),
                          ")"));
    if (all.shape.empty()) {
      all = std::move(one);
      all.bytes.reserve(static_cast<std::size_t>(pool.transitions * all.row_size()) *
                        sizeof(float));
    } else {
      all.bytes.insert(all.bytes.end(), one.bytes.begin(), one.bytes.end());
      all.shape[0] += one.shape[0];
    }
  }
  return all;
}

std::vector<std::int64_t> write_dsrl_selection(const DsrlPool& pool, const fs::path& out,
                                               std::span<const std::int64_t> episode_indices) {
  detail::check_indices(pool, episode_indices, "write_dsrl_selection");
  if (!pool.several_files()) {
    write_dsrl_selection(pool.parts.front().file, out, episode_indices);
    return {static_cast<std::int64_t>(episode_indices.size())};
  }
  if (episode_indices.empty())
    detail::fail(out.string(),
                 cat("the selection from ", pool.file, " is empty; nothing to write"));
  // Each file's episodes in the order given, as indices into that file.
  std::vector<std::vector<std::int64_t>> local(pool.parts.size());
  for (const std::int64_t e : episode_indices) {
    const DsrlPart& part = part_of_episode(pool, e);
    local[static_cast<std::size_t>(&part - pool.parts.data())].push_back(e - part.first_episode);
  }
  write_directory_atomically(
      out,
      [&](const fs::path& temporary) {
        for (std::size_t p = 0; p < pool.parts.size(); ++p) {
          if (local[p].empty()) continue;
          const fs::path target = temporary / pool.parts[p].name;
          fs::create_directories(target.parent_path());
          write_dsrl_selection(pool.parts[p].file, target, local[p]);
        }
      },
      DirectoryContents::dsrl_datasets);
  std::vector<std::int64_t> written;
  for (const std::vector<std::int64_t>& l : local)
    written.push_back(static_cast<std::int64_t>(l.size()));
  return written;
}

}  // namespace ltt::data
