// The calibrated selection on a pool of 1e6 scored trajectories with n = 200 calibration labels
// (issue "curation", speed bar: grid, calibration counts and walk under 50 ms; `ltt certify`
// on a 1e6-row CSV under 2 s end to end).
//
// Parts, each one arrow of the data flow:
//   grid          threshold_grid (multi-selection of the 12 order statistics, no full sort)
//   counts        calibration_counts (sort the 200 calibration trajectories by score once)
//   walk          composition_walk (p-values only for the steps reached)
//   grid_counts_walk   the three together: the speed bar
//   calibrated_selection   all of it, plus building the selection (a pass over the pool)
//   triple        ltt::certificate_triple at the first step's (N1, m1, k1), which
//                 `ltt certify` adds when a threshold is certified
// Peer, in the same run: the grid by a full std::sort of a copy of the scores, then reading
// each order statistic and its tie-extended selection size by binary search. The counter
// `ratio_to_sort` on the grid is peer time / ltt time (the peer is timed once per run).
//
// Reading: the CSV reader of the `ltt` program (reference_pipeline/certification/
// table_reader.hpp) on a 1e6-row pool held in memory (id,score,return,cost,length; 72 MB), and
// the whole pool reader (pool_file.hpp, read_pool_csv: parse, five columns, id index) on the
// same text. The end-to-end time of `ltt certify` is measured on the built program; docs/cli.md gives the command and the
// figure.
//
// The pool: scores uniform on [0, 1) from a seeded std::mt19937_64; trajectory i unsafe with
// probability 1.6 (1 - g_i)^2, so the walk certifies down to about the median.

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include <curation/curation.hpp>
#include <ltt/certificate_triple.hpp>

#include <certification/pool_file.hpp>
#include <certification/table_reader.hpp>

