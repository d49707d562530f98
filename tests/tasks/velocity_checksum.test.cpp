// The velocity tasks give the same bytes on every x86-64-v3 CPU (docs/tasks.md,
// "Determinism"): a short seeded rollout of each task (velocity_rollout.hpp: 3 episodes of at
// most 200 steps) is hashed and compared
//
//   - against a checked-in checksum when the library is MuJoCo 2.2.2 (Debian 12's): the
//     arithmetic of ltt_tasks is pinned by its flags (-ffp-contract=off, no SLP vectorizer), so
//     the value holds in every build type; another MuJoCo release computes otherwise;
//   - against the program velocity_rollout run under qemu's emulation of a Haswell (another
//     vendor, no AVX-512), when qemu-x86_64 is installed and the build targets x86-64-v3.
//
// glibc picks the variant of sin, cos, exp, log, ... that MuJoCo and the reset's Box-Muller call
// by the CPU at load time: the FMA one wherever FMA and AVX2 exist, which is every x86-64-v3 CPU.
// Forcing the SSE2 variants (GLIBC_TUNABLES=glibc.cpu.hwcaps=-FMA) changes the cheetah's and the
// swimmer's checksums: the bytes are those of x86-64-v3 CPUs with Debian 12's glibc.

#include <tasks/velocity.hpp>

#include <doctest/doctest.h>

#include "velocity_rollout.hpp"

#include <cstdint>
#include <cstdio>
#include <string>
#include <sys/wait.h>

#include <mujoco/mujoco.h>

namespace {

namespace tasks = ltt::tasks;

std::string checksum_hex(std::uint64_t h) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%016llx", static_cast<unsigned long long>(h));
  return text;
}

// What `command` prints on stdout; its exit status in *status.
std::string run_and_read(const std::string& command, int* status) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buffer[256];
  while (std::fgets(buffer, sizeof buffer, pipe)) out += buffer;
  *status = pclose(pipe);
  return out;
}

// The lines velocity_rollout prints, computed here.
std::string rollout_lines() {
  std::string lines;
  for (const auto& task : tasks::velocity_tasks())
    lines += std::string(task.name) + " " +
             checksum_hex(ltt_test::velocity_rollout_checksum(task)) + "\n";
  return lines;
}

}  // namespace

TEST_CASE("velocity tasks: rollout checksums, here and the checked-in ones") {
  struct Kept {
    const char* task;
    std::uint64_t checksum;
  };
  // Change only with the tasks, the models or MuJoCo: say why in the commit.
  const Kept kept[] = {{"half-cheetah-velocity", 0x535070c25a78da4fULL},
                       {"hopper-velocity", 0xa09b7d72955dd76fULL},
                       {"swimmer-velocity", 0x33b46a5913b3cfadULL}};
  const std::string version = mj_versionString();
  for (const Kept& k : kept) {
    const std::uint64_t h = ltt_test::velocity_rollout_checksum(tasks::velocity_task(k.task));
    INFO(k.task << ": checksum " << checksum_hex(h) << ", kept " << checksum_hex(k.checksum));
    if (version == "2.2.2")
      CHECK(h == k.checksum);
    else
      MESSAGE("MuJoCo " << version << ", not 2.2.2: " << k.task << "'s checksum "
                        << checksum_hex(h) << " not compared");
  }
}

TEST_CASE("velocity tasks: the same rollouts on an emulated Haswell (qemu)") {
  const std::string here = rollout_lines();
  int status = 0;
  const std::string native = run_and_read(std::string("'") + LTT_VELOCITY_ROLLOUT + "'", &status);
  REQUIRE(status == 0);
  CHECK(native == here);
  if (std::string(LTT_TASKS_QEMU_X86_64).empty()) {
    MESSAGE("not run: needs qemu-x86_64 (scripts/setup installs qemu-user) and an x86-64-v3 "
            "build without sanitizers");
    return;
  }
  const std::string haswell = run_and_read(
      std::string("'") + LTT_TASKS_QEMU_X86_64 + "' -cpu Haswell '" + LTT_VELOCITY_ROLLOUT + "'",
      &status);
  REQUIRE(status == 0);
  CHECK(haswell == here);
}
