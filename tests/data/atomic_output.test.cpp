// Output appears whole or not at all: a writer that fails leaves neither the destination nor a
// temporary behind, and an existing destination stays as it was. Nothing but a regular file is
// ever replaced: a link, a device, a FIFO or a socket at the destination is refused and left
// as it was. A write that fails (EFBIG under a file size limit, standing in for a full disk)
// throws and leaves nothing.

#include <doctest/doctest.h>

#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include <data/atomic_output.hpp>

#include "../support/unix_socket.hpp"
#include "data_test.hpp"

using namespace ltt_data_test;

namespace {
std::string text_of(const fs::path& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
void write_text(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }

// What is at `p` itself (a link not followed): its type bits and inode, or "absent".
std::string node(const fs::path& p) {
  struct stat st {};
  if (::lstat(p.c_str(), &st) != 0) return "absent";
  return cat(std::to_string(st.st_mode & S_IFMT), " ", std::to_string(st.st_ino));
}

using ltt_test::make_socket;

// A file size limit of `bytes` with SIGXFSZ ignored, so a write past it fails with EFBIG as a
// write to a full disk fails with ENOSPC; restored on scope exit.
struct FileSizeLimit {
  rlimit old{};
  struct sigaction old_action {};
  explicit FileSizeLimit(rlim_t bytes) {
    ::getrlimit(RLIMIT_FSIZE, &old);
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    ::sigaction(SIGXFSZ, &ignore, &old_action);
    rlimit limit = old;
    limit.rlim_cur = bytes;
    ::setrlimit(RLIMIT_FSIZE, &limit);
  }
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &old);
    ::sigaction(SIGXFSZ, &old_action, nullptr);
  }
  FileSizeLimit(const FileSizeLimit&) = delete;
  FileSizeLimit& operator=(const FileSizeLimit&) = delete;
};
}  // namespace

TEST_CASE("write_file_atomically: replaces whole, or leaves everything as it was") {
  const fs::path dir = scratch("atomic_file");
  const fs::path target = dir / "out.txt";
  ltt::data::write_file_atomically(target, [](const fs::path& t) { write_text(t, "first\n"); });
  CHECK(text_of(target) == "first\n");
  ltt::data::write_file_atomically(target, [](const fs::path& t) { write_text(t, "second\n"); });
  CHECK(text_of(target) == "second\n");

  CHECK_THROWS_AS(ltt::data::write_file_atomically(target,
                                                   [](const fs::path& t) {
                                                     write_text(t, "half");
                                                     throw std::runtime_error("writer failed");
                                                   }),
                  std::runtime_error);
  CHECK(text_of(target) == "second\n");
  CHECK_THROWS_AS(ltt::data::write_file_atomically(
                      dir / "new.txt", [](const fs::path&) { throw std::runtime_error("x"); }),
                  std::runtime_error);
  CHECK(!fs::exists(dir / "new.txt"));
  CHECK(no_temporaries(dir));

  check_data_error(
      [&] {
        ltt::data::write_file_atomically(dir / "missing" / "out.txt", [](const fs::path&) {});
      },
      {"out.txt", "cannot create a file in"});
  check_data_error([&] { ltt::data::write_file_atomically(dir, [](const fs::path&) {}); },
                   {"is a directory"});
}

TEST_CASE("write_stream_atomically: a stream on the temporary, the same guarantees") {
  const fs::path dir = scratch("atomic_stream");
  const fs::path target = dir / "out.csv";
  ltt::data::write_stream_atomically(target, [](std::ostream& out) { out << "id,score\n1,0.5\n"; });
  CHECK(text_of(target) == "id,score\n1,0.5\n");
  // The mode a plain open() would give (0666 minus the umask), not mkstemp's 0600.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  CHECK((static_cast<mode_t>(fs::status(target).permissions()) & 0777) == (0666 & ~mask));

  CHECK_THROWS_AS(ltt::data::write_stream_atomically(target,
                                                     [](std::ostream& out) {
                                                       out << "id,score\n3,";
                                                       throw std::runtime_error("disk on fire");
                                                     }),
                  std::runtime_error);
  CHECK(text_of(target) == "id,score\n1,0.5\n");
  CHECK_THROWS(ltt::data::write_stream_atomically(dir / "new.csv", [](std::ostream&) { throw 1; }));
  CHECK(!fs::exists(dir / "new.csv"));
  CHECK(no_temporaries(dir));

  check_data_error(
      [&] {
        ltt::data::write_stream_atomically(dir / "no-such-dir" / "out.csv", [](std::ostream&) {});
      },
      {"'", "no-such-dir/out.csv", "No such file or directory"});
  check_data_error([&] { ltt::data::write_stream_atomically(dir, [](std::ostream&) {}); },
                   {"it is a directory"});
}

