// The same commit and seed give the same bytes on every x86-64 CPU with AVX2 (docs/learning.md,
// "Determinism"):
//
//   - the tiny pipeline's seed artifacts (the trained value's model file, the scores, the
//     calibration labels, the selection) against a checked-in checksum, in the project's
//     reference build (Release, the portable x86-64-v3 target, no sanitizers, GCC 12: other
//     compilers and flags may round otherwise), on whichever CPU runs the suite (AMD EPYC and
//     Intel Xeon alike); the opt-in x86-64-v4 (AVX-512) build has bytes of its own;
//   - a short piece of it, determinism_probe (a seeded pool, preference pairs, a few epochs of
//     the value ensemble, its scores, a cloning epoch and the clone's actions), against the same
//     program under qemu's emulation of a Haswell, a CPU of another vendor and without AVX-512,
//     when qemu-x86_64 is installed (scripts/setup installs it). This is how an instruction
//     whose result differs between CPUs (RSQRTPS, behind Eigen's fast-math float sqrt) was
//     found and is kept out. The piece, not the whole pipeline: emulated, the tiny pipeline
//     took 40 s on an AMD EPYC and 355 s on an Intel Xeon, the piece 2.3 s on the EPYC.

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>

#include <data/fnv1a.hpp>

#include "run_program.hpp"

using namespace ltt_cli_test;
namespace fs = std::filesystem;

namespace {

constexpr const char* artifacts[] = {"model.ltt", "scores.npy", "labels.csv", "selection.npy"};

// FNV-1a 64 over the seed's artifacts, in the order above.
std::uint64_t artifact_checksum(const fs::path& seed_dir) {
  std::uint64_t h = ltt::data::fnv1a_offset_basis;
  for (const char* name : artifacts) h = ltt::data::fnv1a(slurp(seed_dir / name), h);
  return h;
}

std::string hex(std::uint64_t h) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(h));
  return buf;
}

// `ltt pipeline --task point-goal --preset tiny` into `out`.
void run_tiny(const fs::path& out) {
  fs::remove_all(out);
  const Result r = shell("'" + std::string(LTT_PROGRAM) +
                         "' pipeline --task point-goal --preset tiny --threads 2 --out '" +
                         out.string() + "'");
  REQUIRE_MESSAGE(r.code == 0, r.err);
}

}  // namespace

TEST_CASE("ltt pipeline --preset tiny: the same bytes on this CPU as in the reference build") {
  const fs::path here = scratch_dir() / "reproducible-here";
  run_tiny(here);
  const std::uint64_t h = artifact_checksum(here / "seed-1");
#if LTT_REFERENCE_BUILD == 3
  // Changes when the task generator, the learning code, the pair sampler or the draw change:
  // if the change is deliberate, put the new value here and say why in the commit.
  INFO("the tiny pipeline's artifacts changed: checksum now " << hex(h));
  CHECK(h == 0x8fb04c7d6c9ae898ULL);
#elif LTT_REFERENCE_BUILD == 4
  // The x86-64-v4 reference build's own bytes (Eigen's 16-float kernels sum in another order):
  // not yet recorded, since no CPU with AVX-512 has run this test. Record the value printed
  // here from a run on one, in place of this message, with a CHECK as above.
  MESSAGE("x86-64-v4 reference build: no recorded checksum yet; this run's is " << hex(h));
#else
  MESSAGE("not a reference build (Release, x86-64-v3 or -v4, GCC 12, no sanitizers): checksum "
          << hex(h) << " not compared");
#endif
}

TEST_CASE("determinism_probe: the same bytes on this CPU and on an emulated Haswell") {
  const Result here = shell(std::string("'") + LTT_DETERMINISM_PROBE + "'");
  REQUIRE_MESSAGE(here.code == 0, here.err);
  // One line per piece: the pool's seven keys, the pairs, the value, the scores, the clone's
  // model and actions; then the seven keys of the half-cheetah episodes collected from the
  // committed run.
  CHECK(std::count(here.out.begin(), here.out.end(), '\n') == 19);
  if (std::string(LTT_QEMU_X86_64).empty()) {
    MESSAGE(
        "qemu-x86_64 not found: the Haswell comparison did not run (scripts/setup installs "
        "qemu-user)");
    return;
  }
  if (LTT_CPU_LEVEL != 3) {
    MESSAGE("the build does not target x86-64-v3: the Haswell comparison did not run");
    return;
  }
  const Result haswell = shell(std::string("'") + LTT_QEMU_X86_64 + "' -cpu Haswell '" +
                               LTT_DETERMINISM_PROBE + "'");
  REQUIRE(haswell.code == 0);
  CHECK(haswell.out == here.out);
}
