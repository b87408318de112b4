// Softmax attention, forward and backward, next to Eigen's matrix product on the same
// shapes, in the same run: N = 256 ... 8192 tokens, d = 64 and 128 (d_k = d_v = d).
//
// Flops are counted honestly and only for the matrix products:
//   gemm       S = Q K^T, then S V: the two products attention is built on   4 N^2 d
//   reference  attention(Q, K, V): the reference form, A formed whole        4 N^2 d
//   forward    attention_row_blocks(): the same products, blocked by rows    4 N^2 d
//   tiled      tiled_attention(): the same two products, tile by tile         4 N^2 d
// (BM_forward and BM_tiled on one thread; BM_forward_threads and BM_tiled_threads on 1 and
// 2 threads, the library splitting the blocks of queries, with and without the causal mask,
// counting only the useful flops: see below.)
//   backward   attention_backward(): scores recomputed, dV, dA, dQ, dK       10 N^2 d
// (BM_forward keeps its name, which the performance page and book.performance use.)
// The N^2 exponentials (forward; the backward recomputes them) are extra work that the
// GFLOP/s do not credit; the counter Gexp/s reports them separately.
//
// Google Benchmark counters: GFLOP/s and Gexp/s are rates (kIsRate). `./book bench` runs
// every benchmark three times and keeps the aggregates; book.performance draws the medians.
// The run also records the machine (CPU model, caches, compiler, flags, Eigen version and
// its thread count) in the JSON context.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <thread>

#include "attn/attention.hpp"
#include "attn/parallel.hpp"
#include "attn/random.hpp"
#include "attn/softmax.hpp"
#include "attn/tiled_attention.hpp"

