#pragma once
// The --out DIR of `ltt score` and `ltt curate`: every file of a run, written only after all
// the compute, and all of them or none.
//
//   DIR absent    the files are written into a fresh temporary directory next to DIR, which is
//                 then renamed to DIR (one atomic step): a failed run leaves nothing behind.
//   DIR exists    each file is written atomically (data::write_*_atomically) in turn; if one
//                 fails, the files this run created are removed again (a file that replaced an
//                 earlier one of the same name stays: the old one is gone).
//
// check_output_directory runs before any work: DIR must be a directory or a new path in a
// writable directory, and none of the files the run will write may be one of its inputs (a
// dataset stored as a directory of .npy files given as DIR, a --model inside DIR).

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "bad_input.hpp"
#include "format.hpp"

namespace ltt::cli {

// One file of the run: its name inside DIR and the writer that fills it at the path given.
struct OutputFile {
  std::string name;
  std::function<void(const std::filesystem::path&)> write;
};

// Same file: the same name, or the same absolute path once "." and ".." and links are resolved.
inline bool same_file(const std::filesystem::path& a, const std::filesystem::path& b) {
  namespace fs = std::filesystem;
  if (a == b) return true;
  std::error_code ec;
  const fs::path x = fs::weakly_canonical(fs::absolute(a, ec), ec);
  const fs::path y = fs::weakly_canonical(fs::absolute(b, ec), ec);
  return !x.empty() && x == y;
}

// Refuses an --out that is not a directory and cannot be created as one: a file there, a
// missing ancestor that is a file, an ancestor without write permission.
inline void check_directory_creatable(const std::filesystem::path& out) {
  namespace fs = std::filesystem;
  const std::string shown = out.string();
  std::error_code ec;
  if (fs::exists(out, ec) && !fs::is_directory(out, ec))
    throw BadInput(cat("--out: ", in_quotes(shown), " exists and is not a directory"));
  fs::path probe = fs::absolute(out, ec);
  while (!fs::exists(probe, ec) && probe.has_parent_path() && probe.parent_path() != probe)
    probe = probe.parent_path();
  if (!fs::is_directory(probe, ec))
    throw BadInput(cat("--out: cannot create ", in_quotes(shown), ": ", in_quotes(probe.string()),
                       " is not a directory"));
  if (::access(probe.c_str(), W_OK | X_OK) != 0)
    throw BadInput(cat("--out: cannot write ", in_quotes(shown), ": ", std::strerror(errno)));
}

// Refuses, before any work, an --out that cannot hold the run's files or would replace an input.
// names: the files the run writes into DIR; inputs: (flag, path) of every file the run reads.
inline void check_output_directory(
    const std::filesystem::path& out, const std::vector<std::string>& names,
    const std::vector<std::pair<std::string_view, std::filesystem::path>>& inputs) {
  check_directory_creatable(out);
  for (const auto& [flag, input] : inputs) {
    if (same_file(out, input))
      throw BadInput(cat("--out: ", in_quotes(out.string()), " is the --", flag,
                         " input itself; write the outputs into another directory"));
    for (const std::string& name : names)
      if (same_file(out / name, input))
        throw BadInput(cat("--out: ", in_quotes((out / name).string()), " would replace the --",
                           flag, " input; write the outputs into another directory"));
  }
}

// Writes the files into DIR as the header says.
inline void write_output_directory(const std::filesystem::path& out,
                                   const std::vector<OutputFile>& files) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(out, ec)) {
    std::vector<fs::path> created;
    try {
      for (const OutputFile& f : files) {
        const fs::path path = out / f.name;
        const bool existed = fs::exists(fs::symlink_status(path, ec));
        f.write(path);
        if (!existed) created.push_back(path);
      }
    } catch (...) {
      for (const fs::path& path : created) fs::remove_all(path, ec);
      throw;
    }
    return;
  }
  // A new DIR: stage next to it, then one rename.
  const fs::path absolute = fs::absolute(out);
  const fs::path parent = absolute.parent_path();
  fs::create_directories(parent, ec);
  if (ec)
    throw BadInput(cat("--out: cannot create ", in_quotes(parent.string()), ": ", ec.message()));
  std::string pattern =
      (parent / cat(".", absolute.filename().string(), ".ltt-XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr)
    throw BadInput(cat("--out: cannot create a directory next to ", in_quotes(out.string()), ": ",
                       std::strerror(errno)));
  const fs::path staging(pattern);
  // mkdtemp makes the directory private (0700); DIR gets the mode a plain mkdir would give it.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::chmod(staging.c_str(), 0777 & ~mask);
  try {
    for (const OutputFile& f : files) f.write(staging / f.name);
    fs::rename(staging, out, ec);
    if (ec)
      throw BadInput(cat("--out: cannot create ", in_quotes(out.string()), ": ", ec.message()));
  } catch (...) {
    fs::remove_all(staging, ec);
    throw;
  }
}

}  // namespace ltt::cli
