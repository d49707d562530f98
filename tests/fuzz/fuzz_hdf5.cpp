// libFuzzer target: the DSRL reader's HDF5 store (reference_pipeline/data/dsrl_hdf5.cpp, and
// the layout checks of dsrl.cpp behind it), on the bytes of a whole .hdf5 file. The reader
// takes a path (libhdf5 opens the file itself), so each input is written to a scratch file
// first. What it accepts must split into contiguous episodes covering the rows, read in full
// with the shapes its layout announced, and give a selection that reads back.
//
// libhdf5 itself is Debian's, not instrumented: coverage guides the search through our code
// only, and a bug inside libhdf5 shows up as a crash, or as an ASan report where it calls
// an intercepted function (memcpy, free). tests/fuzz/README.md says what to do with one.

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <data/array.hpp>
#include <data/child_process.hpp>
#include <data/dsrl.hpp>

#include "fuzz_support.hpp"

namespace {

namespace fs = std::filesystem;
using namespace ltt;
using fuzz::accepted;
using fuzz::check;

// A directory of this process's own, ltt-fuzz-hdf5-<pid>, in memory where there is /dev/shm.
// libFuzzer ends with _Exit (atexit handlers do not run) and a finding kills the process, so
// nothing removes it at the end: each input's files are removed after it, and each new process
// removes the directories whose process is gone.
const fs::path& scratch() {
  static const fs::path dir = [] {
    std::error_code ec;
    const fs::path base = fs::is_directory("/dev/shm", ec) && ::access("/dev/shm", W_OK) == 0
                              ? fs::path("/dev/shm")
                              : fs::temp_directory_path();
    constexpr std::string_view prefix = "ltt-fuzz-hdf5-";
    for (const fs::directory_entry& e : fs::directory_iterator(base, ec)) {
      const std::string name = e.path().filename().string();
      if (!name.starts_with(prefix)) continue;
      const long pid = std::strtol(name.c_str() + prefix.size(), nullptr, 10);
      if (pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)
        fs::remove_all(e.path(), ec);
    }
    const fs::path own = base / (std::string(prefix) + std::to_string(::getpid()));
    fs::remove_all(own, ec);
    fs::create_directory(own, ec);
    if (ec) std::abort();
    return own;
  }();
  return dir;
}

void check_pool(const data::DsrlPool& p) {
  check(p.transitions >= 1 && p.size() >= 1, "an accepted file holds an episode");
  std::int64_t row = 0;
  for (std::size_t i = 0; i < p.episodes.size(); ++i) {
    const data::Episode& e = p.episodes[i];
    check(e.index == static_cast<std::int64_t>(i) && e.start == row && e.length >= 1,
          "episodes follow each other in file order, each at least one row");
    row += e.length;
  }
  check(row + p.dropped_tail == p.transitions, "episodes and the dropped tail cover the rows");
}

void read_in_full(const fs::path& file, const data::DsrlPool& p) {
  if (const auto costs = accepted([&] { return data::read_dsrl_costs(file); }))
    check(static_cast<std::int64_t>(costs->size()) == p.transitions, "one cost per row");
  if (const auto obs = accepted([&] { return data::read_dsrl_float32(file, "observations"); }))
    check(obs->rows() == p.transitions && obs->row_size() == p.observation_dim &&
              obs->dtype == data::DType::float32,
          "observations: (N, obs_dim) float32");
  if (const auto all = accepted([&] { return data::read_dsrl(file); }))
    for (const std::string_view key : data::dsrl_keys)
      check((*all)[key].rows() == p.transitions, "read_dsrl: N rows in every key");
}

void select_and_read_back(const fs::path& file, const data::DsrlPool& p) {
  const fs::path out = scratch() / "selection.hdf5";
  const std::vector<std::int64_t> chosen = {p.size() - 1, 0, p.size() - 1};
  if (!fuzz::succeeds([&] { data::write_dsrl_selection(file, out, chosen); })) return;
  const auto again = accepted([&] { return data::load_dsrl_pool(out); });
  check(again.has_value(), "a selection written from an accepted file reads back");
  const std::int64_t last = p.episodes.back().length, first = p.episodes.front().length;
  check(again->transitions == 2 * last + first, "the selection holds the chosen rows");
  std::error_code ignored;
  fs::remove(out, ignored);
}

}  // namespace

// A hung libhdf5 child is refused after 5 s instead of 60, well inside scripts/fuzz's per-input
// -timeout of 25 s: a hang is contained by design (child_process.hpp), not a finding.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  ltt::data::detail::child_stall_limit = std::chrono::seconds{5};
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const fs::path file = scratch() / "input.hdf5";
  {
    std::ofstream f(file, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    if (!f) std::abort();
  }
  if (const auto pool = accepted([&] { return data::load_dsrl_pool(file); })) {
    check_pool(*pool);
    read_in_full(file, *pool);
    select_and_read_back(file, *pool);
  }
  std::error_code ignored;
  fs::remove(file, ignored);
  return 0;
}
