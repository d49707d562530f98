#pragma once
// What the `ltt` program may write: the one rule every subcommand checks each of its outputs
// against, before any file is read or any work done (docs/cli.md, "Outputs").
//
//   check_output        a file (or a directory of .npy files) that a flag names must be
//                         - none of the run's inputs: not the same file (one device and inode,
//                           or one path once ".", ".." and links are resolved), not inside an
//                           input stored as a directory, not a directory that holds an input;
//                         - none of the run's other outputs, in the same sense;
//                         - a regular file or a name that does not exist yet: never a symbolic
//                           link, a device, a FIFO, a socket, or a directory where a file goes
//                           (data::check_file_destination, data::check_directory_destination);
//                         - in a directory that exists and can be written.
//   check_distinct      the first two alone, and
//   check_destination   the third alone: for the files of an --out DIR (output_directory.hpp),
//                       whose directory may not exist yet.
//
// A refusal is BadInput naming the flag: exit 2, one line, nothing written. The atomic writers
// check the kind of destination again when they write (data/atomic_output.hpp), so a library
// caller cannot replace /dev/null either.

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <data/atomic_output.hpp>
#include <data/error.hpp>

#include "bad_input.hpp"
#include "format.hpp"

namespace ltt::certification {

// Files a run reads or writes, each with the flag that names it (without its dashes).
using NamedPaths = std::vector<std::pair<std::string_view, std::filesystem::path>>;

// What an output is: a file, a directory of .npy files (a DSRL selection in that store), or a
// directory of DSRL datasets (the selection of a dataset of several files, one per file).
enum class Destination { file, directory, datasets };

// How two paths meet: one file, or one inside the other (a directory and an entry in it).
enum class Overlap { none, same, inside, holds };

namespace detail {

// The absolute path with ".", ".." and links resolved as far as it exists.
inline std::filesystem::path resolved(const std::filesystem::path& p) {
  std::error_code ec;
  std::filesystem::path r = std::filesystem::weakly_canonical(std::filesystem::absolute(p, ec), ec);
  if (ec) r = std::filesystem::absolute(p, ec).lexically_normal();
  if (!r.has_filename() && r.has_relative_path()) r = r.parent_path();  // "dir/" is "dir"
  return r;
}

// `inner` lies strictly below `outer`, component by component.
inline bool strictly_within(const std::filesystem::path& inner,
                            const std::filesystem::path& outer) {
  auto i = inner.begin();
  for (auto o = outer.begin(); o != outer.end(); ++o, ++i)
    if (i == inner.end() || *i != *o) return false;
  return i != inner.end();
}

}  // namespace detail

// How path `a` meets path `b`: `inside` when `a` lies in the directory `b`, `holds` when `b`
// lies in `a`. The device and inode decide first (a hard link, another mount of the same
// file), then the resolved paths (a file that does not exist yet).
inline Overlap overlap(const std::filesystem::path& a, const std::filesystem::path& b) {
  struct stat x {
  }, y{};
  if (::stat(a.c_str(), &x) == 0 && ::stat(b.c_str(), &y) == 0 && x.st_dev == y.st_dev &&
      x.st_ino == y.st_ino)
    return Overlap::same;
  const std::filesystem::path ra = detail::resolved(a), rb = detail::resolved(b);
  if (ra == rb) return Overlap::same;
  if (detail::strictly_within(ra, rb)) return Overlap::inside;
  if (detail::strictly_within(rb, ra)) return Overlap::holds;
  return Overlap::none;
}

inline bool same_file(const std::filesystem::path& a, const std::filesystem::path& b) {
  return overlap(a, b) == Overlap::same;
}

// Refuses an output (named by --flag) that is, lies in or holds one of the inputs or one of
// the other outputs.
inline void check_distinct(std::string_view flag, const std::filesystem::path& path,
                           const NamedPaths& inputs, const NamedPaths& outputs) {
  const std::string shown = in_quotes(path.string());
  for (const auto& [input_flag, input] : inputs) {
    const Overlap o = overlap(path, input);
    if (o == Overlap::none) continue;
    throw BadInput(
        cat("--", flag, ": ", shown,
            o == Overlap::same ? cat(" is the --", input_flag, " input itself")
            : o == Overlap::inside
                ? cat(" is inside the --", input_flag, " input ", in_quotes(input.string()))
                : cat(" holds the --", input_flag, " input ", in_quotes(input.string())),
            "; write the output elsewhere"));
  }
  for (const auto& [other_flag, other] : outputs) {
    const Overlap o = overlap(path, other);
    if (o == Overlap::same)
      throw BadInput(cat("--", other_flag, " and --", flag, " name the same file ", shown));
    if (o != Overlap::none)
      throw BadInput(cat("--", flag, ": ", shown, o == Overlap::inside ? " is inside" : " holds",
                         " the --", other_flag, " output ", in_quotes(other.string())));
  }
}

// Refuses a destination that is not a regular file, a directory of .npy files where one goes,
// or a new name.
inline void check_destination(std::string_view flag, const std::filesystem::path& path,
                              Destination kind) {
  try {
    if (kind == Destination::file)
      data::check_file_destination(path);
    else
      data::check_directory_destination(path, kind == Destination::datasets
                                                  ? data::DirectoryContents::dsrl_datasets
                                                  : data::DirectoryContents::npy_files);
  } catch (const data::DataError& e) {
    throw BadInput(cat("--", flag, ": ", e.what()));
  }
}

// The whole rule for an output a flag names (see the top of this file). `created_first` is a
// directory the run creates before it writes `path` (the --out DIR of score and curate, already
// checked to be creatable): a path inside it is accepted while it does not exist yet.
inline void check_output(std::string_view flag, const std::filesystem::path& path, Destination kind,
                         const NamedPaths& inputs, const NamedPaths& outputs,
                         const std::filesystem::path& created_first = {}) {
  check_distinct(flag, path, inputs, outputs);
  check_destination(flag, path, kind);
  const std::filesystem::path dir = path.has_parent_path() ? path.parent_path() : ".";
  const std::string shown = cat("--", flag, ": cannot write ", in_quotes(path.string()));
  std::error_code ec;
  if (!std::filesystem::exists(dir, ec) && !created_first.empty() &&
      detail::resolved(dir) == detail::resolved(created_first))
    return;
  if (!std::filesystem::is_directory(dir, ec))
    throw BadInput(cat(shown, ": no directory ", in_quotes(dir.string())));
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    throw BadInput(cat(shown, ": ", std::strerror(errno)));
}

}  // namespace ltt::certification
