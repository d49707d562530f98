#include "atomic_output.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "error.hpp"

namespace ltt::data {

namespace fs = std::filesystem;
using detail::cat;
using detail::in_quotes;

namespace {

[[noreturn]] void cannot_write(const fs::path& path, std::string_view what, int error) {
  throw DataError(cat("cannot write ", in_quotes(path.string()), ": ", what, error != 0 ? ": " : "",
                      error != 0 ? std::strerror(error) : ""));
}

fs::path directory_of(const fs::path& path) {
  return path.has_parent_path() ? path.parent_path() : fs::path(".");
}

// A writable name pattern "dir/.name.<tag>-XXXXXX" for mkstemp and mkdtemp.
std::vector<char> temporary_pattern(const fs::path& path, std::string_view tag) {
  const std::string pattern =
      (directory_of(path) / cat(".", path.filename().string(), ".", tag, "-XXXXXX")).string();
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  return name;
}

// 0, or the errno of the first step that failed: open, fsync, close.
int fsync_path(const fs::path& path, int flags) {
  const int fd = ::open(path.c_str(), flags);
  if (fd < 0) return errno;
  int error = ::fsync(fd) == 0 ? 0 : errno;
  if (::close(fd) != 0 && error == 0) error = errno;
  return error;
}

// rename(2) is durable only once the directory holding the new name is on disk: without this a
// crash after the rename can leave the old file (or none) in place.
void sync_parent(const fs::path& path) {
  if (const int error = fsync_path(directory_of(path), O_RDONLY | O_DIRECTORY); error != 0)
    cannot_write(path, "fsync of the directory holding it failed", error);
}

mode_t creation_mask() {
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return mask;
}

// Removes the temporary on every path that does not reach the final rename.
struct RemoveUnlessKept {
  fs::path path;
  bool keep = false;
  ~RemoveUnlessKept() {
    if (!keep) {
      std::error_code ignored;
      fs::remove_all(path, ignored);
    }
  }
};

void check_destination_name(const fs::path& path) {
  if (path.empty() || path.filename().empty() || path.filename() == "." || path.filename() == "..")
    cannot_write(path, "not a file name", 0);
}

// What is at `path` itself, a link not followed; nullopt when nothing is.
std::optional<struct stat> destination_status(const fs::path& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) return st;
  if (errno == ENOENT) return std::nullopt;
  cannot_write(path, "cannot inspect it", errno);
}

std::string_view node_kind(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// A link is refused rather than written through: renaming over it would replace the link, and
// following it would write wherever it points when the rename happens, which is not
// necessarily where it pointed when it was checked.
[[noreturn]] void refuse_link(const fs::path& path) {
  cannot_write(path,
               "it is a symbolic link; outputs are never written through a link (name the file "
               "it points to)",
               0);
}

}  // namespace

void check_file_destination(const fs::path& path) {
  check_destination_name(path);
  const std::optional<struct stat> st = destination_status(path);
  if (!st || S_ISREG(st->st_mode)) return;
  if (S_ISLNK(st->st_mode)) refuse_link(path);
  if (S_ISDIR(st->st_mode)) cannot_write(path, "it is a directory", 0);
  cannot_write(path,
               cat("it is ", node_kind(st->st_mode),
                   "; an output must be a regular file or a name that does not exist yet"),
               0);
}

void check_directory_destination(const fs::path& path, DirectoryContents contents) {
  check_destination_name(path);
  const std::optional<struct stat> st = destination_status(path);
  if (!st) return;
  if (S_ISLNK(st->st_mode)) refuse_link(path);
  if (!S_ISDIR(st->st_mode))
    cannot_write(path, cat("it is ", node_kind(st->st_mode), ", not a directory"), 0);
  std::error_code ec;
  // A pool's world geometry (world_geometry.hpp) sits in infos/ and world/, one level down.
  const auto check_entries = [&](const fs::path& dir, bool top, const auto& self) -> void {
    for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
      const std::string name = e.path().filename().string();
      const bool datasets = contents == DirectoryContents::dsrl_datasets;
      if ((datasets || (top && (name == "infos" || name == "world"))) && !e.is_symlink() &&
          e.is_directory()) {
        self(e.path(), false, self);
        continue;
      }
      const fs::path ext = e.path().extension();
      const bool allowed = ext == ".npy" || (datasets && (ext == ".hdf5" || ext == ".h5"));
      if (!e.is_regular_file() || !allowed)
        cannot_write(
            path,
            cat("the directory exists and holds ", in_quotes(fs::relative(e.path(), path).string()),
                ", which is not ", datasets ? "a .hdf5, .h5 or .npy file" : "a .npy file",
                "; not replacing it"),
            0);
    }
  };
  check_entries(path, true, check_entries);
  if (ec) cannot_write(path, "cannot list the existing directory", ec.value());
}

