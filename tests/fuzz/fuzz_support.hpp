#pragma once
// What the fuzz targets share (tests/fuzz/README.md). A reader may refuse its input only the
// way the program reports bad input with exit code 2 (reference_pipeline/cli/main.cpp): the
// program's BadInput, or a std::invalid_argument (the data layer's DataError, the libraries'
// parameter checks). Those are expected; any other exception escapes to libFuzzer, which
// reports it as a crash, as it does a signal or a sanitizer report. A broken promise about
// what a reader accepted is a finding too: check() aborts with the promise it names.

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <type_traits>

#include <certification/bad_input.hpp>

namespace ltt::fuzz {

// read() returns what it read, or nullopt when it refused the input as bad input.
template <class Read>
auto accepted(Read read) -> std::optional<std::invoke_result_t<Read>> {
  try {
    return read();
  } catch (const certification::BadInput&) {
    return std::nullopt;
  } catch (const std::invalid_argument&) {
    return std::nullopt;
  }
}

// The same for a read whose result is not kept: true when it succeeded.
template <class Read>
bool succeeds(Read read) {
  return accepted([&] {
           read();
           return true;
         })
      .has_value();
}

inline void check(bool holds, std::string_view promise) {
  if (holds) return;
  std::fprintf(stderr, "fuzz: broken promise: %.*s\n", static_cast<int>(promise.size()),
               promise.data());
  std::abort();
}

}  // namespace ltt::fuzz
