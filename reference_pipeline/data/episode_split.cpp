// DSRL's episode rule (dsrl.hpp, split_episodes): an episode ends at a row where terminals or
// timeouts is set, its return and cost are Neumaier sums of its rows; and the same split of a
// file's columns read a block of rows at a time (detail::split_episodes_in_blocks), which
// load_dsrl_pool uses.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <iterator>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <ltt/detail/check.hpp>
#include <ltt/detail/compensated_sum.hpp>

#include "dsrl.hpp"
#include "dsrl_store.hpp"
#include "error.hpp"

namespace ltt::data {

using detail::cat;
using detail::DsrlSource;
using detail::in_quotes;

EpisodeSplit split_episodes(std::span<const double> rewards, std::span<const double> costs,
                            std::span<const std::uint8_t> terminals,
                            std::span<const std::uint8_t> timeouts) {
  const std::size_t n = rewards.size();
  if (costs.size() != n || terminals.size() != n || timeouts.size() != n)
    throw DataError(cat("split_episodes: rewards, costs, terminals and timeouts hold ",
                        std::to_string(n), ", ", std::to_string(costs.size()), ", ",
                        std::to_string(terminals.size()), " and ", std::to_string(timeouts.size()),
                        " rows; they must be equal"));
  EpisodeSplit split;
  std::size_t start = 0;
  ltt::detail::CompensatedSum reward, cost;
  for (std::size_t i = 0; i < n; ++i) {
    reward.add(rewards[i]);
    cost.add(costs[i]);
    if (terminals[i] != 0 || timeouts[i] != 0) {
      Episode e;
      e.index = static_cast<std::int64_t>(split.episodes.size());
      e.start = static_cast<std::int64_t>(start);
      e.length = static_cast<std::int64_t>(i + 1 - start);
      e.episodic_return = reward.value();
      e.episodic_cost = cost.value();
      e.terminal = terminals[i] != 0;
      split.episodes.push_back(e);
      start = i + 1;
      reward = {};
      cost = {};
    }
  }
  split.dropped_tail = static_cast<std::int64_t>(n - start);
  return split;
}

namespace {

// The rows where `key` (terminals or timeouts) is set, read a block at a time; a value other
// than 0 or 1 is refused as read_flags refuses it.
std::vector<std::int64_t> flagged_rows(const DsrlSource& s, std::string_view key,
                                       std::int64_t block_rows) {
  std::vector<std::int64_t> set;
  s.for_each_double_block(key, block_rows, [&](std::int64_t first, std::span<const double> x) {
    for (std::size_t i = 0; i < x.size(); ++i) {
      const std::int64_t row = first + static_cast<std::int64_t>(i);
      if (x[i] != 0.0 && x[i] != 1.0)
        detail::fail(s.name(),
                     cat("key ", in_quotes(key), " row ", std::to_string(row), " holds ",
                         ltt::detail::show(x[i]), "; a flag must be 0 or 1 (false or true)"));
      if (x[i] == 1.0) set.push_back(row);
    }
  });
  return set;
}

// Each episode's sum of `key` (rewards or costs) in row order, with split_episodes' Neumaier
// sum carried across blocks; every row, the dropped tail's included, must be finite, refused as
// read_finite refuses it. ends: each episode's last row, increasing.
std::vector<double> episode_sums(const DsrlSource& s, std::string_view key,
                                 std::span<const std::int64_t> ends, std::int64_t block_rows) {
  std::vector<double> sums;
  sums.reserve(ends.size());
  ltt::detail::CompensatedSum sum;
  s.for_each_double_block(key, block_rows, [&](std::int64_t first, std::span<const double> x) {
    for (std::size_t i = 0; i < x.size(); ++i) {
      const std::int64_t row = first + static_cast<std::int64_t>(i);
      if (!std::isfinite(x[i]))
        detail::fail(s.name(), cat("key ", in_quotes(key), " row ", std::to_string(row), " is ",
                                   std::isnan(x[i]) ? "nan" : (x[i] > 0 ? "inf" : "-inf"),
                                   ", not a finite number"));
      if (sums.size() == ends.size()) continue;  // the dropped tail
      sum.add(x[i]);
      if (row == ends[sums.size()]) {
        sums.push_back(sum.value());
        sum = {};
      }
    }
  });
  return sums;
}

}  // namespace

namespace detail {

// split_episodes on the file's four per-row columns, read a block of rows at a time so none is
// held whole (a file of 5e7 rows would need 1.6 GB for them): the episode ends from terminals
// and timeouts, then each episode's return and cost. The same episodes, bit for bit, and the
// same refusal for a file with several faults as reading the columns whole in the order
// rewards, costs, terminals, timeouts: a fault of the flags is held until the sums are checked.
EpisodeSplit split_episodes_in_blocks(const DsrlSource& s, std::int64_t rows,
                                      std::int64_t block_rows) {
  std::exception_ptr flag_fault;
  std::vector<std::int64_t> terminal_rows, timeout_rows;
  try {
    terminal_rows = flagged_rows(s, "terminals", block_rows);
    timeout_rows = flagged_rows(s, "timeouts", block_rows);
  } catch (const DataError&) {
    flag_fault = std::current_exception();
  }
  std::vector<std::int64_t> ends;
  std::set_union(terminal_rows.begin(), terminal_rows.end(), timeout_rows.begin(),
                 timeout_rows.end(), std::back_inserter(ends));
  const std::vector<double> returns = episode_sums(s, "rewards", ends, block_rows);
  const std::vector<double> costs = episode_sums(s, "costs", ends, block_rows);
  if (flag_fault) std::rethrow_exception(flag_fault);
  EpisodeSplit split;
  std::int64_t start = 0;
  std::size_t next_terminal = 0;
  for (std::size_t i = 0; i < ends.size(); ++i) {
    Episode e;
    e.index = static_cast<std::int64_t>(i);
    e.start = start;
    e.length = ends[i] + 1 - start;
    e.episodic_return = returns[i];
    e.episodic_cost = costs[i];
    while (next_terminal < terminal_rows.size() && terminal_rows[next_terminal] < ends[i])
      ++next_terminal;
    e.terminal = next_terminal < terminal_rows.size() && terminal_rows[next_terminal] == ends[i];
    split.episodes.push_back(e);
    start = ends[i] + 1;
  }
  split.dropped_tail = rows - start;
  return split;
}

}  // namespace detail

}  // namespace ltt::data
