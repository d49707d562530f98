// Tests for reference_pipeline/learning/eigen_mlp.hpp and losses.hpp: the hand-written backward
// pass of both losses, and of a loss the caller computes from the outputs (output_loss_gradient,
// output_gradient), against central finite differences, run in double (the same template code
// the float32 backend runs); the float32 gradient against the double one and, byte for byte,
// against the plain Eigen formulation of the same chunked pass (the fused kernels must not
// change a bit of a trained model); Adam's update by hand, and AdamState on a vector of
// its own against the network's; the gradient norm and scaling; the losses' values and their
// stability far out.
//
// Tolerance. In double with step h = 1e-5 the central difference has truncation error about
// h^2 |L'''| / 6 ~ 1e-11 and rounding error about eps |L| / h ~ 1e-11 for these O(1) losses, so
// a relative error of 1e-6 leaves five orders of margin while a wrong term (a missing factor,
// a sign, a transposed index) gives errors of order 1. ReLU kinks make L non-smooth, but with
// pre-activations drawn from continuous distributions none lies within h of a kink (the test
// would show it as a single bad coordinate).

#include <learning/eigen_mlp.hpp>
#include <learning/losses.hpp>

#include <Eigen/Core>

#include <doctest/doctest.h>

#include "../support/finite_difference.hpp"
#include "../support/throws.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <span>
#include <vector>

