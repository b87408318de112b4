// Training the attention regressor of chapter 03 (seed 000 §5): one Adam iteration (loss,
// hand-derived gradient, update) for both normalisations at the source's three sizes, next
// to the Eigen matrix product that bounds the softmax system's cost.
//
// Reported: "s/iter" (time per Adam iteration) and, for softmax, GFLOP/s counting the two
// n x n products, S^T = X (X M)^T and (dL/dS) X: 4 n^2 d flops per iteration. The GEMM
// rows do one product of the same shape, 2 n^2 d flops.
//
// BM_identity and BM_softmax run on one thread (CPU time). BM_identity_threads and
// BM_softmax_threads run the same iteration with train()'s `threads` argument at 1 and 2,
// in wall time: the softmax system's blocks of queries are shared by the library's own
// threads, which the benchmark thread's CPU time does not see. The identity system is
// O(nd + d^2) and always runs on one thread; its 2-thread row shows that nothing is lost.
// The softmax system at (100, 10) is below evaluation_threads()'s threshold (one thread).
//
// PyTorch's formulation of the same iteration is measured by bench/peers/training.py, in
// the same `./book bench` run. The whole experiment is timed by the chapter program itself
// (the time_* keys of its results.json, `./book run 03`).
#include <benchmark/benchmark.h>

#include <utility>

#include "attn/attention_regression.hpp"
#include "attn/random.hpp"

namespace {

using attn::Normalisation;

constexpr int steps = 20;  // Adam iterations per timed call of train()

void BM_adam_iteration(benchmark::State& state, Normalisation h, int threads = 1) {
  const Eigen::Index n = state.range(0), d = state.range(1);
  attn::Rng rng(1);
  const attn::RegressionData data = attn::regression_data(n, d, rng);
  attn::AttentionRegressor p = attn::random_regressor(d, rng);
  p.w_v = attn::initial_value_weight(p, data.X, data.Y, h);
  const attn::Adam adam = attn::experiment_adam;
  for (auto _ : state) {
    // `steps` updates and steps + 1 loss evaluations: the extra one is the final loss,
    // which has no backward pass, so it adds well under 1/steps to the time per step.
    attn::TrainingResult r = attn::train(data.X, data.Y, h, p, steps, adam, threads);
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

// The same iteration with train()'s threads argument (the third argument), wall time.
void BM_identity_threads(benchmark::State& state) {
  BM_adam_iteration(state, Normalisation::identity, static_cast<int>(state.range(2)));
}
void BM_softmax_threads(benchmark::State& state) {
  BM_adam_iteration(state, Normalisation::softmax, static_cast<int>(state.range(2)));
}

void thread_counts(benchmark::internal::Benchmark* b) {
  for (const auto& [n, d] : {std::pair{100, 10}, {1000, 10}, {1000, 100}})
    for (const int threads : {1, 2}) b->Args({n, d, threads});
  b->ArgNames({"n", "d", "threads"})->Unit(benchmark::kMillisecond)->UseRealTime();
}
BENCHMARK(BM_identity_threads)->Apply(thread_counts);
BENCHMARK(BM_softmax_threads)->Apply(thread_counts);

}  // namespace

BENCHMARK_MAIN();
