// The ceiling: the core's peak rate of double-precision fused multiply-adds, measured with
// nothing but FMAs in registers, so every kernel can be reported as a share of it (kernel
// GFLOP/s / peak GFLOP/s on the same thread count). Unlike the GEMM line, which depends on
// caches, memory and Eigen's blocking, this number depends only on the core and its clock.
//
// Each step updates `chains` independent accumulators, acc = acc * a + b, on the widest
// vector the build targets (AVX-512: 8 doubles, AVX2 + FMA: 4, otherwise a scalar
// std::fma). One chain waits for its previous FMA (latency ~4 cycles), so enough chains must
// be in flight to keep every FMA unit busy: chains >= latency x units. BM_fma_chains sweeps
// the number of chains; BM_fma_peak and BM_fma_peak_cores use the best one of that sweep.
//
// On this book's machine (AMD EPYC, Zen 5, AVX-512): 4 chains give half the peak (one FMA
// per cycle: 4-cycle latency), 8 give 96%, 12 and 16 the peak, ~142 GFLOP/s per core =
// 2 FMA units x 8 lanes x 2 flops x 4.4 GHz: the core runs at its boost clock, not at the
// 2.6 GHz nominal clock the CPU reports. Two threads: ~283 GFLOP/s when the machine is idle.
//
// Flops: 2 per FMA per lane (a multiply and an add), counter GFLOP/s (a rate).
// Counters vector_bits and fma_chains say what ran (averaged over threads, not summed).
// With a = 1 - 2^-20 and b = 2^-20 each accumulator converges to 1: no overflow, no
// subnormals, which would slow some cores down.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstring>

#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
#include <immintrin.h>
#endif

namespace {

#if defined(__AVX512F__)
using Vec = __m512d;
constexpr int lanes = 8;
inline Vec splat(double v) { return _mm512_set1_pd(v); }
inline Vec fmadd(Vec x, Vec a, Vec b) { return _mm512_fmadd_pd(x, a, b); }
#elif defined(__AVX2__) && defined(__FMA__)
using Vec = __m256d;
constexpr int lanes = 4;
inline Vec splat(double v) { return _mm256_set1_pd(v); }
inline Vec fmadd(Vec x, Vec a, Vec b) { return _mm256_fmadd_pd(x, a, b); }
#else
// Portable fallback: one lane. std::fma where it is one instruction (FP_FAST_FMA); elsewhere
// it is a slow library call, and a multiply and an add are what the core can do instead.
using Vec = double;
constexpr int lanes = 1;
inline Vec splat(double v) { return v; }
#if defined(FP_FAST_FMA)
inline Vec fmadd(Vec x, Vec a, Vec b) { return std::fma(x, a, b); }
#else
inline Vec fmadd(Vec x, Vec a, Vec b) { return x * a + b; }
#endif
#endif

// The sum of a vector's lanes. Through memory, not _mm512_reduce_add_pd, whose GCC 12
// header trips -Wmaybe-uninitialized; it runs once per 1024 steps, so its speed is moot.
double lane_sum(Vec v) {
  double lane[lanes];
  std::memcpy(lane, &v, sizeof v);
  double sum = 0;
  for (double x : lane) sum += x;
  return sum;
}

constexpr int steps = 1024;  // per benchmark iteration: the loop overhead is amortised

// Chains is a template parameter so the accumulators are a fixed-size array the compiler
// keeps in registers (AVX-512 has 32, enough for 16 chains plus a and b).
template <int chains>
void fma_loop(benchmark::State& state) {
  double a0 = 1.0 - 0x1p-20, b0 = 0x1p-20;
  benchmark::DoNotOptimize(a0);  // opaque to the compiler: nothing can be folded
  benchmark::DoNotOptimize(b0);
  const Vec a = splat(a0), b = splat(b0);
  Vec acc[chains];
  for (int c = 0; c < chains; ++c) acc[c] = splat(0.5 + c * 0x1p-10);
  for (auto _ : state) {
    for (int s = 0; s < steps; ++s)
      for (int c = 0; c < chains; ++c) acc[c] = fmadd(acc[c], a, b);
    // Every FMA feeds this sum, which the compiler must produce: none can be removed.
    double sum = 0;
    for (int c = 0; c < chains; ++c) sum += lane_sum(acc[c]);
    benchmark::DoNotOptimize(sum);
  }
  const double flops = 2.0 * lanes * chains * steps * static_cast<double>(state.iterations());
  state.counters["GFLOP/s"] = benchmark::Counter(flops / 1e9, benchmark::Counter::kIsRate);
  state.counters["vector_bits"] = benchmark::Counter(64.0 * lanes, benchmark::Counter::kAvgThreads);
  state.counters["fma_chains"] = benchmark::Counter(chains, benchmark::Counter::kAvgThreads);
}

void BM_fma_chains(benchmark::State& state) {
  switch (state.range(0)) {
    case 4: fma_loop<4>(state); break;
    case 8: fma_loop<8>(state); break;
    case 12: fma_loop<12>(state); break;
    case 16: fma_loop<16>(state); break;
    default: state.SkipWithError("chains must be 4, 8, 12 or 16");
  }
}
BENCHMARK(BM_fma_chains)->ArgName("chains")->Arg(4)->Arg(8)->Arg(12)->Arg(16);

// The peak: the best chain count of the sweep above on this machine (AMD EPYC, Zen 5).
constexpr int peak_chains = 12;

// One thread, CPU time: compare with the one-thread kernels (BM_forward, BM_gemm, ...).
void BM_fma_peak(benchmark::State& state) { fma_loop<peak_chains>(state); }
BENCHMARK(BM_fma_peak);

// One and two threads, wall time, flops summed over the threads: the peak of the whole
// machine, to compare with the *_cores benchmarks (Threads(1)->Threads(2)->UseRealTime()).
// Wall time halves the two-thread figure whenever another process holds a core; CPU time
// cannot help (Google Benchmark divides the summed flops by the summed CPU time of the
// threads, a per-thread rate), so the two-thread ceiling is this run's or, on a busy
// machine, twice BM_fma_peak (measured 2.0x on an idle machine: the cores share no FMA unit).
BENCHMARK(BM_fma_peak)->Name("BM_fma_peak_cores")->Threads(1)->Threads(2)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
