#pragma once
// Guarantee validation (paper, section "Guarantee validation" and appendix "Properties of the
// certificate"): on a pool whose unsafe labels are all known, redraw the calibration sample
// many times and count what the procedure does. Per draw d:
//   1. n of the N trajectories uniformly without replacement (draw_calibration, seeded with
//      validation_draw_seed(seed, d)), labeled from the pool (label_calibration);
//   2. the counts m_j, k_j on the threshold grid (calibration_counts) and the composition
//      p-values p_j = composition_pvalue(k_j, m_j, N_j, alpha) at every step;
//   3. the multiple-testing procedure (ltt::test_hypotheses: strict fixed sequence,
//      Bonferroni or Holm) and its returned threshold, the deepest rejected step;
//   4. certified iff a threshold is returned; violated iff certified and the returned
//      selection's true unsafe fraction exceeds alpha, i.e. U_j >= U*_j = floor(alpha N_j) + 1
//      (alpha read as its decimal, as in the test itself): H_j was a true null;
//   5. for the certificate triple, (m_1, k_1), the counts in the first selection S_1.
// Over the draws: the certification rate; the unconditional false-certification rate
// Pr[certified and violated], which Proposition "guarantee" bounds by delta for all three
// procedures; the conditional violation rate Pr[violated | certified], which it does not
// bound; the histogram of returned thresholds; the closed-form rate of Proposition
// "certification rate" for the same pool (strict fixed sequence only: it certifies iff it
// rejects at lambda_1, which is what the closed form counts; Bonferroni and Holm certify on
// other events, and no closed form is given for them); and the certificate triple's coverage
// (fixed sequence only, for the same reason): the triple of <ltt/certificate_triple.hpp> from
// each draw's (m_1, k_1) against the realized rates. Definitions: docs/validation.md.
//
// Determinism: draw d depends only on (seed, d), never on which thread ran it; results are
// stored per draw and reduced in draw order, so every number is the same, bit for bit,
// whatever the thread count. Threads: options.threads (0: std::thread::hardware_concurrency(),
// at least 1), handed draws and then distinct (m_1, k_1) pairs from a shared counter.
//
// Cost: per draw one Floyd draw, three sorts of n positions and J p-values (about 25 us at
// n = 200, J = 12); one triple per distinct (m_1, k_1), about 2.5 ms each at N_1 = 751 (one
// Beta CDF per U_1 of the posterior window), with the rate at each U_1 computed once per pool
// (a table filled on demand from one CertificationRateModel).

#include <curation/calibrated_selection.hpp>
#include <curation/calibration.hpp>
#include <curation/detail/check.hpp>
#include <curation/threshold_grid.hpp>
#include <curation/true_composition.hpp>
#include <ltt/bounds.hpp>
#include <ltt/certificate_triple.hpp>
#include <ltt/certification_rate.hpp>
#include <ltt/composition_pvalues.hpp>
#include <ltt/fixed_sequence.hpp>
#include <ltt/pvalue.hpp>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace ltt::curation {

// Optional progress counters for a caller that shows progress (the `ltt validate` status
// line); workers add to them as they finish. Reading them never changes a result.
struct ValidationProgress {
  std::atomic<std::int64_t> draws_done{0};
  std::atomic<std::int64_t> triples_total{0};  // set once the distinct (m_1, k_1) are known
  std::atomic<std::int64_t> triples_done{0};
};

struct ValidationOptions {
  double alpha = 0.25;                  // risk target
  double delta = 0.1;                   // level of the certificate
  std::int64_t calibration_size = 200;  // n, labels per draw
  std::int64_t draws = 2000;            // calibration draws
  std::uint64_t seed = 0;
  std::vector<double> quantiles{paper_grid_quantiles.begin(), paper_grid_quantiles.end()};
  ltt::Procedure procedure = ltt::Procedure::fixed_sequence;
  double confidence = 0.95;        // two-sided Clopper-Pearson intervals at this level
  bool certificate_triple = true;  // compute the triple's coverage (fixed sequence only)
  ltt::CertificateTripleOptions triple_options{};
  std::int64_t threads = 0;  // 0: std::thread::hardware_concurrency(), at least 1
  ValidationProgress* progress = nullptr;
};

