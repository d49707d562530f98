#pragma once
// The bounds the sequential walk's stopping rules ask for after every label
// (<curation/sequential_walk.hpp>): early refusal simulates the luckiest rest of H_1's labels
// (SafeRunToLevel, can_still_certify, unsafe_lower_bound, landing_bound), the stall rule and
// the switch to the fixed tail forecast the next step at an optimistic unsafe fraction
// (optimistic_fraction). They decide only how many labels are bought, never a test's level.

#include <ltt/bounds.hpp>
#include <ltt/hypergeometric.hpp>
#include <ltt/pvalue.hpp>
#include <ltt/sequential_pvalue.hpp>

#include <curation/sequential_certificate.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace ltt::curation::detail::sequential {

// Whether at most `safe` more safe labels take an anytime test to `level`, by running a copy
// of it on them. The refusal rule asks after every label, and a safe label that then arrives is
// exactly the first step of the run simulated before it (the same update on the same state), so
// the run is kept and continued rather than started over; an unsafe label (or another test, or
// level) starts a new one. The answer is the one a fresh run gives, bit for bit.
class SafeRunToLevel {
 public:
  bool within(const ltt::SequentialCompositionPvalue& p, std::int64_t safe, double level) {
    const bool continues = run_ && level == level_ && p.N_sel() == run_->N_sel() &&
                           p.null_boundary() == run_->null_boundary() &&
                           p.unsafe() == run_->unsafe() && p.labels() >= from_ &&
                           p.labels() <= run_->labels();
    if (!continues) {
      run_ = p;
      from_ = p.labels();
      level_ = level;
    }
    // the run is p after `ahead` more safe labels; p has taken only safe ones since from_
    std::int64_t ahead = run_->labels() - p.labels();
    for (; ahead < safe && run_->pvalue() > level; ++ahead) run_->update(false);
    return ahead <= safe && run_->pvalue() <= level;
  }

 private:
  std::optional<ltt::SequentialCompositionPvalue> run_;
  std::int64_t from_ = 0;  // the test's label count when the run was copied from it
  double level_ = 0.0;
};

// Would H_1 (anytime test p) be rejected if the next labels in S_1 were `safe` safe ones and
// then `unsafe` unsafe ones (safe first: the order that raises the running maximum most): the
// anytime test at `level`, or (cap_level > 0: the run would reach the cap with them) the exact
// test at cap_level?
inline bool can_still_certify(SafeRunToLevel& run, const ltt::SequentialCompositionPvalue& p,
                              const SequentialStep& s1, std::int64_t safe, std::int64_t unsafe,
                              double alpha, double level, double cap_level) {
  if (run.within(p, safe, level)) return true;
  return cap_level > 0.0 &&
         ltt::composition_pvalue(s1.k + unsafe, s1.m + safe + unsafe, s1.N, alpha) <= cap_level;
}

// The fewest unsafe among `draws` uniform draws from `left` trajectories of which `bad` are
// unsafe, except with probability at most `rate`: the largest x with Pr[X < x] <= rate.
inline std::int64_t unsafe_lower_bound(std::int64_t left, std::int64_t bad, std::int64_t draws,
                                       double rate) {
  const std::int64_t least = std::max<std::int64_t>(0, draws - (left - bad));
  std::int64_t x = least;
  while (x < std::min(bad, draws) && ltt::hypergeometric_cdf(x, left, bad, draws) <= rate) ++x;
  return x;
}

// ltt::clopper_pearson_lower(k, m, 0.1), remembered per thread. The stall and refusal rules ask
// for it after every label (a beta quantile, a third of a stratified walk's time when computed
// each time), and walks on the same pool (a validation harness, the label budget's Monte Carlo)
// ask for the same (k, m) again and again. A direct-mapped table of 16384 entries (384 KiB) on the
// heap; a miss computes the bound and takes the entry, so the value is the function's, bit for bit.
inline double optimistic_fraction(std::int64_t k, std::int64_t m) {
  struct Entry {
    std::int64_t k = -1, m = -1;
    double value = 0.0;
  };
  thread_local std::vector<Entry> table(16384);
  const std::uint64_t key =
      (static_cast<std::uint64_t>(m) * 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(k)) *
      0xBF58476D1CE4E5B9ull;
  Entry& e = table[static_cast<std::size_t>(key >> 50)];
  if (e.k != k || e.m != m) e = {k, m, ltt::clopper_pearson_lower(k, m, 0.1)};
  return e.value;
}

// How many of the `draws` labels left under the cap land in S_1 (s1_left of its trajectories
// among the pool_left unlabeled), except with probability at most `rate`: the upper quantile of
// Hyp(pool_left, s1_left, draws). rate = 0 gives the most that can land.
inline std::int64_t landing_bound(std::int64_t pool_left, std::int64_t s1_left, std::int64_t draws,
                                  double rate) {
  const std::int64_t most = std::min(s1_left, draws);
  if (rate == 0.0 || most == 0) return most;
  const auto mean = static_cast<std::int64_t>(
      static_cast<double>(draws) * static_cast<double>(s1_left) / static_cast<double>(pool_left));
  for (std::int64_t x = mean; x < most; ++x)
    if (ltt::hypergeometric_sf(x, pool_left, s1_left, draws) <= rate) return x;
  return most;
}

}  // namespace ltt::curation::detail::sequential
