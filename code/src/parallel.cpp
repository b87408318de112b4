#include "attn/parallel.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "common.hpp"

namespace attn {

namespace detail {

namespace {
std::thread start_std_thread(std::function<void()> body) {
  return std::thread(std::move(body));
}
}  // namespace

std::thread (*start_thread)(std::function<void()> body) = start_std_thread;

}  // namespace detail

using Eigen::Index;

int available_threads() {
#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
  return 1;  // the browser may report cores this build cannot start threads on
#else
  return static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
#endif
}

int parallel_workers(Index count, int threads) {
  detail::require(threads >= 1, "parallel_for: threads must be >= 1 (got " +
                                    std::to_string(threads) + ")");
  detail::require(count >= 0,
                  "parallel_for: count must be >= 0 (got " + std::to_string(count) + ")");
  return static_cast<int>(std::clamp<Index>(count, 1, threads));
}

void parallel_for(Index count, int threads,
                  const std::function<void(Index index, int worker)>& job) {
  const int workers = parallel_workers(count, threads);
  if (workers == 1) {  // in order on the caller's thread: the first error stops the loop
    for (Index k = 0; k < count; ++k) job(k, 0);
    return;
  }
  std::atomic<Index> next{0};      // the next index to hand out
  std::atomic<Index> stop{count};  // indices from here on are skipped: a lower one threw
  std::mutex error_mutex;
  std::exception_ptr error;  // the exception of index error_index
  Index error_index = count;
  const auto run = [&](int worker) {
    // An index below `stop` is always run: `stop` only falls to an index that threw, and
    // every index below the lowest of those was handed out before it.
    for (Index k = next++; k < stop.load(); k = next++) {
      try {
        job(k, worker);
      } catch (...) {
        const std::lock_guard lock(error_mutex);
        if (k < error_index) {
          error_index = k;
          error = std::current_exception();
          stop = k;
        }
        return;
      }
    }
  };
  std::vector<std::thread> helpers;
  helpers.reserve(static_cast<std::size_t>(workers - 1));
  for (int w = 1; w < workers; ++w) {
    try {
      helpers.push_back(detail::start_thread([&run, w] { run(w); }));
    } catch (...) {
      break;  // no more threads to be had: the workers started so far take every index
    }
  }
  run(0);
  for (std::thread& t : helpers) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace attn
