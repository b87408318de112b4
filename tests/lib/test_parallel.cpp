// Library tests: parallel_for(), the one primitive behind every threaded loop of the
// library (the fast attention forms, the backward pass, chapter 03's trainer and the
// regression experiment's runs). Every index runs once, the results do not depend on the
// thread count, the error is the lowest index's whatever the schedule, and a thread that
// cannot be started leaves its share to the others.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "attn/attention_regression.hpp"
#include "attn/parallel.hpp"
#include "attn/random.hpp"
#include "attn/tiled_attention.hpp"
#include "experiments/regression_experiment.hpp"

using Eigen::Index;
using Eigen::MatrixXd;

namespace {

// Waits (up to 10 s, so that a broken schedule fails instead of hanging) until flag is set.
void wait_for(const std::atomic<bool>& flag) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!flag.load() && std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

// The message of the std::runtime_error that f throws; "" if none.
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

// While alive, parallel_for() starts at most `startable` helper threads: the next start
// throws std::system_error, as std::thread does when no thread can be had.
class ThreadsRunOut {
 public:
  explicit ThreadsRunOut(int startable) {
    left_ = startable;
    attn::detail::start_thread = [](std::function<void()> body) {
      if (left_-- <= 0)
        throw std::system_error(
            std::make_error_code(std::errc::resource_unavailable_try_again));
      return std::thread(std::move(body));
    };
  }
  ~ThreadsRunOut() { attn::detail::start_thread = saved_; }
  ThreadsRunOut(const ThreadsRunOut&) = delete;
  ThreadsRunOut& operator=(const ThreadsRunOut&) = delete;

 private:
  static inline std::atomic<int> left_{0};
  std::thread (*saved_)(std::function<void()>) = attn::detail::start_thread;
};

// A job that writes a number made from its index through its worker's scratch memory, and
// records how often each index ran, which workers ran, and whether a worker number was
// ever in use by two calls at once.
struct Recorder {
  explicit Recorder(Index count, int workers)
      : out(static_cast<std::size_t>(count)),
        runs(static_cast<std::size_t>(count)),
        busy(static_cast<std::size_t>(workers)),
        scratch(static_cast<std::size_t>(workers)),
        used(static_cast<std::size_t>(workers)) {}
  void operator()(Index k, int worker) {
    const auto w = static_cast<std::size_t>(worker);
    if (busy.at(w).exchange(true)) overlapped = true;
    used.at(w) = true;
    scratch[w] = 0;  // the scratch memory: a sum built up, then copied out
    for (Index i = 0; i <= k % 97; ++i)
      scratch[w] += 1.0 / static_cast<double>(k + i + 1);
    out[static_cast<std::size_t>(k)] = scratch[w];
    ++runs[static_cast<std::size_t>(k)];
    busy[w] = false;
  }
  std::vector<double> out;
  std::vector<std::atomic<int>> runs;
  std::vector<std::atomic<bool>> busy;
  std::vector<double> scratch;
  // Atomic: std::vector<bool> would pack the workers' flags into shared bytes.
  std::vector<std::atomic<bool>> used;
  std::atomic<bool> overlapped{false};
};

}  // namespace

