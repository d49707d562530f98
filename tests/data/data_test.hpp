#pragma once
// Shared by the data tests: where the fixtures are (written by make_dsrl_fixtures.py), a
// fresh scratch directory per test, a Python runner, and the check that an error is a
// DataError whose message names what it must.

#include <doctest/doctest.h>

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <initializer_list>
#include <string>
#include <string_view>

#include <data/error.hpp>

namespace ltt_data_test {

namespace fs = std::filesystem;

using ltt::data::detail::cat;  // GCC 12 warns falsely on chains of string operator+ (bug 105329)

inline fs::path fixture(std::string_view relative) {
  return fs::path(LTT_DATA_FIXTURES) / relative;
}

// An empty directory for one test case; earlier contents are removed.
inline fs::path scratch(std::string_view name) {
  const fs::path dir = fs::path(LTT_DATA_SCRATCH) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// Runs one of tests/data/*.py (or python -c CODE with script = "-c") with Debian's Python;
// returns its exit code.
inline int run_python(const std::string& script_and_args) {
  const std::string command = cat("'", LTT_PYTHON3, "' ", script_and_args);
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

inline std::string script(std::string_view name) {
  return cat("'", (fs::path(LTT_DATA_SCRIPTS) / name).string(), "'");
}

inline std::string shell_quoted(const fs::path& p) { return cat("'", p.string(), "'"); }

// f() must throw ltt::data::DataError whose message contains every one of `parts`.
template <class F>
void check_data_error(F f, std::initializer_list<std::string_view> parts) {
  try {
    f();
    FAIL("no exception; expected a DataError");
  } catch (const ltt::data::DataError& e) {
    const std::string what = e.what();
    for (const std::string_view part : parts)
      CHECK_MESSAGE(what.find(part) != std::string::npos, "'", part, "' not in: ", what);
  }
}

// The arrays under `keys` of a and b (two DsrlDatasets, or two WorldGeometries) are the same:
// element type, shape and bytes.
template <class Arrays, class Keys>
void check_same_arrays(const Arrays& a, const Arrays& b, const Keys& keys) {
  for (const std::string_view key : keys) {
    CAPTURE(key);
    CHECK(a[key].dtype == b[key].dtype);
    CHECK(a[key].shape == b[key].shape);
    CHECK(a[key].bytes == b[key].bytes);
  }
}

// Nothing left behind by an atomic writer: no file named like its temporaries in `dir`.
inline bool no_temporaries(const fs::path& dir) {
  for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.starts_with(".") &&
        (name.find(".tmp-") != std::string::npos || name.find(".old-") != std::string::npos))
      return false;
  }
  return true;
}

}  // namespace ltt_data_test