// count successes out of trials, with the two-sided Clopper-Pearson interval at the
// options' confidence: [clopper_pearson_lower(count, trials, (1 - confidence) / 2),
// clopper_pearson_upper(count, trials, (1 - confidence) / 2)]; [0, 1] when trials = 0.
struct ProportionEstimate {
  std::int64_t count = 0;
  std::int64_t trials = 0;
  std::optional<double> rate;  // count / trials; none when trials = 0
  double lower = 0.0;
  double upper = 1.0;
  bool operator==(const ProportionEstimate&) const = default;
};

struct ValidationDraw {
  std::uint64_t seed = 0;                // validation_draw_seed(options.seed, d)
  std::int64_t m1 = 0, k1 = 0;           // calibration draws in S_1, and unsafe among them
  std::optional<std::int64_t> returned;  // grid step returned; none: not certified
  bool violated = false;                 // certified and steps[*returned].true_null
  // the triple priced on (m_1, k_1): fixed sequence with options.certificate_triple
  std::optional<ltt::CertificateTriple> triple;
  bool operator==(const ValidationDraw&) const = default;
};

// The certificate triple against the realized rates (paper, Table "certificate as a triple").
// The realized conditional violation is v = conditional_violation.rate, over certified draws.
struct TripleCoverage {
  std::int64_t distinct_counts = 0;  // distinct (m_1, k_1) among the draws: one triple each
  double mean_r_hat = 0.0;           // over all draws (the paper's r_hat column)
  double mean_r_lo = 0.0;            // over all draws
  std::optional<double> mean_r_hat_certified;  // over certified draws: what a holder sees
  std::optional<double> mean_bound_certified;  // mean of min(1, delta / r_lo), certified draws
  // mean_bound_certified >= v: the paper's per-cell coverage ("covers the realized value")
  std::optional<bool> mean_bound_covers;
  // certified draws whose own bound is >= v, and their fraction of the certified draws
  std::int64_t covered = 0;
  std::optional<double> covered_fraction;
  double max_error_bound = 0.0;  // largest CertificateTriple::error_bound used
  bool operator==(const TripleCoverage&) const = default;
};

struct GuaranteeValidation {
  // inputs
  std::int64_t pool_size = 0;         // N
  std::int64_t pool_unsafe = 0;       // unsafe trajectories in the pool
  std::int64_t calibration_size = 0;  // n
  std::int64_t draws = 0;
  std::uint64_t seed = 0;
  double alpha = 0.0, delta = 0.0, confidence = 0.0;
  ltt::Procedure procedure = ltt::Procedure::fixed_sequence;

  std::vector<ValidationStep> steps;     // the grid, with the histogram of returned steps
  std::vector<double> merged_quantiles;  // grid quantiles whose lambda repeated the previous
  std::int64_t returned_none = 0;        // draws that certified nothing
  double purity_margin = 0.0;            // alpha - min_j U_j / N_j

  ProportionEstimate certification;          // certified / draws
  ProportionEstimate false_certification;    // (certified and violated) / draws
  ProportionEstimate conditional_violation;  // violated / certified
  // certification_rate(N, N_1, U_1, n, alpha, delta): fixed sequence only
  std::optional<double> closed_form_rate;
  std::optional<TripleCoverage> triple;  // fixed sequence with options.certificate_triple

  std::vector<ValidationDraw> outcomes;  // per draw, in draw order
  bool operator==(const GuaranteeValidation&) const = default;
};

