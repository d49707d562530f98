// An LD_PRELOAD shim for the fault cases of label_session.py: write() and fsync() on a file
// named journal.jsonl fail with ENOSPC while the file named by LTT_FAULT_FILE exists and says
// how (its first word):
//   write   every write fails
//   short   a write takes half its bytes, the next one fails (a disk filling mid-record)
//   fsync   writes succeed, fsync fails (an I/O error on the way to the disk)
// Anything else, and every other file, goes to libc's functions. Built without sanitizers: it
// is loaded before the program's runtime.

#include <dlfcn.h>
#include <errno.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

// The fault asked for now: 0 none, else the first letter of its word.
char fault() {
  const char* control = std::getenv("LTT_FAULT_FILE");
  if (!control) return 0;
  std::FILE* f = std::fopen(control, "r");
  if (!f) return 0;
  char word[16] = {};
  const bool read = std::fscanf(f, "%15s", word) == 1;
  std::fclose(f);
  return read ? word[0] : 0;
}

bool is_journal(int fd) {
  char link[64], path[4096];
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t n = ::readlink(link, path, sizeof path - 1);
  if (n < 0) return false;
  path[n] = 0;
  static constexpr char name[] = "/journal.jsonl";
  const std::size_t length = sizeof name - 1;
  return static_cast<std::size_t>(n) >= length && std::strcmp(path + n - length, name) == 0;
}

bool shortened = false;  // "short": the half written, the next write fails

}  // namespace

extern "C" ssize_t write(int fd, const void* buffer, size_t count) {
  using Write = ssize_t (*)(int, const void*, size_t);
  static const auto real = reinterpret_cast<Write>(dlsym(RTLD_NEXT, "write"));
  const char f = is_journal(fd) ? fault() : 0;
  if (f == 'w' || (f == 's' && shortened)) {
    shortened = false;
    errno = ENOSPC;
    return -1;
  }
  if (f == 's' && count > 1) {
    shortened = true;
    return real(fd, buffer, count / 2);
  }
  return real(fd, buffer, count);
}

extern "C" int fsync(int fd) {
  using Fsync = int (*)(int);
  static const auto real = reinterpret_cast<Fsync>(dlsym(RTLD_NEXT, "fsync"));
  if (is_journal(fd) && fault() == 'f') {
    errno = EIO;
    return -1;
  }
  return real(fd);
}
