// Refuses to run on a CPU the build does not target, with one line instead of SIGILL.
//
// The project's programs are compiled for x86-64-v3 (AVX2, FMA, BMI2; CMakeLists.txt,
// LTT_NATIVE) so that results are the same bytes on every such machine, or for x86-64-v4
// (AVX-512 too, LTT_ARCH). This file alone is
// compiled for the baseline x86-64 (it is built without the project's flags), and its check
// runs as a constructor of priority 101, before the program's own static initializers and
// main(), which may already use AVX2. The Python module asks the same question at import
// (python/src/cpu.cpp).

#include <cstdio>
#include <cstdlib>
#include <string>

#include "cpu_support.hpp"

namespace {

[[gnu::constructor(101)]] void require_build_cpu() {
#if defined(LTT_CPU_LEVEL)
  const std::string missing = ltt::cpu::missing_features(LTT_CPU_LEVEL);
  if (!missing.empty()) {
    std::fprintf(stderr,
                 "ltt: this build targets x86-64-v%d (%s) and this CPU lacks %s; "
                 "rebuild on this machine with cmake -DLTT_NATIVE=ON\n",
                 LTT_CPU_LEVEL, ltt::cpu::level_features(LTT_CPU_LEVEL), missing.c_str());
    std::_Exit(2);
  }
#endif
}

}  // namespace