namespace {

using Eigen::Index;
using Eigen::MatrixXd;

void set_rates(benchmark::State& state, double flops_per_call, double exps_per_call) {
  const double calls = static_cast<double>(state.iterations());
  if (flops_per_call > 0)
    state.counters["GFLOP/s"] =
        benchmark::Counter(flops_per_call * calls / 1e9, benchmark::Counter::kIsRate);
  if (exps_per_call > 0)
    state.counters["Gexp/s"] =
        benchmark::Counter(exps_per_call * calls / 1e9, benchmark::Counter::kIsRate);
}

struct Inputs {
  MatrixXd Q, K, V;
  Inputs(Index n, Index d, std::uint64_t seed) {
    attn::Rng rng(seed);
    Q = attn::random_normal(n, d, rng);
    K = attn::random_normal(n, d, rng);
    V = attn::random_normal(n, d, rng);
  }
};

// The GEMM baseline: the two products of attention at full size, with nothing between.
void BM_gemm(benchmark::State& state) {
  const Index n = state.range(0), d = state.range(1);
  const Inputs x(n, d, 1);
  // Touched before timing, so that page faults on first use stay out of the times.
  MatrixXd S = MatrixXd::Zero(n, n), O = MatrixXd::Zero(n, d);
  for (auto _ : state) {
    S.noalias() = x.Q * x.K.transpose();
    O.noalias() = S * x.V;
    benchmark::DoNotOptimize(O.data());
  }
  set_rates(state, 4.0 * n * n * d, 0);
}

// The reference form: softmax_rows(Q K^T / sqrt(d)) V with the N x N matrix stored, and
// std::exp for the exponentials.
void BM_reference(benchmark::State& state) {
  const Index n = state.range(0), d = state.range(1);
  const Inputs x(n, d, 2);
  const MatrixXd no_mask;
  for (auto _ : state) benchmark::DoNotOptimize(attn::attention(x.Q, x.K, x.V, no_mask));
  set_rates(state, 4.0 * n * n * d, double(n) * n);
}

// The fast form in row blocks, with the vectorised exponential (fast_exp.hpp), on one thread
// (the library's default is every core): CPU time measures it.
void BM_forward(benchmark::State& state) {
  const Index n = state.range(0), d = state.range(1);
  const Inputs x(n, d, 2);
  for (auto _ : state)
    benchmark::DoNotOptimize(
        attn::attention_row_blocks(x.Q, x.K, x.V, attn::Masking::none, 1));
  set_rates(state, 4.0 * n * n * d, double(n) * n);
}

void BM_tiled(benchmark::State& state) {
  const Index n = state.range(0), d = state.range(1);
  const Inputs x(n, d, 3);
  for (auto _ : state)
    benchmark::DoNotOptimize(
        attn::tiled_attention(x.Q, x.K, x.V, attn::Masking::none, {}, 1));
  set_rates(state, 4.0 * n * n * d, double(n) * n);
}

void BM_backward(benchmark::State& state) {
  const Index n = state.range(0), d = state.range(1);
  const Inputs x(n, d, 4);
  attn::Rng rng(5);
  const MatrixXd dO = attn::random_normal(n, d, rng);
  for (auto _ : state)
    benchmark::DoNotOptimize(
        attn::attention_backward(x.Q, x.K, x.V, dO, attn::Masking::none, 1).dQ.data());
  set_rates(state, 10.0 * n * n * d, double(n) * n);
}

void shapes(benchmark::internal::Benchmark* b) {
  for (const Index d : {64, 128})
    for (Index n = 256; n <= 8192; n *= 2) b->Args({n, d});
  // CPU time, not wall time: on a shared machine the wall time also counts the time other
  // processes hold the core; both are the same on an idle one (Eigen runs on one thread).
  b->ArgNames({"N", "d"})->Unit(benchmark::kMillisecond);
}
BENCHMARK(BM_gemm)->Apply(shapes);
BENCHMARK(BM_reference)->Apply(shapes);
BENCHMARK(BM_forward)->Apply(shapes);
BENCHMARK(BM_tiled)->Apply(shapes);
BENCHMARK(BM_backward)->Apply(shapes);

// Two cores: the same work on one thread, and two independent copies of it at once (two
// heads, or two sequences of a batch). With Threads(2) Google Benchmark sums the counters of
// both threads, so GFLOP/s is the throughput of the whole machine. Eigen here
// is built without OpenMP, so one product never uses both cores by itself.
void two_cores(benchmark::internal::Benchmark* b) {
  b->Args({2048, 64})->ArgNames({"N", "d"})->Unit(benchmark::kMillisecond);
  b->Threads(1)->Threads(2)->UseRealTime();
}
BENCHMARK(BM_gemm)->Apply(two_cores)->Name("BM_gemm_cores");
BENCHMARK(BM_forward)->Apply(two_cores)->Name("BM_forward_cores");

// One call on 1 or 2 threads, with and without the causal mask, on the shapes of PyTorch's
// scaled_dot_product_attention in bench/peers/sdpa.py: the library splits the blocks of
// queries of one attention between the cores (the `threads` argument), bit-identical to one
// thread. The threads are the library's own, which CPU time (the benchmark thread's) does not
// see: wall time, so GFLOP/s is the rate of the whole call, as the peer's is. Flops are the
// useful ones, the same count as the peer's: 4 N^2 d without a mask, and with it only the
// N (N + 1) / 2 scores a query may see, 2 N (N + 1) d, whatever a form computes besides.
double useful_flops(Index n, Index d, attn::Masking masking) {
  return masking == attn::Masking::causal ? 2.0 * n * (n + 1) * d : 4.0 * n * n * d;
}

double useful_scores(Index n, attn::Masking masking) {
  return masking == attn::Masking::causal ? 0.5 * n * (n + 1) : double(n) * n;
}

void BM_forward_threads(benchmark::State& state) {
  const Index n = state.range(0), d = state.range(1);
  const auto masking = state.range(2) ? attn::Masking::causal : attn::Masking::none;
  const int threads = static_cast<int>(state.range(3));
  const Inputs x(n, d, 2);
  for (auto _ : state)
    benchmark::DoNotOptimize(attn::attention_row_blocks(x.Q, x.K, x.V, masking, threads));
  set_rates(state, useful_flops(n, d, masking), useful_scores(n, masking));
}

void BM_tiled_threads(benchmark::State& state) {
  const Index n = state.range(0), d = state.range(1);
  const auto masking = state.range(2) ? attn::Masking::causal : attn::Masking::none;
  const int threads = static_cast<int>(state.range(3));
  const Inputs x(n, d, 3);
  for (auto _ : state)
    benchmark::DoNotOptimize(attn::tiled_attention(x.Q, x.K, x.V, masking, {}, threads));
  set_rates(state, useful_flops(n, d, masking), useful_scores(n, masking));
}

void thread_counts(benchmark::internal::Benchmark* b) {
  for (const Index causal : {0, 1})
    for (const Index d : {64, 128})
      for (Index n = 256; n <= 8192; n *= 2)
        for (const Index threads : {1, 2}) b->Args({n, d, causal, threads});
  // 96 shapes per form: 0.2 s per repetition (not Google Benchmark's 0.5 s) keeps ./book bench
  // within about ten minutes; a call at N = 8192 takes longer than that by itself.
  b->ArgNames({"N", "d", "causal", "threads"})->Unit(benchmark::kMillisecond)->UseRealTime();
  b->MinTime(0.2);
}
BENCHMARK(BM_forward_threads)->Apply(thread_counts);
BENCHMARK(BM_tiled_threads)->Apply(thread_counts);

// What a threaded call pays before any work: attn::parallel_for() starts its helper threads
// anew on every call (no pool waits between calls, as OpenMP's threads do for PyTorch) and
// joins them at the end. Two indices of nothing on two threads: one helper started and joined.
void BM_parallel_for_start(benchmark::State& state) {
  for (auto _ : state) attn::parallel_for(2, 2, [](Eigen::Index, int) {});
}
BENCHMARK(BM_parallel_for_start)->Unit(benchmark::kMicrosecond)->UseRealTime();

void BM_softmax_rows(benchmark::State& state) {
  const Index n = state.range(0);
  attn::Rng rng(2);
  const MatrixXd Z = attn::random_normal(n, n, rng);
  for (auto _ : state) benchmark::DoNotOptimize(attn::softmax_rows(Z).data());
  set_rates(state, 0, double(n) * n);
}
BENCHMARK(BM_softmax_rows)
    ->RangeMultiplier(4)
    ->Range(256, 4096)
    ->Unit(benchmark::kMillisecond);

// Multi-head self-attention at n = 1024, d = 256 for 1..32 heads (chapter 01, exercise 5):
// the matrix products cost the same for every head count, the softmax work grows with it.
void BM_multi_head(benchmark::State& state) {
  const Index n = 1024, width = 256;
  attn::Rng rng(4);
  attn::MultiHeadParams p{state.range(0), attn::random_normal(width, width, rng),
                          attn::random_normal(width, width, rng),
                          attn::random_normal(width, width, rng),
                          attn::random_normal(width, width, rng)};
  const MatrixXd X = attn::random_normal(n, width, rng, 1.0 / 16);
  for (auto _ : state) benchmark::DoNotOptimize(attn::multi_head_attention(X, p).data());
  // 4 projections (8 n d^2) + scores and weighted values (4 n^2 d), whatever the head count.
  set_rates(state, 8.0 * n * width * width + 4.0 * n * n * width, 0);
}
BENCHMARK(BM_multi_head)->Arg(1)->Arg(8)->Arg(32)->Unit(benchmark::kMillisecond);

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown";
}