TEST_CASE("write_directory_atomically: replaces a .npy directory whole, never anything else") {
  const fs::path dir = scratch("atomic_directory");
  const fs::path target = dir / "pool";
  ltt::data::write_directory_atomically(target,
                                        [](const fs::path& t) { write_text(t / "a.npy", "1"); });
  CHECK(text_of(target / "a.npy") == "1");
  ltt::data::write_directory_atomically(target,
                                        [](const fs::path& t) { write_text(t / "b.npy", "2"); });
  CHECK(!fs::exists(target / "a.npy"));
  CHECK(text_of(target / "b.npy") == "2");

  CHECK_THROWS_AS(ltt::data::write_directory_atomically(target,
                                                        [](const fs::path& t) {
                                                          write_text(t / "c.npy", "3");
                                                          throw std::runtime_error("writer failed");
                                                        }),
                  std::runtime_error);
  CHECK(text_of(target / "b.npy") == "2");
  CHECK(!fs::exists(target / "c.npy"));
  CHECK(no_temporaries(dir));

  write_text(target / "README", "mine");
  check_data_error([&] { ltt::data::write_directory_atomically(target, [](const fs::path&) {}); },
                   {"'README'", "not replacing it"});
  CHECK(text_of(target / "README") == "mine");
  write_text(dir / "file", "x");
  check_data_error(
      [&] { ltt::data::write_directory_atomically(dir / "file", [](const fs::path&) {}); },
      {"not a directory"});
}

TEST_CASE("atomic writers: a link, a device, a FIFO or a socket is refused and left as it was") {
  const fs::path dir = scratch("atomic_special");
  write_text(dir / "old.txt", "old\n");
  fs::create_symlink("old.txt", dir / "link");
  fs::create_symlink("nowhere.txt", dir / "dangling");
  REQUIRE(::mkfifo((dir / "fifo").c_str(), 0666) == 0);
  fs::create_directory(dir / "npy");
  write_text(dir / "npy" / "a.npy", "1");
  fs::create_directory_symlink("npy", dir / "npy_link");
  struct Case {
    const char* name;
    const char* reason;
  };
  std::vector<Case> cases = {{"link", "it is a symbolic link"},
                             {"dangling", "it is a symbolic link"},
                             {"fifo", "it is a FIFO (named pipe)"},
                             {"npy_link", "it is a symbolic link"}};
  if (make_socket(dir / "sock"))
    cases.push_back({"sock", "it is a socket"});
  else
    MESSAGE("no socket bound: that case is skipped");
  // A copy of /dev/null (character device 1, 3) needs root; the real one is never touched.
  if (::mknod((dir / "null").c_str(), S_IFCHR | 0666, ::makedev(1, 3)) == 0)
    cases.push_back({"null", "it is a character device"});
  else
    MESSAGE("mknod failed (not root?): the device case is skipped");

  for (const Case& c : cases) {
    CAPTURE(c.name);
    const fs::path target = dir / c.name;
    const std::string before = node(target);
    bool ran = false;
    check_data_error([&] { ltt::data::check_file_destination(target); }, {c.reason});
    check_data_error(
        [&] {
          ltt::data::write_stream_atomically(target, [&](std::ostream& o) {
            ran = true;
            o << "x";
          });
        },
        {"cannot write", target.filename().string(), c.reason});
    check_data_error(
        [&] { ltt::data::write_file_atomically(target, [&](const fs::path&) { ran = true; }); },
        {c.reason});
    CHECK_FALSE(ran);  // refused before the writer runs
    CHECK(node(target) == before);
  }
  CHECK(text_of(dir / "old.txt") == "old\n");
  CHECK(fs::read_symlink(dir / "link") == "old.txt");
  CHECK(!fs::exists(dir / "nowhere.txt"));

  // A directory of .npy files behind a link, and a FIFO where a directory goes.
  check_data_error(
      [&] { ltt::data::write_directory_atomically(dir / "npy_link", [](const fs::path&) {}); },
      {"it is a symbolic link"});
  CHECK(fs::is_symlink(dir / "npy_link"));
  CHECK(text_of(dir / "npy" / "a.npy") == "1");
  check_data_error(
      [&] { ltt::data::write_directory_atomically(dir / "fifo", [](const fs::path&) {}); },
      {"it is a FIFO (named pipe), not a directory"});
  CHECK(fs::is_fifo(fs::symlink_status(dir / "fifo")));
  CHECK(no_temporaries(dir));

  // A link in a directory component is followed: only the last component is the destination.
  ltt::data::write_stream_atomically(dir / "npy_link" / "b.npy", [](std::ostream& o) { o << "2"; });
  CHECK(text_of(dir / "npy" / "b.npy") == "2");
  CHECK(fs::is_symlink(dir / "npy_link"));
  ltt::data::check_file_destination(dir / "old.txt");
  ltt::data::check_file_destination(dir / "new.txt");
  ltt::data::check_directory_destination(dir / "npy");
  ltt::data::check_directory_destination(dir / "new");
}

TEST_CASE("write_stream_atomically: a write that fails (EFBIG) throws and leaves nothing") {
  const fs::path dir = scratch("atomic_write_failure");
  write_text(dir / "old.txt", "old\n");
  const std::string big(64 * 1024, 'x');  // past the limit below, and past the stream's buffer
  {
    const FileSizeLimit limit(4096);
    const auto write_big = [&](const fs::path& p) {
      ltt::data::write_stream_atomically(p, [&](std::ostream& o) { o << big; });
    };
    check_data_error([&] { write_big(dir / "new.txt"); },
                     {"cannot write", "new.txt", "write failed", std::strerror(EFBIG)});
    check_data_error([&] { write_big(dir / "old.txt"); }, {"old.txt", std::strerror(EFBIG)});
    // Small enough to fit: the limit is what fails, not the writer.
    ltt::data::write_stream_atomically(dir / "small.txt", [](std::ostream& o) { o << "fits\n"; });
  }
  CHECK(!fs::exists(dir / "new.txt"));
  CHECK(text_of(dir / "old.txt") == "old\n");
  CHECK(text_of(dir / "small.txt") == "fits\n");
  CHECK(no_temporaries(dir));
}
