// The trainers' shared helpers (detail/data.hpp).

#include "learning/detail/data.hpp"

#include <curation/detail/random.hpp>

#include <Eigen/Core>

#include <algorithm>
#include <atomic>
#include <thread>
#include <utility>

namespace ltt::learning::detail {

void shuffle(std::vector<std::int64_t>& order, std::mt19937_64& rng) {
  for (std::size_t i = order.size(); i > 1; --i) {
    const auto j = static_cast<std::size_t>(
        curation::detail::uniform_below(rng, static_cast<std::uint64_t>(i)));
    std::swap(order[i - 1], order[j]);
  }
}

void run_indexed(std::int64_t count, std::int64_t threads,
                 const std::function<void(std::int64_t)>& task) {
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(count));
  auto guarded = [&](std::int64_t i) {
    try {
      task(i);
    } catch (...) {
      errors[static_cast<std::size_t>(i)] = std::current_exception();
    }
  };
  const std::int64_t workers =
      std::clamp<std::int64_t>(threads, 1, std::max<std::int64_t>(count, 1));
  if (workers == 1) {
    for (std::int64_t i = 0; i < count; ++i) guarded(i);
  } else {
    Eigen::initParallel();
    std::atomic<std::int64_t> next{0};
    std::vector<std::thread> pool;
    for (std::int64_t w = 0; w < workers; ++w)
      pool.emplace_back([&] {
        for (std::int64_t i = next++; i < count; i = next++) guarded(i);
      });
    for (auto& t : pool) t.join();
  }
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace ltt::learning::detail