std::string cache_kib(int name) {
  const long bytes = sysconf(name);
  return bytes > 0 ? std::to_string(bytes / 1024) + " KiB" : "unknown";
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::AddCustomContext("cpu_model", cpu_model());
  benchmark::AddCustomContext("cores",
                              std::to_string(std::thread::hardware_concurrency()));
  benchmark::AddCustomContext("l1d_cache", cache_kib(_SC_LEVEL1_DCACHE_SIZE));
  benchmark::AddCustomContext("l2_cache", cache_kib(_SC_LEVEL2_CACHE_SIZE));
  benchmark::AddCustomContext("l3_cache", cache_kib(_SC_LEVEL3_CACHE_SIZE));
  benchmark::AddCustomContext("compiler", "g++ " __VERSION__);
  benchmark::AddCustomContext("compiler_flags", ATTN_BENCH_FLAGS);
  benchmark::AddCustomContext("eigen_version", std::to_string(EIGEN_WORLD_VERSION) + "." +
                                                   std::to_string(EIGEN_MAJOR_VERSION) +
                                                   "." +
                                                   std::to_string(EIGEN_MINOR_VERSION));
  benchmark::AddCustomContext("eigen_threads", std::to_string(Eigen::nbThreads()));
#if defined(_OPENMP)
  benchmark::AddCustomContext("openmp", "yes");
#else
  benchmark::AddCustomContext("openmp", "no");
#endif
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
