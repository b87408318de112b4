// Peak memory of softmax attention at d = 64, measured, not estimated: each measurement
// runs in a child process (fork), which reports its own peak resident set size
// (getrusage ru_maxrss), so that one measurement's memory cannot hide another's.
//
//   reference   attention(Q, K, V), the reference form: forms the N x N weight matrix
//               (N^2 * 8 bytes, and the scores before it)
//   row_blocks  attention_row_blocks(Q, K, V): the same numbers a block of queries at a time
//   tiled       tiled_attention(Q, K, V): online softmax, one 256 x 64 tile of scores
//   baseline   a child that allocates nothing: the program's own pages
//
// Counters (not rates): peak_RSS_MiB, the child's peak; inputs_MiB, Q, K, V and the output
// (4 N d doubles), the least any form must hold. One run per size (the peak does not vary
// with the machine's load). The tiled form goes to N = 65,536, the longest point of the run
// (docs/performance.md, "Memory"); attention_row_blocks() to 16,384, enough to show that it
// grows like N too.
#include <benchmark/benchmark.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <stdexcept>

#include "attn/attention.hpp"
#include "attn/random.hpp"
#include "attn/tiled_attention.hpp"

namespace {

using Eigen::Index;
using Eigen::MatrixXd;

constexpr Index d = 64;

enum class Form { baseline, reference, row_blocks, tiled };

double peak_rss_mib_of_child(Form form, Index n) {
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("pipe failed");
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {  // the child: compute, report the peak, exit without cleanup
    close(fds[0]);
    double check = 0.0;
    if (form != Form::baseline) {
      attn::Rng rng(1);
      const MatrixXd Q = attn::random_normal(n, d, rng),
                     K = attn::random_normal(n, d, rng),
                     V = attn::random_normal(n, d, rng);
      MatrixXd O;
      if (form == Form::reference) O = attn::attention(Q, K, V, MatrixXd());
      // One thread: each further thread would add its own block of scores.
      if (form == Form::row_blocks)
        O = attn::attention_row_blocks(Q, K, V, attn::Masking::none, 1);
      if (form == Form::tiled)
        O = attn::tiled_attention(Q, K, V, attn::Masking::none, {}, 1);
      check = O.sum();
    }
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    benchmark::DoNotOptimize(check);
    const double mib = static_cast<double>(usage.ru_maxrss) / 1024.0;
    const bool ok = write(fds[1], &mib, sizeof mib) == static_cast<ssize_t>(sizeof mib);
    _exit(ok ? 0 : 1);
  }
  close(fds[1]);
  double mib = -1.0;
  const bool ok = read(fds[0], &mib, sizeof mib) == static_cast<ssize_t>(sizeof mib);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!ok || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error("the measuring child failed");
  return mib;
}

void BM_peak_memory(benchmark::State& state, Form form) {
  const Index n = state.range(0);
  double mib = 0.0;
  for (auto _ : state) mib = peak_rss_mib_of_child(form, n);
  state.counters["peak_RSS_MiB"] = mib;
  state.counters["inputs_MiB"] = 4.0 * double(n) * d * 8 / (1 << 20);
}

void sizes(benchmark::internal::Benchmark* b, Index largest) {
  for (Index n = 1024; n <= largest; n *= 2) b->Arg(n);
  b->ArgName("N")->Iterations(1)->Repetitions(1)->Unit(benchmark::kSecond)->UseRealTime();
}

BENCHMARK_CAPTURE(BM_peak_memory, baseline, Form::baseline)
    ->Arg(1024)
    ->Iterations(1)
    ->Repetitions(1)
    ->ArgName("N");
BENCHMARK_CAPTURE(BM_peak_memory, reference, Form::reference)->Apply([](auto* b) {
  sizes(b, 8192);
});
BENCHMARK_CAPTURE(BM_peak_memory, row_blocks, Form::row_blocks)->Apply([](auto* b) {
  sizes(b, 16384);
});
BENCHMARK_CAPTURE(BM_peak_memory, tiled, Form::tiled)->Apply([](auto* b) {
  sizes(b, 65536);
});

}  // namespace

BENCHMARK_MAIN();
