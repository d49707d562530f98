// ltt._cpu: the question python/ltt/__init__.py asks before it imports the compiled module
// ltt._ltt. That module is compiled for x86-64-v3 (CMakeLists.txt, LTT_NATIVE) and may die of
// SIGILL while it loads on an older CPU, before any Python code could say why. This one is
// compiled for the baseline x86-64, without the project's flags, like the program's check
// (reference_pipeline/cpu/cpu_check.cpp), and asks the same question (cpu/cpu_support.hpp).

#include <pybind11/pybind11.h>

#include <string>

#include "cpu/cpu_support.hpp"

PYBIND11_MODULE(_cpu, m) {
  m.doc() = "The CPU check of the ltt package, compiled for the baseline x86-64.";
  // What the project's code in ltt._ltt was compiled for: "x86-64-v3" (the default on x86-64),
  // "native" (LTT_NATIVE: the build machine's CPU, which this module cannot know), or
  // "default" (the compiler's default target, on another architecture); and for an x86-64
  // level, the extensions it relies on, as the ImportError names them.
  m.attr("build_target") = LTT_CPU_BUILD_TARGET;
#if defined(LTT_CPU_LEVEL)
  m.attr("build_features") = ltt::cpu::level_features(LTT_CPU_LEVEL);
  m.def(
      "missing_features", [] { return ltt::cpu::missing_features(LTT_CPU_LEVEL); },
#else
  m.attr("build_features") = "";
  m.def(
      "missing_features", [] { return std::string(); },
#endif
      "The features build_target needs that this CPU lacks, as 'avx2, fma': empty when it has "
      "them all, and always empty unless build_target is an x86-64 level ('x86-64-v3').");
}
