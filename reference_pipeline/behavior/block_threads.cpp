// Threads that run a job's blocks (block_threads.hpp).

#include "behavior/block_threads.hpp"

#include "behavior/check.hpp"

namespace ltt::behavior {

BlockThreads::BlockThreads(std::size_t blocks) {
  if (blocks < 1) detail::invalid("BlockThreads", "blocks", "0", "must be >= 1");
  errors_.resize(blocks);
  for (std::size_t b = 1; b < blocks; ++b) threads_.emplace_back([this, b] { serve(b); });
}

BlockThreads::~BlockThreads() {
  {
    const std::lock_guard lock(mutex_);
    stop_ = true;
  }
  start_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void BlockThreads::serve(std::size_t block) {
  std::uint64_t seen = 0;
  for (;;) {
    const std::function<void(std::size_t)>* job = nullptr;
    {
      std::unique_lock lock(mutex_);
      start_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      job = job_;
    }
    try {
      (*job)(block);
    } catch (...) {
      errors_[block] = std::current_exception();
    }
    const std::lock_guard lock(mutex_);
    if (--pending_ == 0) finished_.notify_one();
  }
}

void BlockThreads::run(const std::function<void(std::size_t)>& job) {
  if (threads_.empty()) {
    job(0);
    return;
  }
  {
    const std::lock_guard lock(mutex_);
    job_ = &job;
    pending_ = threads_.size();
    ++generation_;
  }
  start_.notify_all();
  try {
    job(0);
  } catch (...) {
    errors_[0] = std::current_exception();
  }
  {
    std::unique_lock lock(mutex_);
    finished_.wait(lock, [&] { return pending_ == 0; });
  }
  for (std::exception_ptr& e : errors_)
    if (e) {
      const std::exception_ptr first = e;
      for (std::exception_ptr& other : errors_) other = nullptr;
      std::rethrow_exception(first);
    }
}

}  // namespace ltt::behavior
