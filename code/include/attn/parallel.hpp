#pragma once
/// \file parallel.hpp
/// \brief The one way the library shares a loop between threads: parallel_for().
///
/// Every threaded loop of the library (the fast attention forms, the backward pass, the
/// trainer of chapter 03, the runs of the regression experiment) goes through
/// parallel_for(), so that all of them hand out their work, report errors and cope with a
/// thread that cannot be started in the same way.

#include <Eigen/Core>
#include <functional>
#include <thread>

namespace attn {

/// \brief The default thread count of the library's threaded functions: the number of
/// cores, `std::thread::hardware_concurrency()`, or 1 when it is unknown (and in a
/// WebAssembly build without threads).
int available_threads();

/// \brief The number of workers parallel_for() uses for `count` indices on up to `threads`
/// threads: \f$ \min(\text{threads}, \text{count}) \f$, at least 1. A caller that keeps
/// scratch memory per worker makes this many, one for each worker number
/// \f$ 0, 1, \dots \f$ that parallel_for() passes to its job.
/// \throws std::invalid_argument if `threads` is below 1 or `count` below 0.
int parallel_workers(Eigen::Index count, int threads);

/// \brief Runs `job(index, worker)` for every index \f$ 0, 1, \dots, \text{count} - 1 \f$,
/// shared by up to `threads` threads.
///
/// There are parallel_workers() workers, numbered from 0: the caller's thread is worker 0
/// and takes part, the others are helper threads (at most one worker per index, so a
/// single index runs on the caller's thread alone). Indices are handed out in increasing
/// order, each to the next free worker: costly and cheap indices balance themselves, and
/// which worker runs an index varies from run to run. Two calls with the same worker
/// number never overlap, so a job may use scratch memory of its worker (made once,
/// parallel_workers() of them, before the call). If each index's result depends only on
/// the index, the result is the same for every thread count and every schedule.
///
/// Errors are those one thread would meet: if some indices throw, the exception of the
/// **lowest** of them reaches the caller, once every helper thread has been joined. Every
/// index below it has run to its end (they were handed out before it); indices above it
/// that have not started are skipped. A helper thread that cannot be started (as in a
/// WebAssembly build without threads) is not an error: the workers that did start take its
/// share.
///
/// \param count the number of indices (0: nothing runs).
/// \param threads the most threads to use, the caller's included (available_threads() is
///        the usual choice).
/// \param job called once per index, with the index and the worker number.
/// \throws std::invalid_argument if `threads` is below 1 or `count` below 0; whatever a job
///         throws, as above.
void parallel_for(Eigen::Index count, int threads,
                  const std::function<void(Eigen::Index index, int worker)>& job);

namespace detail {

/// How parallel_for() starts a helper thread. Tests replace it with one that throws
/// std::system_error, as std::thread does when no thread can be had; set it only while no
/// parallel_for() runs.
extern std::thread (*start_thread)(std::function<void()> body);

}  // namespace detail

}  // namespace attn
