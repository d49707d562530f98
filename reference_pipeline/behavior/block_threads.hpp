#pragma once
// A fixed set of threads that run the blocks of one job at a time: the caller's thread runs
// block 0, each of the others one more block, and run() returns once every block is done. The
// threads start once and wait between jobs, so a job of a few hundred microseconds (one
// lockstep step of ten MuJoCo environments, one minibatch's three gradients) is not eaten by
// starting threads (a std::async per step cost about 100 us of system time each on a 2-core AMD
// EPYC virtual machine). Blocks must touch disjoint data; what they compute cannot depend on
// the thread count.

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace ltt::behavior {

class BlockThreads {
 public:
  // `blocks` blocks per job (at least 1): blocks - 1 threads besides the caller's.
  explicit BlockThreads(std::size_t blocks);
  ~BlockThreads();
  BlockThreads(const BlockThreads&) = delete;
  BlockThreads& operator=(const BlockThreads&) = delete;

  std::size_t blocks() const { return threads_.size() + 1; }

  // job(b) for every b in [0, blocks()), b = 0 on the calling thread; rethrows the exception of
  // the lowest block that threw, after all have finished.
  void run(const std::function<void(std::size_t block)>& job);

 private:
  void serve(std::size_t block);

  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable start_, finished_;
  const std::function<void(std::size_t)>* job_ = nullptr;
  std::uint64_t generation_ = 0;
  std::size_t pending_ = 0;
  bool stop_ = false;
  std::vector<std::exception_ptr> errors_;
};

}  // namespace ltt::behavior
