// run_in_child (reference_pipeline/data/child_process.hpp): what the child sends arrives in
// order; its exceptions come back as the same kind with the same message; its death by a
// signal or a silent exit, and a stall, are a DataError naming the file and the step it was on.

#include <doctest/doctest.h>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <new>
#include <numeric>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include <data/child_process.hpp>

#include "data_test.hpp"

using ltt::data::detail::ChildOutput;
using ltt::data::detail::run_in_child;
using ltt_data_test::check_data_error;

TEST_CASE("run_in_child: the bytes the child sends, in order, however many") {
  for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{3} << 20}) {
    CAPTURE(n);
    std::vector<std::uint32_t> sent(n);
    std::iota(sent.begin(), sent.end(), 7u);
    const std::vector<unsigned char> got = run_in_child("f.hdf5", "worker", [&](ChildOutput& out) {
      for (std::size_t at = 0; at < n; at += 1000)  // in pieces of up to 4000 bytes
        out.send(sent.data() + at, std::min<std::size_t>(1000, n - at) * sizeof(std::uint32_t));
    });
    REQUIRE(got.size() == n * sizeof(std::uint32_t));
    CHECK((n == 0 || std::memcmp(got.data(), sent.data(), got.size()) == 0));
  }
}

TEST_CASE("run_in_child: exceptions come back with their kind and message") {
  check_data_error(
      [] {
        run_in_child("f.hdf5", "worker",
                     [](ChildOutput&) { throw ltt::data::DataError("f.hdf5: key 'x' is odd"); });
      },
      {"f.hdf5: key 'x' is odd"});
  CHECK_THROWS_AS(run_in_child("f.hdf5", "worker", [](ChildOutput&) { throw std::bad_alloc(); }),
                  std::bad_alloc);
  CHECK_THROWS_WITH_AS(
      run_in_child("f.hdf5", "worker", [](ChildOutput&) { throw std::logic_error("oops"); }),
      "oops", std::runtime_error);
}

TEST_CASE("run_in_child: a child that dies is a DataError naming the file and its step") {
  check_data_error(
      [] {
        run_in_child("f.hdf5", "corrupted HDF5: libhdf5", [](ChildOutput& out) {
          out.step("opening key 'terminals'");
          ::raise(SIGSEGV);
        });
      },
      {"f.hdf5: corrupted HDF5: libhdf5 crashed (", "opening key 'terminals'"});
  // A sanitizer ends a process with exit status 1 and no word to the parent: the same.
  check_data_error([] { run_in_child("f.hdf5", "worker", [](ChildOutput&) { ::_exit(1); }); },
                   {"f.hdf5: worker crashed (exit status 1)"});
  // What the child printed went to /dev/null: the parent's message is all there is.
  check_data_error(
      [] {
        run_in_child("f.hdf5", "worker", [](ChildOutput& out) {
          [[maybe_unused]] const ssize_t n = ::write(STDERR_FILENO, "noise\n", 6);
          out.step("step two");
          ::abort();
        });
      },
      {"f.hdf5: worker crashed (Aborted) step two"});
}

TEST_CASE("run_in_child: a receiver that throws stops the child and the exception goes on") {
  int pieces = 0;
  CHECK_THROWS_WITH_AS(run_in_child(
                           "f.hdf5", "worker",
                           [](ChildOutput& out) {
                             const std::vector<unsigned char> block(1 << 16, 1);
                             for (;;) out.send(block.data(), block.size());  // never ends
                           },
                           [&](std::span<const unsigned char>) {
                             if (++pieces == 3) throw std::runtime_error("enough");
                           }),
                       "enough", std::runtime_error);
  CHECK(pieces == 3);
}

TEST_CASE("run_in_child: a child without progress is stopped; one that ticks is not") {
  const std::chrono::seconds saved = ltt::data::detail::child_stall_limit;
  ltt::data::detail::child_stall_limit = std::chrono::seconds(1);
  check_data_error(
      [] {
        run_in_child("f.hdf5", "worker", [](ChildOutput& out) {
          out.step("spinning");
          for (volatile bool forever = true; forever;) {}
        });
      },
      {"f.hdf5: worker hung (no progress in 1 s) spinning"});
  CHECK_NOTHROW(run_in_child("f.hdf5", "worker", [](ChildOutput& out) {
    for (int i = 0; i < 20; ++i) {  // 2 s in all, never 1 s without a tick
      ::usleep(100'000);
      out.tick();
    }
  }));
  ltt::data::detail::child_stall_limit = saved;
}
