#pragma once
// Whether this test program is the sanitizer build's (AddressSanitizer + UBSan, scripts/test's
// build-asan/; tests/CMakeLists.txt defines LTT_TEST_UNDER_SANITIZERS there). Such a run is for
// memory and undefined-behaviour errors on every code path a case reaches; a case may leave to
// the Release run what repeats a path it has already taken (a second seed of the same code, the
// same computation again on one thread to compare the bytes), as the Monte Carlo cells shrink
// there (monte_carlo.hpp).

#ifndef LTT_TEST_UNDER_SANITIZERS
#define LTT_TEST_UNDER_SANITIZERS 0
#endif

namespace ltt_test {

inline constexpr bool under_sanitizers = LTT_TEST_UNDER_SANITIZERS != 0;

}  // namespace ltt_test