namespace {

namespace cur = ltt::curation;

struct Pool {
  std::vector<double> score, episodic_return, episodic_cost;
  std::vector<std::uint8_t> unsafe;
  cur::Calibration calibration;
};

const Pool& pool() {
  static const Pool p = [] {
    constexpr std::int64_t N = 1'000'000;
    Pool q;
    std::mt19937_64 rng(20240601);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    q.score.resize(N);
    q.unsafe.resize(N);
    q.episodic_return.resize(N);
    q.episodic_cost.resize(N);
    for (std::int64_t i = 0; i < N; ++i) {
      const auto s = static_cast<std::size_t>(i);
      q.score[s] = unit(rng);
      q.unsafe[s] = unit(rng) < 1.6 * (1 - q.score[s]) * (1 - q.score[s]);
      q.episodic_cost[s] = q.unsafe[s] ? 30 + 40 * unit(rng) : 20 * unit(rng);
      q.episodic_return[s] = 100 * unit(rng) + 50 * q.unsafe[s];
    }
    q.calibration = cur::label_calibration(cur::draw_calibration(N, 200, 7), q.unsafe);
    return q;
  }();
  return p;
}

// The peer: full sort, then each quantile's order statistic and |{g >= lambda}| by binary search.
std::vector<std::int64_t> grid_by_sort(const std::vector<double>& scores) {
  std::vector<double> v(scores);
  std::sort(v.begin(), v.end());
  const auto N = static_cast<std::int64_t>(v.size());
  std::vector<std::int64_t> sizes;
  for (const double q : cur::paper_grid_quantiles) {
    const double lambda = v[static_cast<std::size_t>(cur::quantile_rank(q, N))];
    sizes.push_back(v.end() - std::lower_bound(v.begin(), v.end(), lambda));
  }
  return sizes;
}

double seconds_of_peer() {
  static const double t = [] {
    const auto start = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(grid_by_sort(pool().score));
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }();
  return t;
}

void BM_grid(benchmark::State& state) {
  const Pool& p = pool();
  const double peer = seconds_of_peer();
  double seconds = 0.0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(cur::threshold_grid(p.score));
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  state.counters["ratio_to_sort"] = peer * static_cast<double>(state.iterations()) / seconds;
}

void BM_grid_by_full_sort(benchmark::State& state) {
  const Pool& p = pool();
  for (auto _ : state) benchmark::DoNotOptimize(grid_by_sort(p.score));
}

void BM_counts(benchmark::State& state) {
  const Pool& p = pool();
  const cur::ThresholdGrid grid = cur::threshold_grid(p.score);
  for (auto _ : state)
    benchmark::DoNotOptimize(cur::calibration_counts(grid, p.score, p.calibration));
}

void BM_walk(benchmark::State& state) {
  const Pool& p = pool();
  const cur::ThresholdGrid grid = cur::threshold_grid(p.score);
  const cur::CalibrationCounts counts = cur::calibration_counts(grid, p.score, p.calibration);
  std::size_t steps = 0;
  for (auto _ : state) {
    const auto walk = cur::composition_walk(grid, counts, 0.25, 0.1);
    steps = walk.size();
    benchmark::DoNotOptimize(walk);
  }
  state.counters["steps"] = static_cast<double>(steps);
}

void BM_grid_counts_walk(benchmark::State& state) {
  const Pool& p = pool();
  for (auto _ : state) {
    const cur::ThresholdGrid grid = cur::threshold_grid(p.score);
    const cur::CalibrationCounts counts = cur::calibration_counts(grid, p.score, p.calibration);
    benchmark::DoNotOptimize(cur::composition_walk(grid, counts, 0.25, 0.1));
  }
}

void BM_calibrated_selection(benchmark::State& state) {
  const Pool& p = pool();
  std::int64_t size = 0;
  for (auto _ : state) {
    const cur::CalibratedSelection r = cur::calibrated_selection(p.score, p.calibration);
    size = r.certificate.selection_size;
    benchmark::DoNotOptimize(r);
  }
  state.counters["selection"] = static_cast<double>(size);
}

void BM_triple(benchmark::State& state) {
  const Pool& p = pool();
  const cur::Certificate c = cur::calibrated_selection(p.score, p.calibration).certificate;
  const cur::CertificateStep& s = c.steps.front();
  for (auto _ : state)
    benchmark::DoNotOptimize(
        ltt::certificate_triple(c.pool_size, s.N, s.m, s.k, c.calibration_size, c.alpha, c.delta));
  state.counters["N1"] = static_cast<double>(s.N);
}

const std::string& pool_csv() {
  static const std::string text = [] {
    const Pool& p = pool();
    std::string t = "id,score,return,cost,length\n";
    char line[160];
    for (std::size_t i = 0; i < p.score.size(); ++i) {
      const int n = std::snprintf(line, sizeof line, "%zu,%.17g,%.17g,%.17g,100\n", 1000000000 + i,
                                  p.score[i], p.episodic_return[i], p.episodic_cost[i]);
      t.append(line, static_cast<std::size_t>(n));
    }
    return t;
  }();
  return text;
}

void BM_csv_records(benchmark::State& state) {
  const std::string& text = pool_csv();
  for (auto _ : state) {
    ltt::certification::CsvFile csv("pool.csv", text);
    std::int64_t rows = 0;
    for (ltt::certification::CsvRecord row; csv.next(row);) ++rows;
    benchmark::DoNotOptimize(rows);
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(text.size()));
}

void BM_csv_pool(benchmark::State& state) {
  const std::string& text = pool_csv();
  for (auto _ : state)
    benchmark::DoNotOptimize(ltt::certification::read_pool_csv(ltt::certification::CsvFile("pool.csv", text)));
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(text.size()));
}

}  // namespace

BENCHMARK(BM_grid)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_grid_by_full_sort)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_counts)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_walk)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_grid_counts_walk)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_calibrated_selection)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_triple)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_csv_records)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_csv_pool)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