// The seed of draw d: the d-th output (from 0) of SplitMix64 started at `seed` (Steele, Lea
// and Flood 2014; the state advances by the golden-ratio increment, the output is its
// finalizer). Draw d's sample is draw_calibration(N, n, validation_draw_seed(seed, d)), so any
// single draw can be replayed through calibrated_selection.
inline std::uint64_t validation_draw_seed(std::uint64_t seed, std::int64_t d) {
  std::uint64_t z = seed + 0x9e3779b97f4a7c15ULL * (static_cast<std::uint64_t>(d) + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

namespace detail::validation {

// Runs work(i) for i in [0, count) on `threads` threads (the caller's among them), handing
// out indices from a shared counter. Results must be written per index; the first exception
// (lowest index) is rethrown after every thread has finished.
template <class Work>
void parallel_for(std::int64_t count, std::int64_t threads, Work&& work) {
  std::atomic<std::int64_t> next{0};
  std::vector<std::exception_ptr> errors(
      static_cast<std::size_t>(std::max<std::int64_t>(threads, 1)));
  std::vector<std::int64_t> error_index(errors.size(), count);
  const auto run = [&](std::size_t t) {
    for (;;) {
      const std::int64_t i = next.fetch_add(1, std::memory_order_relaxed);
      if (i >= count) return;
      try {
        work(i);
      } catch (...) {
        if (i < error_index[t]) {
          error_index[t] = i;
          errors[t] = std::current_exception();
        }
        next.store(count, std::memory_order_relaxed);  // stop handing out work
        return;
      }
    }
  };
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < errors.size(); ++t) pool.emplace_back(run, t);
  run(0);
  for (std::thread& t : pool) t.join();
  std::size_t first = 0;
  for (std::size_t t = 1; t < errors.size(); ++t)
    if (error_index[t] < error_index[first]) first = t;
  if (errors[first]) std::rethrow_exception(errors[first]);
}

// rate(U_1) for one pool, computed on first use from one CertificationRateModel and kept.
// Concurrent first uses of the same u compute the same value twice; nothing else is shared.
class RateTable {
 public:
  explicit RateTable(const ltt::CertificationRateModel& model)
      : model_(model), values_(new std::atomic<double>[static_cast<std::size_t>(model.N1() + 1)]) {
    for (std::int64_t u = 0; u <= model.N1(); ++u)
      values_[static_cast<std::size_t>(u)].store(-1.0, std::memory_order_relaxed);
  }
  double operator()(std::int64_t u) const {
    std::atomic<double>& slot = values_[static_cast<std::size_t>(u)];
    double r = slot.load(std::memory_order_relaxed);
    if (r < 0.0) {
      r = model_.rate(u);
      slot.store(r, std::memory_order_relaxed);
    }
    return r;
  }

 private:
  const ltt::CertificationRateModel& model_;
  std::unique_ptr<std::atomic<double>[]> values_;
};

inline ProportionEstimate proportion(std::int64_t count, std::int64_t trials, double confidence) {
  ProportionEstimate p;
  p.count = count;
  p.trials = trials;
  if (trials > 0) {
    const double side = (1.0 - confidence) / 2.0;
    p.rate = static_cast<double>(count) / static_cast<double>(trials);
    p.lower = ltt::clopper_pearson_lower(count, trials, side);
    p.upper = ltt::clopper_pearson_upper(count, trials, side);
  }
  return p;
}

}  // namespace detail::validation

namespace detail::validation {

inline void check_pool(std::string_view fn, std::span<const double> scores,
                       std::span<const std::uint8_t> unsafe) {
  detail::require_nonempty(fn, "scores", scores.size());
  detail::require_finite(fn, "scores", scores);
  detail::require_same_size(fn, "unsafe", unsafe.size(), "scores", scores.size());
  for (std::size_t i = 0; i < unsafe.size(); ++i)
    if (unsafe[i] > 1)
      detail::invalid(fn, detail::at("unsafe", i), detail::show(std::int64_t{unsafe[i]}),
                      "must be 0 or 1");
}

inline void check_options(std::string_view fn, std::int64_t N, const ValidationOptions& options) {
  ltt::detail::require_open_unit(fn, "options.alpha", options.alpha);
  ltt::detail::require_open_unit(fn, "options.delta", options.delta);
  ltt::detail::require_open_unit(fn, "options.confidence", options.confidence);
  detail::require_positive(fn, "options.calibration_size", options.calibration_size);
  ltt::detail::require_at_most(fn, "options.calibration_size", options.calibration_size,
                               "the pool size", N);
  detail::require_positive(fn, "options.draws", options.draws);
  if (options.threads < 0)
    detail::invalid(fn, "options.threads", detail::show(options.threads),
                    "must be >= 0 (0: one per hardware thread)");
  if (options.procedure != ltt::Procedure::fixed_sequence &&
      options.procedure != ltt::Procedure::bonferroni && options.procedure != ltt::Procedure::holm)
    detail::invalid(fn, "options.procedure",
                    detail::show(static_cast<std::int64_t>(options.procedure)),
                    "is not a known ltt::Procedure");
}

// The threads to use: options.threads, or one per hardware thread; never more than draws.
inline std::int64_t thread_count(const ValidationOptions& options) {
  return std::min<std::int64_t>(
      options.draws, options.threads > 0
                         ? options.threads
                         : std::max<std::int64_t>(1, std::thread::hardware_concurrency()));
}

// The triple of every distinct (m_1, k_1) among the draws, set on each draw.
inline std::vector<ltt::CertificateTriple> draw_triples(GuaranteeValidation& v,
                                                        const ValidationOptions& options,
                                                        const ltt::CertificationRateModel& model,
                                                        std::int64_t threads) {
  std::vector<std::pair<std::int64_t, std::int64_t>> pairs;
  for (const ValidationDraw& o : v.outcomes) pairs.emplace_back(o.m1, o.k1);
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  if (options.progress)
    options.progress->triples_total.store(detail::ssize(pairs.size()), std::memory_order_relaxed);
  const RateTable table(model);
  const std::int64_t N = v.pool_size, N1 = v.steps.front().N, n = v.calibration_size;
  std::vector<ltt::CertificateTriple> triples(pairs.size());
  parallel_for(detail::ssize(pairs.size()), threads, [&](std::int64_t i) {
    const auto [m1, k1] = pairs[static_cast<std::size_t>(i)];
    triples[static_cast<std::size_t>(i)] =
        ltt::certificate_triple(N, N1, m1, k1, n, v.alpha, v.delta, table, options.triple_options);
    if (options.progress) options.progress->triples_done.fetch_add(1, std::memory_order_relaxed);
  });
  for (ValidationDraw& o : v.outcomes) {
    const auto it = std::lower_bound(pairs.begin(), pairs.end(), std::pair{o.m1, o.k1});
    const ltt::CertificateTriple& t = triples[static_cast<std::size_t>(it - pairs.begin())];
    o.triple = t;
  }
  return triples;
}

// The coverage of the triples (v.outcomes carry theirs), `certified` and `violated` counted.
inline TripleCoverage triple_coverage(const GuaranteeValidation& v,
                                      std::span<const ltt::CertificateTriple> triples,
                                      std::int64_t certified, std::int64_t violated) {
  TripleCoverage c;
  c.distinct_counts = detail::ssize(triples.size());
  for (const ltt::CertificateTriple& t : triples)
    c.max_error_bound = std::max(c.max_error_bound, t.error_bound);
  long double r_hat = 0.0L, r_lo = 0.0L, r_hat_certified = 0.0L, bound_certified = 0.0L;
  for (const ValidationDraw& o : v.outcomes) {
    r_hat += o.triple->r_hat;
    r_lo += o.triple->r_lo;
    if (o.returned) {
      r_hat_certified += o.triple->r_hat;
      bound_certified += o.triple->conditional_bound;
    }
  }
  c.mean_r_hat = static_cast<double>(r_hat / static_cast<long double>(v.draws));
  c.mean_r_lo = static_cast<double>(r_lo / static_cast<long double>(v.draws));
  if (certified > 0) {
    const auto k = static_cast<long double>(certified);
    c.mean_r_hat_certified = static_cast<double>(r_hat_certified / k);
    c.mean_bound_certified = static_cast<double>(bound_certified / k);
    // bound >= v = violated / certified, tested as bound * certified >= violated in long
    // double, which is exact for fewer than 2^11 certified draws (no rounded division).
    const auto covers = [&](double bound) {
      return static_cast<long double>(bound) * k >= static_cast<long double>(violated);
    };
    c.mean_bound_covers = covers(*c.mean_bound_certified);
    for (const ValidationDraw& o : v.outcomes)
      if (o.returned && covers(o.triple->conditional_bound)) ++c.covered;
    c.covered_fraction = static_cast<double>(c.covered) / static_cast<double>(certified);
  }
  return c;
}

// The reductions, in draw order: the returned-step histogram and the three proportions of v
// from its outcomes (each with .returned and .violated); returns (certified, violated).
template <class Validation>
std::pair<std::int64_t, std::int64_t> count_outcomes(Validation& v, double confidence) {
  std::int64_t certified = 0, violated = 0;
  for (const auto& o : v.outcomes) {
    if (o.returned) {
      ++certified;
      ++v.steps[static_cast<std::size_t>(*o.returned)].returned;
    } else {
      ++v.returned_none;
    }
    violated += o.violated;
  }
  v.certification = proportion(certified, v.draws, confidence);
  v.false_certification = proportion(violated, v.draws, confidence);
  v.conditional_violation = proportion(violated, certified, confidence);
  return {certified, violated};
}

}  // namespace detail::validation

// Validation on a pool of finite scores with known unsafe bits (0 or 1), one per trajectory.
inline GuaranteeValidation validate_guarantee(std::span<const double> scores,
                                              std::span<const std::uint8_t> unsafe,
                                              const ValidationOptions& options = {}) {
  namespace dv = detail::validation;
  constexpr std::string_view fn = "ltt::curation::validate_guarantee";
  dv::check_pool(fn, scores, unsafe);
  const std::int64_t N = detail::ssize(scores.size());
  dv::check_options(fn, N, options);

  const double alpha = options.alpha, delta = options.delta;
  const std::int64_t n = options.calibration_size, draws = options.draws;
  const ThresholdGrid grid = threshold_grid(scores, options.quantiles);
  const std::int64_t J = grid.size();
  const std::int64_t threads = dv::thread_count(options);

  GuaranteeValidation v;
  v.pool_size = N;
  v.calibration_size = n;
  v.draws = draws;
  v.seed = options.seed;
  v.alpha = alpha;
  v.delta = delta;
  v.confidence = options.confidence;
  v.procedure = options.procedure;
  v.merged_quantiles = grid.merged_quantiles;
  TrueComposition truth = true_composition(grid, scores, unsafe, alpha);
  v.steps = std::move(truth.steps);
  v.pool_unsafe = truth.pool_unsafe;
  v.purity_margin = truth.purity_margin;

  // Draws.
  v.outcomes.resize(static_cast<std::size_t>(draws));
  dv::parallel_for(draws, threads, [&](std::int64_t d) {
    ValidationDraw& o = v.outcomes[static_cast<std::size_t>(d)];
    o.seed = validation_draw_seed(options.seed, d);
    const Calibration c = label_calibration(draw_calibration(N, n, o.seed), unsafe);
    const CalibrationCounts counts = calibration_counts(grid, scores, c);
    // Every grid step's p-value at once (the same doubles as one composition_pvalue per step).
    std::vector<ltt::CompositionCase> cases(static_cast<std::size_t>(J));
    for (std::size_t j = 0; j < cases.size(); ++j)
      cases[j] = {counts.k[j], counts.m[j], grid.selection_size[j], alpha};
    std::vector<double> p(cases.size());
    ltt::composition_pvalues(cases, p);
    o.returned = ltt::test_hypotheses(options.procedure, p, delta).deepest_rejected;
    o.violated = o.returned && v.steps[static_cast<std::size_t>(*o.returned)].true_null;
    o.m1 = counts.m.front();
    o.k1 = counts.k.front();
    if (options.progress) options.progress->draws_done.fetch_add(1, std::memory_order_relaxed);
  });

  // The closed form and the triples: the strict walk's, so fixed sequence only.
  const bool walk = options.procedure == ltt::Procedure::fixed_sequence;
  std::optional<ltt::CertificationRateModel> model;
  if (walk) {
    model.emplace(N, v.steps.front().N, n, alpha, delta);
    v.closed_form_rate = model->rate(v.steps.front().U);
  }
  std::vector<ltt::CertificateTriple> triples;
  if (walk && options.certificate_triple) triples = dv::draw_triples(v, options, *model, threads);

  const auto [certified, violated] = dv::count_outcomes(v, options.confidence);
  if (!triples.empty()) v.triple = dv::triple_coverage(v, triples, certified, violated);
  return v;
}

}  // namespace ltt::curation
