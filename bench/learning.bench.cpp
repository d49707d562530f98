// Throughput of the Bradley-Terry value network, ltt's Eigen backend against PyTorch on CPU.
//
// Workloads (issue "value learning and cloning", speed bar), the paper's architecture: obs dim
// 40, two hidden layers of 256, one output, float32, one thread:
//  - bradley_terry_step: one training step (forward, backward, Adam) on a minibatch of 512 pairs
//    of two segments of 30 states = 30720 state-evaluations, through the Backend interface as
//    the trainer calls it;
//  - inference: forward only over the same 30720 states (trajectory scoring);
//  - */chunk: the same on EigenMlp directly, by the number of rows processed at once (the
//    backend's default is EigenMlp::default_chunk_rows);
//  - value_training_epoch: train_value_ensemble for one member and one epoch on 1000 pairs (the
//    paper's per-task count), so minibatch gathering and network setup are included;
//  - fma_peak: the core's float FMA rate on registers, the ceiling for the step's FLOP/s.
// Items per second are states per CPU second.
//
// The peer: after its own benchmarks the program runs bench/learning_torch.py (Debian's
// python3-torch; OPENBLAS_NUM_THREADS=1, torch.set_num_threads(1)), which times the same two
// workloads, and prints both figures with their ratio. --peer=none skips it; --peer=PYTHON names
// the interpreter (default /usr/bin/python3, where Debian installs torch). docs/learning.md
// records the figures.

#include <benchmark/benchmark.h>

#include <Eigen/Core>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <learning/backend.hpp>
#include <learning/eigen_mlp.hpp>
#include <learning/value_training.hpp>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace {

namespace lrn = ltt::learning;

constexpr std::int64_t pairs = 512, H = 30, obs_dim = 40;
constexpr std::int64_t states = pairs * 2 * H;  // 30720

const std::vector<std::int64_t>& paper_hidden() {
  static const std::vector<std::int64_t> hidden{256, 256};
  return hidden;
}

const std::vector<float>& batch() {
  static const std::vector<float> x = [] {
    std::mt19937_64 rng(20261126);
    std::normal_distribution<float> normal;
    std::vector<float> v(static_cast<std::size_t>(states * obs_dim));
    for (auto& e : v) e = normal(rng);
    return v;
  }();
  return x;
}

lrn::MlpWeights start() {
  return lrn::initial_weights(lrn::value_shape(obs_dim, paper_hidden()), 1);
}

// Multiply-adds per state of a training step: forward 40*256 + 256*256 + 256, the weight
// gradients as many, the input gradients of the second and third layers 256*256 + 256 (the
// first layer's is not needed). Two FLOP each.
constexpr double step_flop_per_state =
    2.0 * (2 * (obs_dim * 256 + 256 * 256 + 256) + 256 * 256 + 256);

