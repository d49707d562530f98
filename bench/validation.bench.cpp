// Guarantee validation (ltt::curation::validate_guarantee) on a pool of 5000 with 2000 draws of
// n = 200 at alpha = 0.25, delta = 0.1 on the paper's grid, against the obvious resample loop
// in the same run.
//
// Pool: scores uniform on [0, 1), unsafe with probability 0.6 - 0.5 score (fixed seed), so
// the first selection is about 8% unsafe and certification is common (rate about 0.87).
//
//   harness/threads:T/triple:B   validate_guarantee with T threads, with (B = 1) or without
//                                the certificate triple's coverage
//   loop/triple:0                one calibrated_selection per draw on the harness's own
//                                draws (draw_calibration + label_calibration), one thread
//   loop/triple:1                the same plus ltt::certificate_triple(N, N1, m1, k1, n, alpha,
//                                delta) per draw, each building its own rate model: what a
//                                script resampling the paper's Table "certificate as a triple"
//                                does without caching
// The counter `rate` is the certification rate each side found (equal: the same draws).

#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <vector>

#include <curation/calibrated_selection.hpp>
#include <curation/calibration.hpp>
#include <curation/validation.hpp>
#include <ltt/certificate_triple.hpp>

namespace {

namespace cur = ltt::curation;

struct Pool {
  std::vector<double> scores;
  std::vector<std::uint8_t> unsafe;
};

const Pool& pool() {
  static const Pool p = [] {
    Pool q;
    std::mt19937_64 rng(20261125);
    for (int i = 0; i < 5000; ++i) {
      const double s = cur::detail::uniform_unit(rng);
      q.scores.push_back(s);
      q.unsafe.push_back(cur::detail::uniform_unit(rng) < 0.6 - 0.5 * s ? 1 : 0);
    }
    return q;
  }();
  return p;
}

constexpr std::int64_t draws = 2000, n = 200;

void BM_harness(benchmark::State& state) {
  cur::ValidationOptions o;
  o.draws = draws;
  o.calibration_size = n;
  o.seed = 1;
  o.threads = state.range(0);
  o.certificate_triple = state.range(1) != 0;
  std::int64_t certified = 0;
  for (auto _ : state) {
    const cur::GuaranteeValidation v = cur::validate_guarantee(pool().scores, pool().unsafe, o);
    certified = v.certification.count;
    benchmark::DoNotOptimize(certified);
  }
  state.counters["rate"] = static_cast<double>(certified) / draws;
  state.SetItemsProcessed(state.iterations() * draws);
}

void BM_loop(benchmark::State& state) {
  const bool triple = state.range(0) != 0;
  const auto N = static_cast<std::int64_t>(pool().scores.size());
  const cur::ThresholdGrid grid = cur::threshold_grid(pool().scores);
  const std::int64_t N1 = grid.selection_size.front();
  std::int64_t certified = 0;
  double sum_r_hat = 0.0;
  for (auto _ : state) {
    certified = 0;
    for (std::int64_t d = 0; d < draws; ++d) {
      const cur::Calibration c = cur::label_calibration(
          cur::draw_calibration(N, n, cur::validation_draw_seed(1, d)), pool().unsafe);
      const cur::CalibratedSelection r = cur::calibrated_selection(pool().scores, c);
      certified += r.certificate.certified;
      if (triple) {
        const auto& s = r.certificate.steps.front();
        sum_r_hat += ltt::certificate_triple(N, N1, s.m, s.k, n, 0.25, 0.1).r_hat;
      }
    }
    benchmark::DoNotOptimize(certified);
    benchmark::DoNotOptimize(sum_r_hat);
  }
  state.counters["rate"] = static_cast<double>(certified) / draws;
  state.SetItemsProcessed(state.iterations() * draws);
}

}  // namespace

BENCHMARK(BM_harness)
    ->ArgNames({"threads", "triple"})
    ->Args({1, 0})
    ->Args({2, 0})
    ->Args({1, 1})
    ->Args({2, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_loop)->ArgName("triple")->Arg(0)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_loop)->ArgName("triple")->Arg(1)->Iterations(1)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
