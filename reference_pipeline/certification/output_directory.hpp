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
// writable directory, not an input nor inside one (a dataset stored as a directory of .npy
// files), and each file the run writes into it obeys the rule of output_paths.hpp (not an
// input such as a --model inside DIR; a regular file or a new name, never a link, a device or
// a FIFO left there).

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
#include "output_paths.hpp"

namespace ltt::certification {

// One file of the run: its name inside DIR and the writer that fills it at the path given.
struct OutputFile {
  std::string name;
  std::function<void(const std::filesystem::path&)> write;
};

// A file the run writes into DIR: its name there, and whether it is a directory of .npy files.
struct OutputName {
  std::string name;
  Destination kind = Destination::file;
};

// Refuses an --out that is not a directory and cannot be created as one: a file there, a
// link to nothing, a missing ancestor that is a file, an ancestor without write permission.
// A link to a directory is a directory.
inline void check_directory_creatable(const std::filesystem::path& out) {
  namespace fs = std::filesystem;
  const std::string shown = out.string();
  std::error_code ec;
  if (fs::exists(out, ec) && !fs::is_directory(out, ec))
    throw BadInput(cat("--out: ", in_quotes(shown), " exists and is not a directory"));
  if (fs::is_symlink(fs::symlink_status(out, ec)) && !fs::exists(out, ec))
    throw BadInput(cat("--out: ", in_quotes(shown), " is a symbolic link to nothing"));
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
// names: the files the run writes into DIR; inputs: every file the run reads. A DIR that holds
// an input is fine as long as the run's own names miss it.
inline void check_output_directory(const std::filesystem::path& out,
                                   const std::vector<OutputName>& names, const NamedPaths& inputs) {
  check_directory_creatable(out);
  for (const auto& [flag, input] : inputs) {
    const Overlap o = overlap(out, input);
    if (o == Overlap::same)
      throw BadInput(cat("--out: ", in_quotes(out.string()), " is the --", flag,
                         " input itself; write the outputs into another directory"));
    if (o == Overlap::inside)
      throw BadInput(cat("--out: ", in_quotes(out.string()), " is inside the --", flag, " input ",
                         in_quotes(input.string()), "; write the outputs into another directory"));
  }
  for (const OutputName& n : names) {
    check_distinct("out", out / n.name, inputs, {});
    check_destination("out", out / n.name, n.kind);
  }
}

// The files of check_output_directory as outputs of --out, for check_distinct.
inline NamedPaths output_directory_files(const std::filesystem::path& out,
                                         const std::vector<OutputName>& names) {
  NamedPaths files;
  for (const OutputName& n : names) files.emplace_back("out", out / n.name);
  return files;
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
  std::string pattern = (parent / cat(".", absolute.filename().string(), ".ltt-XXXXXX")).string();
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

}  // namespace ltt::certification