void bradley_terry_step(benchmark::State& state) {
  const auto net = lrn::eigen_backend().network(start());
  for (auto _ : state) benchmark::DoNotOptimize(net->bradley_terry_step(batch(), pairs, H));
  state.SetItemsProcessed(state.iterations() * states);
  state.counters["FLOP/s"] = benchmark::Counter(step_flop_per_state * states,
                                                benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(bradley_terry_step)->Unit(benchmark::kMillisecond);

// Multiply-adds per state of a forward pass: 40*256 + 256*256 + 256. Two FLOP each.
constexpr double forward_flop_per_state = 2.0 * (obs_dim * 256 + 256 * 256 + 256);

void inference(benchmark::State& state) {
  const auto net = lrn::eigen_backend().network(start());
  std::vector<float> out(static_cast<std::size_t>(states));
  for (auto _ : state) {
    net->predict(batch(), states, out);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * states);
  state.counters["FLOP/s"] = benchmark::Counter(forward_flop_per_state * states,
                                                benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(inference)->Unit(benchmark::kMillisecond);

void bradley_terry_step_by_chunk(benchmark::State& state) {
  const auto w = start();
  lrn::EigenMlp<float> mlp(w.shape, w.parameters, {}, state.range(0));
  for (auto _ : state) {
    benchmark::DoNotOptimize(mlp.bradley_terry_gradient(batch(), pairs, H));
    mlp.adam_step();
  }
  state.SetItemsProcessed(state.iterations() * states);
}
BENCHMARK(bradley_terry_step_by_chunk)
    ->ArgName("chunk")
    ->Arg(240)
    ->Arg(480)
    ->Arg(960)
    ->Arg(1920)
    ->Arg(states)
    ->Unit(benchmark::kMillisecond);

void inference_by_chunk(benchmark::State& state) {
  const auto w = start();
  lrn::EigenMlp<float> mlp(w.shape, w.parameters, {}, state.range(0));
  std::vector<float> out(static_cast<std::size_t>(states));
  for (auto _ : state) {
    mlp.predict(batch(), states, out);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * states);
}
BENCHMARK(inference_by_chunk)
    ->ArgName("chunk")
    ->Arg(256)
    ->Arg(512)
    ->Arg(1024)
    ->Arg(4096)
    ->Arg(states)
    ->Unit(benchmark::kMillisecond);

void value_training_epoch(benchmark::State& state) {
  // 1000 pairs over a table of 20000 states (pairs may overlap, as segments of a pool do)
  constexpr std::int64_t rows = 20000, count = 1000;
  static const std::vector<float> table(batch().begin(), batch().begin() + rows * obs_dim);
  lrn::SegmentPairs p;
  p.segment_length = H;
  std::mt19937_64 rng(5);
  for (std::int64_t i = 0; i < count; ++i) {
    p.preferred.push_back(static_cast<std::int64_t>(rng() % (rows - H + 1)));
    p.rejected.push_back(static_cast<std::int64_t>(rng() % (rows - H + 1)));
  }
  lrn::ValueTrainingOptions o;
  o.members = 1;
  o.epochs = 1;
  o.progress = lrn::Progress::quiet;
  for (auto _ : state) benchmark::DoNotOptimize(lrn::train_value_ensemble(table, obs_dim, p, o));
  state.SetItemsProcessed(state.iterations() * count * 2 * H);
}
BENCHMARK(value_training_epoch)->Unit(benchmark::kMillisecond);

// The machine's single-thread float matrix product at the shape of a minibatch through a
// hidden layer (30720 x 256 by 256 x 256): the yardstick that scales `ltt score`'s time bar to
// another machine (docs/performance.md, "ltt score on a DSRL-sized file").
void eigen_float_gemm(benchmark::State& state) {
  const Eigen::MatrixXf a = Eigen::MatrixXf::Random(states, 256),
                        b = Eigen::MatrixXf::Random(256, 256);
  Eigen::MatrixXf c(states, 256);
  for (auto _ : state) {
    c.noalias() = a * b;
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["FLOP/s"] =
      benchmark::Counter(2.0 * states * 256 * 256, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(eigen_float_gemm)->Unit(benchmark::kMillisecond);

// The core's float FMA peak at the build's vector width (Eigen's packet: 8 floats per FMA for
// x86-64-v3, 16 for x86-64-v4): 12 independent chains of fused multiply-adds on registers,
// enough to keep both FMA pipes of a Zen 4 or a Haswell busy. No product of this build can run
// faster on one thread, so the BT step's FLOP/s over this, in the same run, is the share of the
// machine the step uses (docs/performance.md).
void fma_peak(benchmark::State& state) {
  using Packet = Eigen::internal::packet_traits<float>::type;
  constexpr int chains = 12, size = Eigen::internal::packet_traits<float>::size;
  constexpr long rounds = 1 << 20;
  Packet acc[chains];
  for (int c = 0; c < chains; ++c) acc[c] = Eigen::internal::pset1<Packet>(1.0f + 1e-7f * c);
  const Packet a = Eigen::internal::pset1<Packet>(0.9999999f);
  const Packet b = Eigen::internal::pset1<Packet>(1e-7f);
  for (auto _ : state) {
    for (long r = 0; r < rounds; ++r)
      for (int c = 0; c < chains; ++c) acc[c] = Eigen::internal::pmadd(acc[c], a, b);
    benchmark::DoNotOptimize(acc);
  }
  state.counters["FLOP/s"] = benchmark::Counter(2.0 * size * chains * rounds,
                                                benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(fma_peak)->Unit(benchmark::kMillisecond);

#if defined(__x86_64__)
// The same with 512-bit FMAs (16 floats), whatever the build targets: the ceiling of a peer whose
// kernels use AVX-512 (OpenBLAS's SkylakeX), and of an x86-64-v4 build. A core with two 512-bit
// FMA units (Intel Xeon since Skylake-SP) doubles the 256-bit peak; one that splits each into
// two 256-bit halves (AMD Zen 4) does not. main() registers it where the CPU has AVX-512F and the
// build's packets are narrower.
[[gnu::target("avx512f")]] void fma_peak_avx512(benchmark::State& state) {
  constexpr int chains = 12;
  constexpr long rounds = 1 << 20;
  __m512 acc[chains];
  for (int c = 0; c < chains; ++c) acc[c] = _mm512_set1_ps(1.0f + 1e-7f * c);
  const __m512 a = _mm512_set1_ps(0.9999999f), b = _mm512_set1_ps(1e-7f);
  for (auto _ : state) {
    for (long r = 0; r < rounds; ++r)
      for (int c = 0; c < chains; ++c) acc[c] = _mm512_fmadd_ps(acc[c], a, b);
    benchmark::DoNotOptimize(acc);
  }
  state.counters["FLOP/s"] =
      benchmark::Counter(2.0 * 16 * chains * rounds, benchmark::Counter::kIsIterationInvariantRate);
}
#endif

// Scoring a DSRL-sized file: V-bar of the paper's ensemble (K = 3, 72 -> 256 -> 256 -> 1, the
// width of OfflineCarGoal1) over 2^18 rows, on 1 and 2 threads. Items are states.
void ensemble_scoring(benchmark::State& state) {
  constexpr std::int64_t width = 72, rows = 1 << 18;
  static const std::vector<float> table = [] {
    std::mt19937_64 rng(72);
    std::normal_distribution<float> normal;
    std::vector<float> v(static_cast<std::size_t>(rows * width));
    for (auto& e : v) e = normal(rng);
    return v;
  }();
  lrn::ValueEnsemble ensemble;
  for (std::uint64_t k = 0; k < 3; ++k)
    ensemble.members.push_back(lrn::initial_weights(lrn::value_shape(width, paper_hidden()), k));
  for (auto _ : state)
    benchmark::DoNotOptimize(
        lrn::state_values(ensemble, table, width, lrn::eigen_backend(), state.range(0)));
  state.SetItemsProcessed(state.iterations() * rows);
}
// One thread by CPU time (the peer's measure, robust on a shared machine); two by wall time.
BENCHMARK(ensemble_scoring)->ArgName("threads")->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK(ensemble_scoring)
    ->ArgName("threads")
    ->Arg(2)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// Keeps each benchmark's items per second and FLOP/s (the median when repetitions are
// aggregated).
class Recorder : public benchmark::ConsoleReporter {
 public:
  std::map<std::string, double> rate, flops;
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const auto& run : runs) {
      if (run.error_occurred) continue;
      const bool keep = run.aggregate_name.empty() ? !rate.contains(run.run_name.str()) &&
                                                         !flops.contains(run.run_name.str())
                                                   : run.aggregate_name == "median";
      if (!keep) continue;
      if (const auto it = run.counters.find("items_per_second"); it != run.counters.end())
        rate[run.run_name.str()] = it->second;
      if (const auto it = run.counters.find("FLOP/s"); it != run.counters.end())
        flops[run.run_name.str()] = it->second;
    }
    ConsoleReporter::ReportRuns(runs);
  }
};

// The value of "key": number in a one-line JSON object, or 0.
double json_number(const std::string& json, const std::string& key) {
  const auto at = json.find("\"" + key + "\":");
  return at == std::string::npos ? 0.0 : std::strtod(json.c_str() + at + key.size() + 3, nullptr);
}

// The string value of `key` in the peer's one-line JSON (no escapes in the values read here), or
// "" if absent or not a string.
std::string json_string(const std::string& json, const std::string& key) {
  const std::string opening = "\"" + key + "\": \"";
  const auto at = json.find(opening);
  if (at == std::string::npos) return "";
  const auto from = at + opening.size(), to = json.find('"', from);
  return to == std::string::npos ? "" : json.substr(from, to - from);
}

}  // namespace

int main(int argc, char** argv) {
  std::string peer = "/usr/bin/python3";
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::strncmp(argv[i], "--peer=", 7) == 0)
      peer = argv[i] + 7;
    else
      args.push_back(argv[i]);
  }
  int n = static_cast<int>(args.size());
  benchmark::Initialize(&n, args.data());
  if (benchmark::ReportUnrecognizedArguments(n, args.data())) return 1;
#if defined(__x86_64__)
  if (Eigen::internal::packet_traits<float>::size < 16 && __builtin_cpu_supports("avx512f"))
    benchmark::RegisterBenchmark("fma_peak_avx512", fma_peak_avx512)->Unit(benchmark::kMillisecond);
#endif
  Recorder recorder;
  benchmark::RunSpecifiedBenchmarks(&recorder);
  benchmark::Shutdown();
  if (peer == "none") return 0;

  const std::string command = "OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 " + peer + " " +
                              LTT_LEARNING_TORCH_SCRIPT + " --json";
  std::printf("\nPyTorch peer: %s\n", command.c_str());
  std::fflush(stdout);
  std::string json;
  if (std::FILE* pipe = popen(command.c_str(), "r")) {
    char buffer[4096];
    for (std::size_t got; (got = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;)
      json.append(buffer, got);
    if (pclose(pipe) != 0) json.clear();
  }
  const double torch_step = json_number(json, "bt_step_states_per_second");
  const double torch_inference = json_number(json, "inference_states_per_second");
  if (torch_step <= 0 || torch_inference <= 0) {
    std::printf("PyTorch peer did not run (needs python3-torch; --peer=none skips it)\n");
    return 0;
  }
  // PyTorch's figure for each workload is its best over OpenBLAS's candidate kernels (the
  // library's own pick and each family the CPU supports, bench/openblas_kernel.py), named in the
  // last column: a library that does not know the CPU falls back to a slower kernel, and the
  // fastest one depends on the shapes.
  std::printf("%-34s %14s %14s %8s  %s\n", "states per CPU second", "ltt (Eigen)", "PyTorch",
              "ratio", "PyTorch's OpenBLAS kernel");
  const auto row = [&](const char* what, const char* name, const std::string& metric) {
    const auto it = recorder.rate.find(name);
    const double theirs = json_number(json, metric + "_states_per_second");
    if (it == recorder.rate.end() || theirs <= 0) return;
    std::printf("%-34s %14.3e %14.3e %8.2f  %s\n", what, it->second, theirs, it->second / theirs,
                json_string(json, metric + "_openblas_corename").c_str());
  };
  row("BT step (fwd + bwd + Adam)", "bradley_terry_step", "bt_step");
  row("inference (forward only)", "inference", "inference");
  row("ensemble scoring (K = 3, 72-dim)", "ensemble_scoring/threads:1", "ensemble_scoring");
  // Where the time goes: each side's arithmetic rate against the core's FMA peak at the build's
  // vector width, and, where the CPU has AVX-512 and the build does not use it, against the
  // 512-bit peak too (the ceiling of a peer that uses it).
  const auto peak = recorder.flops.find("fma_peak");
  if (peak == recorder.flops.end()) return 0;
  const auto wide = recorder.flops.find("fma_peak_avx512");
  const int width = Eigen::internal::packet_traits<float>::size;
  std::printf("FMA peak (floats per FMA %d, this build's width): %.3e FLOP per CPU second\n", width,
              peak->second);
  if (wide != recorder.flops.end())
    std::printf("FMA peak (floats per FMA 16, AVX-512): %.3e FLOP per CPU second\n", wide->second);
  const auto share = [&](const char* what, const char* name, double torch_flops) {
    const auto it = recorder.flops.find(name);
    if (it == recorder.flops.end()) return;
    std::printf("%-28s FLOP per CPU second: ltt %.3e (%.0f%% of peak", what, it->second,
                100.0 * it->second / peak->second);
    if (wide != recorder.flops.end())
      std::printf(", %.0f%% of AVX-512 peak", 100.0 * it->second / wide->second);
    std::printf("), PyTorch %.3e (%.0f%%", torch_flops, 100.0 * torch_flops / peak->second);
    if (wide != recorder.flops.end()) std::printf(", %.0f%%", 100.0 * torch_flops / wide->second);
    std::printf(")\n");
  };
  share("BT step", "bradley_terry_step", torch_step * step_flop_per_state);
  share("inference", "inference", torch_inference * forward_flop_per_state);
  return 0;
}
