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
  // "default" (the compiler's default target, on another architecture).
  m.attr("build_target") = LTT_CPU_BUILD_TARGET;
  m.def(
      "missing_features",
      [] {
        return std::string(LTT_CPU_BUILD_TARGET) == "x86-64-v3"
                   ? ltt::cpu::missing_x86_64_v3_features()
                   : std::string();
      },
      "The features build_target needs that this CPU lacks, as 'avx2, fma': empty when it has "
      "them all, and always empty unless build_target is 'x86-64-v3'.");
}
