#pragma once
// Checks the library's error contract: std::invalid_argument whose message names the
// parameter, quoted as detail/check.hpp writes it ('N', 'alpha', ...).

#include <doctest/doctest.h>

#include <limits>
#include <stdexcept>
#include <string>

namespace ltt_test {

template <class F>
void check_throws_naming(F f, const std::string& parameter) {
  try {
    f();
    FAIL("no exception; expected one naming '" << parameter << "'");
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    CHECK_MESSAGE(what.find("'" + parameter + "'") != std::string::npos, what);
  }
}

// A NaN argument, which every argument check refuses.
inline constexpr double not_a_number = std::numeric_limits<double>::quiet_NaN();

}  // namespace ltt_test
