#pragma once
// Output files appear whole or not at all. write_file_atomically writes into a temporary file
// in the destination's own directory (so the final rename never crosses a file system),
// flushes it to disk, then renames it over the destination, which POSIX makes atomic. If the
// writer throws or any step fails, the temporary file is removed and the destination is left
// as it was. Failures a user can fix (a missing directory, no permission, a full disk) throw
// BadInput naming the file.
//
//   write_file_atomically(out_dir / "selection.csv", [&](std::ostream& out) {
//     out << "id,score\n";
//     ...
//   });

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <ostream>
#include <string>
#include <system_error>
#include <vector>

#include "bad_input.hpp"
#include "format.hpp"

namespace ltt::cli {

inline void write_file_atomically(const std::filesystem::path& path,
                                  const std::function<void(std::ostream&)>& write) {
  namespace fs = std::filesystem;
  const std::string shown = in_quotes(path.string());
  const auto fail = [&](std::string_view what, int error) {
    throw BadInput(cat("cannot write ", shown, ": ", what, error != 0 ? ": " : "",
                       error != 0 ? std::strerror(error) : ""));
  };
  if (path.filename().empty()) fail("not a file name", 0);
  std::error_code ec;
  if (fs::is_directory(path, ec)) fail("it is a directory", 0);

  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  std::string pattern = (dir / cat(".", path.filename().string(), ".tmp-XXXXXX")).string();
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  const int fd = ::mkstemp(name.data());
  if (fd < 0) fail(cat("cannot create a file in ", in_quotes(dir.string())), errno);
  const fs::path temporary(name.data());

  // Removes the temporary file on every path that does not reach the rename.
  struct Cleanup {
    const fs::path& file;
    bool armed = true;
    ~Cleanup() {
      if (armed) {
        std::error_code ignored;
        fs::remove(file, ignored);
      }
    }
  } cleanup{temporary};

  // mkstemp creates the file 0600; give it the mode a plain open() would (0666 minus umask).
  const mode_t mask = ::umask(0);
  ::umask(mask);
  const int chmod_error = ::fchmod(fd, 0666 & ~mask) == 0 ? 0 : errno;
  ::close(fd);
  if (chmod_error != 0) fail("cannot set the file mode", chmod_error);

  {
    errno = 0;
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) fail("cannot open a temporary file", errno);
    write(out);
    out.flush();
    if (!out) fail("write failed", errno);
    out.close();
    if (!out) fail("write failed", errno);
  }
  errno = 0;
  const int sync_fd = ::open(temporary.c_str(), O_RDONLY);
  if (sync_fd < 0) fail("cannot reopen the temporary file", errno);
  const int sync_error = ::fsync(sync_fd) == 0 ? 0 : errno;
  ::close(sync_fd);
  if (sync_error != 0) fail("fsync failed", sync_error);

  if (::rename(temporary.c_str(), path.c_str()) != 0) fail("rename failed", errno);
  cleanup.armed = false;
}

}  // namespace ltt::cli
