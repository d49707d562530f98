// Which of the CPU features a build's x86-64 level relies on this CPU lacks.
//
// GCC's __builtin_cpu_supports reads CPUID (and, for AVX2 and FMA, whether the OS saves the
// YMM registers; for AVX-512, the ZMM and mask registers). AVX2, FMA and BMI2 are the
// extensions of x86-64-v3 that GCC's code for the project uses; a CPU with them has the rest of
// the level too. x86-64-v4 adds AVX-512 F, BW, CD, DQ and VL, all of which -march=x86-64-v4
// lets GCC and Eigen use. A caller must be compiled for
// the baseline x86-64, so that asking cannot itself fault: the program's start-up check
// (cpu_check.cpp) and the Python module's (python/src/cpu.cpp).
#pragma once

#include <string>

namespace ltt::cpu {

// The extensions a build for x86-64-v`level` relies on, as its messages name them.
inline const char* level_features(int level) {
  return level >= 4 ? "AVX2, FMA, BMI2, AVX-512 F/BW/CD/DQ/VL" : "AVX2, FMA, BMI2";
}

// The lowercase names (as /proc/cpuinfo spells them) of the features of x86-64-v`level` (3, 4)
// that this CPU lacks, separated by ", "; empty when the CPU has them all, or on another
// architecture.
inline std::string missing_features(int level) {
  std::string missing;
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  const auto note = [&missing](bool present, const char* name) {
    if (present) return;
    if (!missing.empty()) missing += ", ";
    missing += name;
  };
  note(__builtin_cpu_supports("avx2"), "avx2");
  note(__builtin_cpu_supports("fma"), "fma");
  note(__builtin_cpu_supports("bmi2"), "bmi2");
  if (level >= 4) {
    note(__builtin_cpu_supports("avx512f"), "avx512f");
    note(__builtin_cpu_supports("avx512bw"), "avx512bw");
    note(__builtin_cpu_supports("avx512cd"), "avx512cd");
    note(__builtin_cpu_supports("avx512dq"), "avx512dq");
    note(__builtin_cpu_supports("avx512vl"), "avx512vl");
  }
#else
  (void)level;
#endif
  return missing;
}

}  // namespace ltt::cpu
