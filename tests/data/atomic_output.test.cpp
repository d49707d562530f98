// Output appears whole or not at all: a writer that fails leaves neither the destination nor a
// temporary behind, and an existing destination stays as it was.

#include <doctest/doctest.h>

#include <sys/stat.h>

#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>

#include <data/atomic_output.hpp>

#include "data_test.hpp"

using namespace ltt_data_test;

namespace {
std::string text_of(const fs::path& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
void write_text(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }
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
