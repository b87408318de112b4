// Training the attention regressor of chapter 03 (seed 000 §5): one Adam iteration (loss,
// hand-derived gradient, update) for both normalisations at the source's three sizes, next
// to the Eigen matrix product that bounds the softmax system's cost.
//
// Reported: "s/iter" (time per Adam iteration) and, for softmax, GFLOP/s counting the two
// n x n products, S^T = X (X M)^T and (dL/dS) X: 4 n^2 d flops per iteration. The GEMM
// rows do one product of the same shape, 2 n^2 d flops.
//
// A PyTorch formulation takes about 0.5 / 0.6 ms per iteration at (100, 10) identity /
// softmax, 9 / 24 ms at (1000, 10) and 61 / 79 ms at (1000, 100). The whole experiment is
// timed by the chapter program itself (the time_* keys of its results.json, `./book run 03`).
#include <benchmark/benchmark.h>

#include "attn/attention_regression.hpp"
#include "attn/random.hpp"

namespace {

using attn::Normalisation;

constexpr int steps = 20;  // Adam iterations per timed call of train()

void BM_adam_iteration(benchmark::State& state, Normalisation h) {
  const Eigen::Index n = state.range(0), d = state.range(1);
  attn::Rng rng(1);
  const attn::RegressionData data = attn::regression_data(n, d, rng);
  attn::AttentionRegressor p = attn::random_regressor(d, rng);
  p.w_v = attn::initial_value_weight(p, data.X, data.Y, h);
  const attn::Adam adam = attn::experiment_adam;
  for (auto _ : state) {
    // `steps` updates and steps + 1 loss evaluations: the extra one is the final loss,
    // which has no backward pass, so it adds well under 1/steps to the time per step.
    attn::TrainingResult r = attn::train(data.X, data.Y, h, p, steps, adam);
    benchmark::DoNotOptimize(r.loss.data());
  }
  const double iterations = static_cast<double>(state.iterations()) * steps;
  state.counters["s/iter"] = benchmark::Counter(
      iterations, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  if (h == Normalisation::softmax)
    state.counters["GFLOP/s"] =
        benchmark::Counter(4.0 * static_cast<double>(n * n * d) * iterations / 1e9,
                           benchmark::Counter::kIsRate);
}

void BM_identity(benchmark::State& state) {
  BM_adam_iteration(state, Normalisation::identity);
}
void BM_softmax(benchmark::State& state) {
  BM_adam_iteration(state, Normalisation::softmax);
}

// One n x d by d x n product, the shape of the score matrix: the GEMM baseline.
void BM_scores_gemm(benchmark::State& state) {
  const Eigen::Index n = state.range(0), d = state.range(1);
  attn::Rng rng(2);
  const Eigen::MatrixXd X = attn::random_normal(n, d, rng),
                        Q = attn::random_normal(n, d, rng);
  Eigen::MatrixXd T(n, n);
  for (auto _ : state) {
    T.noalias() = X * Q.transpose();
    benchmark::DoNotOptimize(T.data());
  }
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * static_cast<double>(n * n * d) *
                             static_cast<double>(state.iterations()) / 1e9,
                         benchmark::Counter::kIsRate);
}

void sizes(benchmark::internal::Benchmark* b) {
  b->Args({100, 10})->Args({1000, 10})->Args({1000, 100})->Unit(benchmark::kMillisecond);
}
BENCHMARK(BM_identity)->Apply(sizes);
BENCHMARK(BM_softmax)->Apply(sizes);
BENCHMARK(BM_scores_gemm)->Apply(sizes);

}  // namespace

BENCHMARK_MAIN();
