#pragma once
// What `ltt --version` prints: the version, the CPU target the build compiled for, the compiler
// and the build's options (reference_pipeline/CMakeLists.txt defines the macros), since they
// decide the bytes of training (docs/learning.md, "Determinism"). Training runs record it too
// (`ltt behavior train`'s run.json).

#include <string>
#include <string_view>

#include <data/text.hpp>

#ifndef LTT_VERSION
#define LTT_VERSION "unknown"
#endif
#ifndef LTT_BUILD
#define LTT_BUILD "unknown target"
#endif
#ifndef LTT_BUILD_DETAILS
#define LTT_BUILD_DETAILS ""
#endif

namespace ltt::cli {

// "ltt 0.1.0\nbuild: portable x86-64-v3, GCC 12.2.0, Release, HDF5, no LibTorch\n"
inline std::string version_text() {
#if defined(__clang__)
  const std::string compiler = data::cat("Clang ", __clang_version__);
#elif defined(__GNUC__)
  const std::string compiler = data::cat("GCC ", __VERSION__);
#else
  const std::string compiler = "an unknown compiler";
#endif
  const std::string_view details = LTT_BUILD_DETAILS;
  return data::cat("ltt ", LTT_VERSION, "\nbuild: ", LTT_BUILD, ", ", compiler,
                   details.empty() ? "" : ", ", details, "\n");
}

}  // namespace ltt::cli