void write_file_atomically(const fs::path& path,
                           const std::function<void(const fs::path&)>& write) {
  check_file_destination(path);

  std::vector<char> name = temporary_pattern(path, "tmp");
  const int fd = ::mkstemp(name.data());
  if (fd < 0)
    cannot_write(path, cat("cannot create a file in ", in_quotes(directory_of(path).string())),
                 errno);
  RemoveUnlessKept temporary{fs::path(name.data())};
  // mkstemp creates the file 0600; give it the mode a plain open() would (0666 minus umask).
  const int chmod_error = ::fchmod(fd, 0666 & ~creation_mask()) == 0 ? 0 : errno;
  const int close_error = ::close(fd) == 0 ? 0 : errno;
  if (chmod_error != 0) cannot_write(path, "cannot set the file mode", chmod_error);
  if (close_error != 0) cannot_write(path, "cannot close the temporary file", close_error);

  write(temporary.path);

  if (const int error = fsync_path(temporary.path, O_RDONLY); error != 0)
    cannot_write(path, "fsync failed", error);
  check_file_destination(path);  // again: something else may have been put there meanwhile
  if (::rename(temporary.path.c_str(), path.c_str()) != 0)
    cannot_write(path, "rename failed", errno);
  temporary.keep = true;
  sync_parent(path);
}

void write_stream_atomically(const fs::path& path,
                             const std::function<void(std::ostream& out)>& write) {
  write_file_atomically(path, [&](const fs::path& temporary) {
    errno = 0;
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) cannot_write(path, "cannot open the temporary file", errno);
    errno = 0;
    write(out);
    // The buffer's last bytes reach the file here; a full disk (ENOSPC), a file size limit
    // (EFBIG) or an I/O error shows as a failed stream with the write's errno.
    out.flush();
    if (!out) cannot_write(path, "write failed", errno);
    out.close();
    if (!out) cannot_write(path, "close failed", errno);
  });
}

void write_directory_atomically(const fs::path& path,
                                const std::function<void(const fs::path&)>& write,
                                DirectoryContents contents) {
  check_directory_destination(path, contents);
  const bool replacing = destination_status(path).has_value();

  std::vector<char> name = temporary_pattern(path, "tmp");
  if (::mkdtemp(name.data()) == nullptr)
    cannot_write(path, cat("cannot create a directory in ", in_quotes(directory_of(path).string())),
                 errno);
  RemoveUnlessKept temporary{fs::path(name.data())};
  if (::chmod(name.data(), 0777 & ~creation_mask()) != 0)
    cannot_write(path, "cannot set the directory mode", errno);

  write(temporary.path);

  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(temporary.path, ec))
    if (const int error = fsync_path(e.path(), O_RDONLY); error != 0)
      cannot_write(path, cat("fsync of ", in_quotes(e.path().filename().string()), " failed"),
                   error);
  if (ec) cannot_write(path, "cannot list the temporary directory", ec.value());
  if (const int error = fsync_path(temporary.path, O_RDONLY | O_DIRECTORY); error != 0)
    cannot_write(path, "fsync failed", error);
  check_directory_destination(path, contents);  // again: something may have been put there

  if (!replacing) {
    if (::rename(temporary.path.c_str(), path.c_str()) != 0)
      cannot_write(path, "rename failed", errno);
    temporary.keep = true;
    sync_parent(path);
    return;
  }
  // rename(2) replaces an empty directory only, so the old one moves aside first.
  std::vector<char> aside_name = temporary_pattern(path, "old");
  if (::mkdtemp(aside_name.data()) == nullptr)
    cannot_write(path, cat("cannot create a directory in ", in_quotes(directory_of(path).string())),
                 errno);
  RemoveUnlessKept aside{fs::path(aside_name.data())};
  if (::rename(path.c_str(), aside.path.c_str()) != 0)
    cannot_write(path, "cannot move the old directory aside", errno);
  if (::rename(temporary.path.c_str(), path.c_str()) != 0) {
    const int error = errno;
    aside.keep = true;  // the old data stays somewhere, whatever happens next
    ::rename(aside.path.c_str(), path.c_str());
    cannot_write(path, "rename failed", error);
  }
  temporary.keep = true;
  sync_parent(path);
}

}  // namespace ltt::data
