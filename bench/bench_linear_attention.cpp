// Chapter 05: softmax attention, O(N^2 d), against linear attention with r positive
// random features, O(N r d), over sequence lengths N. Google Benchmark fits the
// complexity of each (BigO and RMS lines of its report): N^2 for softmax, N for linear
// attention. Memory at the largest N = 2^20: Q, K, V and the output, 128 MiB each.
#include <benchmark/benchmark.h>

#include <cmath>

#include "attn/attention.hpp"
#include "attn/feature_maps.hpp"
#include "attn/linear_attention.hpp"
#include "attn/random.hpp"
#include "attn/tiled_attention.hpp"
#include "harness/timing.hpp"

namespace {

constexpr Eigen::Index d = 16, r = 64;  // the chapter program's defaults

// Softmax attention in its fast form, attention_row_blocks(): no N x N matrix, so N can
// grow as far as the time allows.
void BM_softmax_attention(benchmark::State& state) {
  const Eigen::Index n = state.range(0);
  attn::Rng rng(1);
  const Eigen::MatrixXd Q = attn::random_normal(n, d, rng),
                        K = attn::random_normal(n, d, rng),
                        V = attn::random_normal(n, d, rng);
  for (auto _ : state)
    // One thread, as the linear form runs: CPU time would not see the library's threads.
    benchmark::DoNotOptimize(
        attn::attention_row_blocks(Q, K, V, attn::Masking::none, 1).data());
  state.SetComplexityN(n);
}

// Linear attention as the chapter times it: positive random features streamed in blocks of
// 256 rows, never stored (Q, K, V and the output are the only N-sized matrices).
void BM_linear_attention(benchmark::State& state) {
  const Eigen::Index n = state.range(0);
  attn::Rng rng(2);
  const double s = std::pow(double(d), -0.25);  // the 1/sqrt(d) scale, split over q and k
  const Eigen::MatrixXd Q = s * attn::random_normal(n, d, rng),
                        K = s * attn::random_normal(n, d, rng),
                        V = attn::random_normal(n, d, rng);
  const Eigen::MatrixXd W = attn::gaussian_directions(r, d, rng);
  // One call before timing: the output's memory is then already the process's (see main).
  benchmark::DoNotOptimize(
      attn::streamed_positive_feature_attention(Q, K, V, W, 256).data());
  for (auto _ : state)
    benchmark::DoNotOptimize(
        attn::streamed_positive_feature_attention(Q, K, V, W, 256).data());
  state.SetComplexityN(n);
}

// The same product with both N x r feature matrices stored first (the textbook order of
// operations). At N = 2^20 the two feature matrices take 1 GiB.
void BM_linear_attention_stored_features(benchmark::State& state) {
  const Eigen::Index n = state.range(0);
  attn::Rng rng(2);
  const double s = std::pow(double(d), -0.25);
  const Eigen::MatrixXd Q = s * attn::random_normal(n, d, rng),
                        K = s * attn::random_normal(n, d, rng),
                        V = attn::random_normal(n, d, rng);
  const Eigen::MatrixXd W = attn::gaussian_directions(r, d, rng);
  for (auto _ : state)
    benchmark::DoNotOptimize(
        attn::linear_attention(
            attn::positive_random_features(Q, W, attn::Stabiliser::per_row),
            attn::positive_random_features(K, W, attn::Stabiliser::global), V)
            .data());
  state.SetComplexityN(n);
}

BENCHMARK(BM_softmax_attention)
    ->RangeMultiplier(2)
    ->Range(1 << 6, 1 << 12)
    ->Unit(benchmark::kMillisecond)
    ->Complexity(benchmark::oNSquared);
BENCHMARK(BM_linear_attention)
    ->RangeMultiplier(2)
    ->Range(1 << 6, 1 << 20)
    ->Unit(benchmark::kMillisecond)
    ->Complexity(benchmark::oN);
BENCHMARK(BM_linear_attention_stored_features)
    ->RangeMultiplier(2)
    ->Range(1 << 12, 1 << 18)
    ->Unit(benchmark::kMillisecond)
    ->Complexity(benchmark::oN);

}  // namespace

int main(int argc, char** argv) {
  harness::keep_freed_memory();  // time the arithmetic, not page faults
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
