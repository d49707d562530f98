// Tests for BlockThreads (behavior/block_threads.hpp): every block of every job runs exactly
// once, on the caller's thread for block 0; a thrown exception reaches the caller after every
// block finished (the lowest block's, when several throw), and the threads serve later jobs.

#include <behavior/block_threads.hpp>

#include <doctest/doctest.h>

#include "../support/throws.hpp"

#include <atomic>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace block_threads_test {

namespace bhv = ltt::behavior;

TEST_CASE("BlockThreads: each block once per job, block 0 on the caller, errors passed on") {
  for (const std::size_t blocks : {std::size_t{1}, std::size_t{2}, std::size_t{3}}) {
    CAPTURE(blocks);
    bhv::BlockThreads threads(blocks);
    CHECK(threads.blocks() == blocks);
    std::vector<int> runs(blocks, 0);
    for (int job = 0; job < 200; ++job) threads.run([&](std::size_t b) { ++runs[b]; });
    for (const int r : runs) CHECK(r == 200);
    std::thread::id caller;
    threads.run([&](std::size_t b) {
      if (b == 0) caller = std::this_thread::get_id();
    });
    CHECK(caller == std::this_thread::get_id());

    std::atomic<int> finished{0};
    try {
      threads.run([&](std::size_t b) {
        ++finished;
        if (b + 1 == blocks || b == 1) throw std::runtime_error("block " + std::to_string(b));
      });
      FAIL("no exception");
    } catch (const std::runtime_error& e) {
      CHECK(finished == static_cast<int>(blocks));
      CHECK(std::string(e.what()) == (blocks == 1 ? "block 0" : "block 1"));
    }
    int after = 0;
    threads.run([&](std::size_t b) {
      if (b == 0) ++after;
    });
    CHECK(after == 1);
  }
  ltt_test::check_throws_naming([] { bhv::BlockThreads(0); }, "blocks");
}

}  // namespace block_threads_test