TEST_SUITE("lib") {
  TEST_CASE(
      "parallel_for runs every index once, with the same result on every thread count") {
    for (const Index count : {0, 1, 2, 5, 64, 1000}) {
      CAPTURE(count);
      Recorder one(count, 1);
      attn::parallel_for(count, 1, std::ref(one));
      for (const int threads : {1, 2, 3, 4, 8}) {
        CAPTURE(threads);
        const int workers = attn::parallel_workers(count, threads);
        CHECK(workers == std::max<Index>(1, std::min<Index>(count, threads)));
        Recorder r(count, workers);
        attn::parallel_for(count, threads, std::ref(r));
        CHECK(r.out == one.out);
        for (const auto& n : r.runs) CHECK(n.load() == 1);
        CHECK(!r.overlapped.load());
      }
    }
    CHECK_THROWS_AS(attn::parallel_for(3, 0, [](Index, int) {}), std::invalid_argument);
    CHECK_THROWS_AS(attn::parallel_for(-1, 2, [](Index, int) {}), std::invalid_argument);
  }

  TEST_CASE("parallel_for reports the lowest index's error, even when it throws last") {
    // Index 2 waits until index 5 has thrown, then throws itself: a schedule that meets
    // the higher error first. One thread meets index 2's; so must every thread count.
    const Index count = 40;
    for (const int threads : {1, 2, 3, 4, 8})
      for (int repeat = 0; repeat < 5; ++repeat) {
        CAPTURE(threads);
        std::atomic<bool> five_threw{false};
        std::vector<std::atomic<bool>> finished(static_cast<std::size_t>(count));
        const std::string message = error_of([&] {
          attn::parallel_for(count, threads, [&](Index k, int) {
            if (k == 2) {
              if (threads > 1) wait_for(five_threw);
              throw std::runtime_error("index 2");
            }
            if (k == 5) {
              five_threw = true;
              throw std::runtime_error("index 5");
            }
            if (k == 9) throw std::runtime_error("index 9");
            finished[static_cast<std::size_t>(k)] = true;
          });
        });
        CHECK(message == "index 2");
        // Every index before it ran to its end.
        CHECK(finished[0].load());
        CHECK(finished[1].load());
        if (threads == 1)  // one thread stops at the error
          for (Index k = 3; k < count; ++k) CHECK(!finished[static_cast<std::size_t>(k)]);
      }
  }

  TEST_CASE("parallel_for gives the work of a thread that cannot start to the others") {
    const Index count = 50;
    Recorder one(count, 1);
    attn::parallel_for(count, 1, std::ref(one));
    for (const int startable : {0, 1, 2}) {
      CAPTURE(startable);
      const ThreadsRunOut limit(startable);
      Recorder r(count, 4);
      attn::parallel_for(count, 4, std::ref(r));
      CHECK(r.out == one.out);
      for (const auto& n : r.runs) CHECK(n.load() == 1);
      if (startable == 0) CHECK(r.used[0].load());  // the caller's thread did it all
      CHECK(!r.used[static_cast<std::size_t>(startable) + 1].load());  // never started
      // Errors still come from the lowest index.
      CHECK(error_of([] {
              attn::parallel_for(30, 4, [](Index k, int) {
                if (k == 7 || k == 20) throw std::runtime_error(std::to_string(k));
              });
            }) == "7");
    }
    // The fast forms give the same numbers without their threads.
    attn::Rng rng(3);
    const MatrixXd Q = attn::random_normal(300, 8, rng),
                   K = attn::random_normal(300, 8, rng),
                   V = attn::random_normal(300, 4, rng);
    const MatrixXd rows = attn::attention_row_blocks(Q, K, V, attn::Masking::causal, 1);
    const MatrixXd tiled = attn::tiled_attention(Q, K, V, attn::Masking::causal, {}, 1);
    const ThreadsRunOut none(0);
    CHECK((attn::attention_row_blocks(Q, K, V, attn::Masking::causal, 3).array() ==
           rows.array())
              .all());
    CHECK((attn::tiled_attention(Q, K, V, attn::Masking::causal, {}, 3).array() ==
           tiled.array())
              .all());
  }

  TEST_CASE(
      "run_experiment reports the error of the lowest failing run on 1 and 2 threads") {
    // Runs 1 and 3 of 5 fail in the inputs hook; run 1 waits until run 3 has failed (on
    // two threads), so the schedule meets run 3's error first.
    experiments::ExperimentConfig config;
    config.n = 30;
    config.d = 3;
    config.runs = 5;
    config.iterations = 2;
    config.seed = 5;
    // Each run's training rows, known by their first entry (the hook sees only the rows).
    std::map<double, int> run_of;
    for (int r = 0; r < config.runs; ++r) {
      attn::Rng rng(attn::run_seed(config.seed, r, 0));
      run_of[attn::regression_data(config.n, config.d, rng).X(0, 0)] = r;
    }
    REQUIRE(run_of.size() == 5);
    for (const int threads : {1, 2})
      for (int repeat = 0; repeat < 3; ++repeat) {
        CAPTURE(threads);
        std::atomic<bool> three_failed{false};
        config.threads = threads;
        config.inputs = [&](const MatrixXd& X) {
          const auto run = run_of.find(X(0, 0));
          if (run == run_of.end()) return X;  // the held-out rows
          if (run->second == 1) {
            if (threads > 1) wait_for(three_failed);
            throw std::runtime_error("run 1 failed");
          }
          if (run->second == 3) {
            three_failed = true;
            throw std::runtime_error("run 3 failed");
          }
          return X;
        };
        CHECK(error_of([&] { experiments::run_experiment(config); }) == "run 1 failed");
      }
  }
}
