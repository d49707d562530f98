// Prints "<task> <checksum>" for each velocity task (velocity_rollout.hpp): the program
// velocity_checksum.test.cpp runs under qemu's Haswell and compares with its own.
#include <cinttypes>
#include <cstdio>
#include <string>

#include "velocity_rollout.hpp"

int main() {
  for (const auto& task : ltt::tasks::velocity_tasks())
    std::printf("%s 0x%016" PRIx64 "\n", std::string(task.name).c_str(),
                ltt_test::velocity_rollout_checksum(task));
  return 0;
}