namespace {

namespace lrn = ltt::learning;
using ltt_test::check_throws_naming;

std::vector<double> normal_values(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  std::vector<double> x(n);
  for (auto& v : x) v = normal(rng);
  return x;
}

std::vector<double> as_double(const std::vector<float>& x) { return {x.begin(), x.end()}; }

using ltt_test::worst_relative_error;

// The float32 gradient by the textbook Eigen expressions, chunk by chunk as EigenMlp cuts the
// minibatch: Z = b + W A, ReLU, the loss's dL/dY, then per layer gW += dZ A^T, gb += row sums
// of dZ, dA = W^T dZ masked by A > 0. Eigen's products, blocked as EigenMlp fixes them.
// `loss` fills dL/dY for the chunk's outputs (rows `first` .. `first + n`) and returns its loss.
template <class Loss>
Eigen::VectorXf plain_eigen_gradient(const lrn::MlpShape& shape, const std::vector<float>& weights,
                                     const std::vector<float>& x, std::int64_t rows,
                                     std::int64_t chunk, Loss loss) {
  using Matrix = Eigen::MatrixXf;
  using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  Eigen::setCpuCacheSizes(std::ptrdiff_t{48} << 10, std::ptrdiff_t{1} << 20,
                          std::ptrdiff_t{384} << 20);
  const auto layers = static_cast<std::size_t>(shape.layers());
  // aligned as EigenMlp's own vectors, so Eigen peels the same elements off its packet loops
  const Eigen::VectorXf p = Eigen::Map<const Eigen::VectorXf>(
      weights.data(), static_cast<Eigen::Index>(weights.size()));
  Eigen::VectorXf g = Eigen::VectorXf::Zero(p.size());
  for (std::int64_t first = 0; first < rows; first += chunk) {
    const Eigen::Index n = std::min(chunk, rows - first);
    const Eigen::Map<const Matrix> X(x.data() + first * shape.input(), shape.input(), n);
    std::vector<Matrix> a(layers);
    for (std::size_t l = 0; l < layers; ++l) {
      const Eigen::Index in = shape.widths[l], out = shape.widths[l + 1];
      const float* w = p.data() + shape.weight_offset(static_cast<std::int64_t>(l));
      const Eigen::Map<const RowMatrix> W(w, out, in);
      a[l].resize(out, n);
      a[l].colwise() = Eigen::Map<const Eigen::VectorXf>(w + out * in, out);
      const Eigen::Map<const Matrix> A(l == 0 ? X.data() : a[l - 1].data(), in, n);
      a[l].noalias() += W * A;
      if (l + 1 < layers)
        a[l] = a[l].cwiseMax(0.0f);
      else if (shape.output == lrn::OutputActivation::tanh)
        a[l] = a[l].array().tanh().matrix();
    }
    Matrix dZ(a.back().rows(), n);
    loss(a.back(), first, n, dZ);
    if (shape.output == lrn::OutputActivation::tanh)
      dZ.array() *= 1.0f - a.back().array().square();
    for (std::size_t l = layers; l-- > 0;) {
      const Eigen::Index in = shape.widths[l], out = shape.widths[l + 1];
      const auto offset = shape.weight_offset(static_cast<std::int64_t>(l));
      const Eigen::Map<const RowMatrix> W(p.data() + offset, out, in);
      Eigen::Map<RowMatrix> gW(g.data() + offset, out, in);
      Eigen::Map<Eigen::VectorXf> gb(g.data() + offset + out * in, out);
      const Eigen::Map<const Matrix> A(l == 0 ? X.data() : a[l - 1].data(), in, n);
      gW.noalias() += dZ * A.transpose();
      gb.noalias() += dZ.rowwise().sum();
      if (l == 0) break;
      Matrix dA(in, n);
      dA.noalias() = W.transpose() * dZ;
      dZ = (A.array() > 0.0f).select(dA, 0.0f);
    }
  }
  return g;
}

bool same_bytes(std::span<const float> a, const Eigen::VectorXf& b) {
  return a.size() == static_cast<std::size_t>(b.size()) &&
         std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace

TEST_CASE("float32 gradient: the same bytes as the plain Eigen formulation") {
  // The paper's value network on 20 pairs of H = 30 (chunks of 8 pairs: 480, 480, 240 rows),
  // a narrow odd-sized one, and a policy with one tanh output (its last layer has one output
  // too, so the fused outer product runs under the squared error).
  struct Case {
    lrn::MlpShape shape;
    std::int64_t H;
  };
  const std::vector<std::int64_t> paper{256, 256}, odd{13, 5};
  for (const Case& c : {Case{lrn::value_shape(40, paper), 30}, Case{lrn::value_shape(7, odd), 3},
                        Case{lrn::policy_shape(9, odd, 1), 0}}) {
    CAPTURE(c.shape.input());
    const auto w = lrn::initial_weights(c.shape, 41);
    const std::int64_t chunk = lrn::EigenMlp<float>::default_chunk_rows;
    lrn::EigenMlp<float> mlp(c.shape, w.parameters);
    Eigen::VectorXf g;
    if (c.H > 0) {
      const std::int64_t pairs = 20, rows = pairs * 2 * c.H;
      const auto xd = normal_values(static_cast<std::size_t>(rows * c.shape.input()), 42);
      const std::vector<float> x(xd.begin(), xd.end());
      mlp.bradley_terry_gradient(x, pairs, c.H);
      const std::int64_t per_chunk = std::max<std::int64_t>(1, chunk / (2 * c.H)) * 2 * c.H;
      g = plain_eigen_gradient(
          c.shape, w.parameters, x, rows, per_chunk,
          [&](const Eigen::MatrixXf& y, std::int64_t, Eigen::Index n, Eigen::MatrixXf& dy) {
            lrn::bradley_terry_loss<float>({y.data(), static_cast<std::size_t>(n)}, n / (2 * c.H),
                                           c.H, pairs, {dy.data(), static_cast<std::size_t>(n)});
          });
    } else {
      const std::int64_t rows = 1100;
      const auto xd = normal_values(static_cast<std::size_t>(rows * c.shape.input()), 43);
      const auto td = normal_values(static_cast<std::size_t>(rows), 44);
      const std::vector<float> x(xd.begin(), xd.end()), t(td.begin(), td.end());
      mlp.squared_error_gradient(x, t, {}, rows);
      g = plain_eigen_gradient(
          c.shape, w.parameters, x, rows, chunk,
          [&](const Eigen::MatrixXf& y, std::int64_t first, Eigen::Index n, Eigen::MatrixXf& dy) {
            const auto m = static_cast<std::size_t>(n);
            lrn::squared_error_loss<float>({y.data(), m},
                                           std::span<const float>(t).subspan(
                                               static_cast<std::size_t>(first), m),
                                           {}, n, 1, rows, {dy.data(), m});
          });
    }
    CHECK(same_bytes(mlp.gradient(), g));
  }
}

TEST_CASE("Bradley-Terry gradient matches central differences (double)") {
  const std::vector<std::int64_t> hidden{7, 5};
  const auto shape = lrn::value_shape(3, hidden);
  lrn::EigenMlp<double> mlp(shape, as_double(lrn::initial_weights(shape, 11).parameters), {},
                            /*chunk_rows=*/16);  // 2 pairs per chunk: exercises accumulation
  const std::int64_t pairs = 5, H = 4;
  const auto batch = normal_values(static_cast<std::size_t>(pairs * 2 * H * 3), 12);
  const double worst =
      worst_relative_error(mlp, [&] { return mlp.bradley_terry_gradient(batch, pairs, H); });
  CHECK(worst < 1e-6);
}

TEST_CASE("weighted squared-error gradient through tanh matches central differences (double)") {
  const std::vector<std::int64_t> hidden{6, 6};
  const auto shape = lrn::policy_shape(4, hidden, 2);
  lrn::EigenMlp<double> mlp(shape, as_double(lrn::initial_weights(shape, 21).parameters), {},
                            /*chunk_rows=*/3);
  const std::int64_t rows = 7;
  const auto inputs = normal_values(static_cast<std::size_t>(rows * 4), 22);
  std::vector<double> targets = normal_values(static_cast<std::size_t>(rows * 2), 23);
  for (auto& t : targets) t = std::tanh(t);
  const std::vector<double> weights{0.5, 2.0, 0.0, 1.0, 3.0, 0.25, 1.5};
  SUBCASE("weighted") {
    CHECK(worst_relative_error(mlp, [&] {
            return mlp.squared_error_gradient(inputs, targets, weights, rows);
          }) < 1e-6);
  }
  SUBCASE("unweighted") {
    CHECK(worst_relative_error(
              mlp, [&] { return mlp.squared_error_gradient(inputs, targets, {}, rows); }) < 1e-6);
  }
}

TEST_CASE("float32 gradient agrees with the double gradient of the same parameters") {
  const std::vector<std::int64_t> hidden{32, 32};
  const auto shape = lrn::value_shape(6, hidden);
  const auto w = lrn::initial_weights(shape, 31);
  lrn::EigenMlp<float> f(shape, w.parameters);
  lrn::EigenMlp<double> d(shape, as_double(w.parameters));
  const std::int64_t pairs = 40, H = 10;
  const auto xd = normal_values(static_cast<std::size_t>(pairs * 2 * H * 6), 32);
  const std::vector<float> xf(xd.begin(), xd.end());
  std::vector<double> xd_rounded(xf.begin(), xf.end());
  const double lf = f.bradley_terry_gradient(xf, pairs, H);
  const double ld = d.bradley_terry_gradient(xd_rounded, pairs, H);
  CHECK(lf == doctest::Approx(ld).epsilon(1e-5));
  double scale = 0.0, worst = 0.0;
  for (std::size_t i = 0; i < d.gradient().size(); ++i) {
    scale = std::max(scale, std::abs(d.gradient()[i]));
    worst = std::max(worst, std::abs(static_cast<double>(f.gradient()[i]) - d.gradient()[i]));
  }
  // float32 sums of a few thousand terms: relative error well under 1e-4 of the largest entry
  CHECK(worst < 1e-4 * scale);
}

TEST_CASE("Adam: two steps by hand, bias-corrected as torch.optim.Adam") {
  const auto shape = lrn::value_shape(2, std::vector<std::int64_t>{3});
  const auto start = as_double(lrn::initial_weights(shape, 41).parameters);
  const lrn::AdamOptions adam{0.01, 0.9, 0.999, 1e-8};
  lrn::EigenMlp<double> mlp(shape, start, adam);
  const auto batch = normal_values(2 * 2 * 3 * 2, 42);  // 2 pairs, H = 3
  std::vector<double> p = start, m(p.size(), 0.0), v(p.size(), 0.0);
  for (int t = 1; t <= 2; ++t) {
    mlp.bradley_terry_gradient(batch, 2, 3);
    const auto g = mlp.gradient();
    for (std::size_t i = 0; i < p.size(); ++i) {
      m[i] = 0.9 * m[i] + 0.1 * g[i];
      v[i] = 0.999 * v[i] + 0.001 * g[i] * g[i];
      const double mhat = m[i] / (1 - std::pow(0.9, t));
      const double vhat = v[i] / (1 - std::pow(0.999, t));
      p[i] -= 0.01 * mhat / (std::sqrt(vhat) + 1e-8);
    }
    mlp.adam_step();
    for (std::size_t i = 0; i < p.size(); ++i)
      CHECK(mlp.parameters()[i] == doctest::Approx(p[i]).epsilon(1e-12));
  }
  CHECK(mlp.adam_steps() == 2);
}

TEST_CASE("a caller's loss of the outputs: gradient matches central differences (double)") {
  // A policy with a tanh output of 3 and chunks of 3 rows (7 rows: 3, 3, 1), so the callback
  // sees each chunk's rows at their offset and the gradient adds up over chunks. The loss is
  // nonlinear in the outputs, L = sum_rj c_rj sin(2 y_rj) + (y_rj - t_rj)^2 / 2.
  const std::vector<std::int64_t> hidden{6, 5};
  const auto shape = lrn::policy_shape(4, hidden, 3);
  lrn::EigenMlp<double> mlp(shape, as_double(lrn::initial_weights(shape, 51).parameters), {},
                            /*chunk_rows=*/3);
  const std::int64_t rows = 7;
  const auto inputs = normal_values(static_cast<std::size_t>(rows * 4), 52);
  const auto c = normal_values(static_cast<std::size_t>(rows * 3), 53);
  const auto t = normal_values(static_cast<std::size_t>(rows * 3), 54);
  std::vector<std::int64_t> seen;
  const auto loss = [&](std::span<const double> y, std::int64_t first, std::int64_t n,
                        std::span<double> d) {
    seen.push_back(first);
    seen.push_back(n);
    double sum = 0.0;
    for (std::size_t i = 0; i < static_cast<std::size_t>(n * 3); ++i) {
      const std::size_t k = static_cast<std::size_t>(first * 3) + i;
      sum += c[k] * std::sin(2 * y[i]) + 0.5 * (y[i] - t[k]) * (y[i] - t[k]);
      d[i] = 2 * c[k] * std::cos(2 * y[i]) + (y[i] - t[k]);
    }
    return sum;
  };
  CHECK(worst_relative_error(mlp, [&] { return mlp.output_loss_gradient(inputs, rows, loss); }) <
        1e-6);
  CHECK(std::vector<std::int64_t>(seen.begin(), seen.begin() + 6) ==
        std::vector<std::int64_t>{0, 3, 3, 3, 6, 1});
}

TEST_CASE("output_gradient from a given dL/dy matches central differences of sum c.y (double)") {
  const std::vector<std::int64_t> hidden{5, 5};
  const auto shape = lrn::policy_shape(3, hidden, 2);
  lrn::EigenMlp<double> mlp(shape, as_double(lrn::initial_weights(shape, 61).parameters), {},
                            /*chunk_rows=*/4);
  const std::int64_t rows = 9;
  const auto inputs = normal_values(static_cast<std::size_t>(rows * 3), 62);
  const auto c = normal_values(static_cast<std::size_t>(rows * 2), 63);
  std::vector<double> y(c.size());
  CHECK(worst_relative_error(mlp, [&] {
          mlp.output_gradient(inputs, c, rows);
          mlp.predict(inputs, rows, y);
          double sum = 0.0;
          for (std::size_t i = 0; i < y.size(); ++i) sum += c[i] * y[i];
          return sum;
        }) < 1e-6);
}

TEST_CASE("gradient norm and scaling; AdamState on a vector of its own steps as the network") {
  const auto shape = lrn::policy_shape(5, std::vector<std::int64_t>{16, 16}, 3);
  const auto w = lrn::initial_weights(shape, 71);
  lrn::EigenMlp<float> mlp(shape, w.parameters);
  const std::int64_t rows = 20;
  const auto xd = normal_values(static_cast<std::size_t>(rows * 5), 72);
  const auto dd = normal_values(static_cast<std::size_t>(rows * 3), 73);
  const std::vector<float> x(xd.begin(), xd.end()), d(dd.begin(), dd.end());
  mlp.output_gradient(x, d, rows);
  const std::vector<float> g(mlp.gradient().begin(), mlp.gradient().end());
  double sum = 0.0;
  for (const float v : g) sum += static_cast<double>(v) * v;
  CHECK(mlp.gradient_norm() == doctest::Approx(std::sqrt(sum)).epsilon(1e-15));
  mlp.scale_gradient(0.5f);
  for (std::size_t i = 0; i < g.size(); ++i) CHECK(mlp.gradient()[i] == 0.5f * g[i]);
  CHECK(mlp.gradient_norm() == doctest::Approx(0.5 * std::sqrt(sum)).epsilon(1e-15));

  // The same update applied by an AdamState to a copy of the parameters: the same bytes.
  const lrn::AdamOptions adam{1e-3, 0.9, 0.999, 1e-8};
  lrn::EigenMlp<float> net(shape, w.parameters, adam);
  lrn::AdamState<float> state(shape.parameter_count(), adam);
  std::vector<float> copy = w.parameters;
  for (int step = 0; step < 3; ++step) {
    net.output_gradient(x, d, rows);
    const std::vector<float> grad(net.gradient().begin(), net.gradient().end());
    net.adam_step();
    state.step(copy, grad);
    CHECK(std::memcmp(copy.data(), net.parameters().data(), copy.size() * sizeof(float)) == 0);
  }
  CHECK(state.steps() == 3);
  check_throws_naming([&] { state.step(std::span<float>(copy).first(3), copy); },
                      "parameters.size()");
  check_throws_naming([&] { lrn::AdamState<float>(-1, adam); }, "size");
}

TEST_CASE("Bradley-Terry loss: value, gradient, and no overflow far out") {
  // one pair, H = 2: x = (1 + 2) - (0.5 - 1) = 3.5
  const std::vector<double> v{1.0, 2.0, 0.5, -1.0};
  std::vector<double> d(4);
  const double loss = lrn::bradley_terry_loss<double>(v, 1, 2, 1, d);
  CHECK(loss == doctest::Approx(std::log1p(std::exp(-3.5))).epsilon(1e-15));
  const double g = 1.0 / (1.0 + std::exp(3.5));  // logistic(-x)
  CHECK(d[0] == doctest::Approx(-g).epsilon(1e-15));
  CHECK(d[1] == doctest::Approx(-g).epsilon(1e-15));
  CHECK(d[2] == doctest::Approx(g).epsilon(1e-15));
  CHECK(d[3] == doctest::Approx(g).epsilon(1e-15));
  CHECK(lrn::bradley_terry_accuracy<double>(v, 1, 2) == 1.0);

  // x = +-1000: the loss is exp(-1000) (underflows to 0, never NaN) or 1000, gradient 0 or -1
  const std::vector<double> far{1000.0, 0.0}, wrong{0.0, 1000.0};
  std::vector<double> d2(2);
  CHECK(lrn::bradley_terry_loss<double>(far, 1, 1, 1, d2) == 0.0);
  CHECK(d2[0] == 0.0);
  CHECK(lrn::bradley_terry_loss<double>(wrong, 1, 1, 1, d2) ==
        doctest::Approx(1000.0).epsilon(1e-15));
  CHECK(d2[0] == -1.0);
  CHECK(d2[1] == 1.0);
  // x = 40: log1p(exp(-40)) = 4.248e-18 to full relative accuracy (1 - logistic would give 0)
  const std::vector<double> mid{40.0, 0.0};
  CHECK(lrn::bradley_terry_loss<double>(mid, 1, 1, 1, d2) ==
        doctest::Approx(4.248354255291589e-18).epsilon(1e-14));
  CHECK(lrn::log1p_exp(-800.0) == 0.0);
  CHECK(std::isfinite(lrn::logistic(-800.0)));
}

TEST_CASE("EigenMlp: argument checks") {
  const auto shape = lrn::value_shape(2, std::vector<std::int64_t>{3});
  const auto w = lrn::initial_weights(shape, 1);
  check_throws_naming(
      [&] { lrn::EigenMlp<float>(shape, std::span<const float>(w.parameters).first(5)); },
      "parameters.size()");
  lrn::EigenMlp<float> mlp(shape, w.parameters);
  const std::vector<float> x(2 * 3 * 2, 0.5f);
  check_throws_naming([&] { mlp.bradley_terry_gradient(x, 2, 2); }, "batch.size()");
  check_throws_naming([&] { mlp.bradley_terry_gradient(x, 0, 3); }, "pairs");
  std::vector<float> out(5);
  check_throws_naming([&] { mlp.predict(x, 6, out); }, "outputs.size()");
  check_throws_naming([&] { lrn::EigenMlp<float>(shape, w.parameters, {-1.0}); },
                      "adam.learning_rate");
  check_throws_naming([&] { mlp.output_gradient(x, std::vector<float>(5), 6); },
                      "d_outputs.size()");
  check_throws_naming([&] { mlp.output_loss_gradient(x, 0, {}); }, "rows");
  check_throws_naming([&] { lrn::value_shape(2, std::vector<std::int64_t>{0}); }, "hidden[0]");
}
