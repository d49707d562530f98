// Output files appear whole or not at all.

#include <doctest/doctest.h>

#include <filesystem>
#include <stdexcept>
#include <string>

#include "atomic_file.hpp"
#include "run_program.hpp"

namespace fs = std::filesystem;
using ltt::cli::write_file_atomically;

namespace {
int entries(const fs::path& dir) {
  int n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++n;
  return n;
}
}  // namespace

TEST_CASE("write_file_atomically: writes, replaces, and leaves nothing behind on failure") {
  const fs::path dir = ltt_cli_test::scratch_dir() / "atomic";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path file = dir / "out.csv";

  write_file_atomically(file, [](std::ostream& out) { out << "id,score\n1,0.5\n"; });
  CHECK(ltt_cli_test::slurp(file) == "id,score\n1,0.5\n");
  CHECK(entries(dir) == 1);
  // The mode a plain open() would give (0666 minus the umask), not mkstemp's 0600.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  CHECK((static_cast<mode_t>(fs::status(file).permissions()) & 0777) == (0666 & ~mask));

  write_file_atomically(file, [](std::ostream& out) { out << "id,score\n2,0.25\n"; });
  CHECK(ltt_cli_test::slurp(file) == "id,score\n2,0.25\n");

  // A writer that fails half way: the old file stays as it was, no temporary is left.
  CHECK_THROWS_AS(write_file_atomically(file,
                                        [](std::ostream& out) {
                                          out << "id,score\n3,";
                                          throw std::runtime_error("disk on fire");
                                        }),
                  std::runtime_error);
  CHECK(ltt_cli_test::slurp(file) == "id,score\n2,0.25\n");
  CHECK(entries(dir) == 1);

  // Same for a new file: it never appears.
  CHECK_THROWS(write_file_atomically(dir / "new.csv", [](std::ostream&) { throw 1; }));
  CHECK_FALSE(fs::exists(dir / "new.csv"));
  CHECK(entries(dir) == 1);
}

TEST_CASE("write_file_atomically: unwritable destinations are bad input naming the file") {
  const fs::path dir = ltt_cli_test::scratch_dir() / "atomic-bad";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const auto message = [](const fs::path& path) -> std::string {
    try {
      write_file_atomically(path, [](std::ostream& out) { out << "x"; });
    } catch (const ltt::cli::BadInput& e) {
      return e.what();
    }
    return "(no error)";
  };
  const std::string missing = message(dir / "no-such-dir" / "out.csv");
  CHECK(missing.find("no-such-dir/out.csv") != std::string::npos);
  CHECK(missing.find("No such file or directory") != std::string::npos);
  CHECK(message(dir).find("it is a directory") != std::string::npos);
  CHECK(entries(dir) == 0);
}
