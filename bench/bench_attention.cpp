// Softmax attention forward at several sequence lengths, next to the matrix product it is
// built on. Reported: time per call and GFLOP/s counting the two products Q K^T and A V
// (4 N^2 d flops).
#include <benchmark/benchmark.h>

#include "attn/attention.hpp"
#include "attn/random.hpp"
#include "attn/softmax.hpp"

namespace {

constexpr Eigen::Index d = 64;

void set_flops(benchmark::State& state, double flops_per_call) {
  state.counters["GFLOP/s"] =
      benchmark::Counter(flops_per_call * static_cast<double>(state.iterations()) / 1e9,
                         benchmark::Counter::kIsRate);
}

void BM_logits_gemm(benchmark::State& state) {  // Q K^T alone: the GEMM baseline
  const Eigen::Index n = state.range(0);
  attn::Rng rng(1);
  const Eigen::MatrixXd Q = attn::random_normal(n, d, rng),
                        K = attn::random_normal(n, d, rng);
  Eigen::MatrixXd S(n, n);
  for (auto _ : state) {
    S.noalias() = Q * K.transpose();
    benchmark::DoNotOptimize(S.data());
  }
  set_flops(state, 2.0 * n * n * d);
}

void BM_softmax_rows(benchmark::State& state) {
  const Eigen::Index n = state.range(0);
  attn::Rng rng(2);
  const Eigen::MatrixXd Z = attn::random_normal(n, n, rng);
  for (auto _ : state) benchmark::DoNotOptimize(attn::softmax_rows(Z).data());
  state.counters["exp/s"] = benchmark::Counter(
      static_cast<double>(n * n) * static_cast<double>(state.iterations()),
      benchmark::Counter::kIsRate);
}

void BM_attention_forward(benchmark::State& state) {
  const Eigen::Index n = state.range(0);
  attn::Rng rng(3);
  const Eigen::MatrixXd Q = attn::random_normal(n, d, rng),
                        K = attn::random_normal(n, d, rng),
                        V = attn::random_normal(n, d, rng);
  for (auto _ : state)
    benchmark::DoNotOptimize(attn::attention(Q, K, V, Eigen::MatrixXd()).data());
  set_flops(state, 4.0 * n * n * d);
}

BENCHMARK(BM_logits_gemm)
    ->RangeMultiplier(4)
    ->Range(256, 4096)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_softmax_rows)
    ->RangeMultiplier(4)
    ->Range(256, 4096)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_attention_forward)
    ->RangeMultiplier(4)
    ->Range(256, 4096)
    ->Unit(benchmark::kMillisecond);

// Multi-head self-attention at n = 1024, d = 256 for 1..32 heads (chapter 01, exercise 5):
// the matrix products cost the same for every head count, the softmax work grows with it.
void BM_multi_head(benchmark::State& state) {
  const Eigen::Index n = 1024, width = 256;
  attn::Rng rng(4);
  attn::MultiHeadParams p{state.range(0), attn::random_normal(width, width, rng),
                          attn::random_normal(width, width, rng),
                          attn::random_normal(width, width, rng),
                          attn::random_normal(width, width, rng)};
  const Eigen::MatrixXd X = attn::random_normal(n, width, rng, 1.0 / 16);
  for (auto _ : state) benchmark::DoNotOptimize(attn::multi_head_attention(X, p).data());
  // 4 projections (8 n d^2) + scores and weighted values (4 n^2 d), whatever the head count.
  set_flops(state, 8.0 * n * width * width + 4.0 * n * n * width);
}
BENCHMARK(BM_multi_head)->Arg(1)->Arg(8)->Arg(32)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
