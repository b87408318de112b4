#include "attn/tiled_attention.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "attention_kernels.hpp"
#include "attn/fast_exp.hpp"
#include "common.hpp"

namespace attn {

namespace {

using detail::inf;
using detail::require;
using detail::shape;

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;

void check_inputs(const char* who, const Eigen::Ref<const MatrixXd>& Q,
                  const Eigen::Ref<const MatrixXd>& K,
                  const Eigen::Ref<const MatrixXd>& V, Masking masking) {
  const std::string w = who;
  require(Q.cols() == K.cols(), w + ": Q is " + shape(Q) + " and K is " + shape(K) +
                                    "; queries and keys need the same width d_k");
  require(Q.cols() > 0, w + ": d_k must be at least 1");
  require(K.rows() == V.rows(), w + ": K is " + shape(K) + " and V is " + shape(V) +
                                    "; every key needs exactly one value row");
  require(masking == Masking::none || Q.rows() == K.rows(),
          w + ": a causal mask needs as many queries as keys (got " +
              std::to_string(Q.rows()) + " and " + std::to_string(K.rows()) + ")");
  require(Q.allFinite() && K.allFinite() && V.allFinite(),
          w + ": Q, K or V has a NaN or infinite entry");
}

// Hides the scores of keys after their query: column c of T holds the scores of query
// q0 + c against keys k0, k0 + 1, ...
void mask_future(Eigen::Ref<MatrixXd> T, Index q0, Index k0) {
  for (Index c = 0; c < T.cols(); ++c) {
    const Index first_hidden =
        std::max<Index>(0, q0 + c + 1 - k0);  // key k0 + r, r >= this
    if (first_hidden < T.rows()) T.col(c).tail(T.rows() - first_hidden).setConstant(-inf);
  }
}

void check_threads(const char* who, int threads) {
  require(threads >= 1, std::string(who) + ": threads must be >= 1 (got " +
                            std::to_string(threads) + ")");
}

// The blocks of `block` consecutive rows of 0 .. n - 1, handed out in row order, each once,
// to the threads that share them (for_each_thread()).
struct BlockQueue {
  BlockQueue(Index n_, Index block_)
      : n(n_), block(block_), stop((n_ + block_ - 1) / block_) {}
  const Index n, block;
  std::atomic<Index> next{0};  // the next block to hand out
  std::atomic<Index> stop;     // blocks from here on are skipped: an earlier one threw
};

// One thread's view of the queue: for (Index i0 = 0, b = 0; blocks.next(i0, b);) visits the
// blocks this thread takes, the rows i0 .. i0 + b - 1 of each.
class RowBlocks {
 public:
  explicit RowBlocks(BlockQueue& queue) : queue_(queue) {}
  bool next(Index& i0, Index& b) {
    taken_ = queue_.next.fetch_add(1);
    if (taken_ >= queue_.stop.load()) return false;
    i0 = taken_ * queue_.block;
    b = std::min(queue_.block, queue_.n - i0);
    return true;
  }
  Index taken() const { return taken_; }  // the block being computed; -1 before the first

 private:
  BlockQueue& queue_;
  Index taken_ = -1;
};

// Runs work(blocks) on up to `threads` threads, the caller's included, at most one per
// block; each call sets up its own scratch memory, then computes the blocks it takes. A
// block is computed whole by one thread, whichever it is, so the result does not depend on
// the thread count. A free thread takes the next block: under a causal mask the later
// blocks cost more, and a fixed split would leave one thread idle.
//
// Errors: the exception of the first block that throws, in row order (the one a single
// thread meets), reaches the caller once every thread has been joined. Blocks are handed
// out in order, so every block before it has been taken, and is finished, before `stop`
// skips the rest. A thread that cannot be started (a WebAssembly build without threads)
// leaves its blocks to the others.
template <class Work>
void for_each_thread(Index n, Index block, int threads, const Work& work) {
  BlockQueue queue(n, block);
  const Index workers = std::min<Index>(threads, queue.stop.load());
  if (workers <= 1) {  // one thread: every block, in order, on the caller's thread
    RowBlocks blocks(queue);
    work(blocks);
    return;
  }
  std::mutex error_mutex;
  std::exception_ptr error;        // the exception of block error_block
  Index error_block = queue.stop;  // -1 if setting up a thread's scratch memory threw
  const auto run = [&] {
    RowBlocks blocks(queue);
    try {
      work(blocks);
    } catch (...) {
      const std::lock_guard<std::mutex> lock(error_mutex);
      if (blocks.taken() < error_block) {
        error_block = blocks.taken();
        error = std::current_exception();
        queue.stop = std::max<Index>(error_block, 0);
      }
    }
  };
  std::vector<std::thread> helpers;
  helpers.reserve(static_cast<std::size_t>(workers - 1));
  for (Index t = 1; t < workers; ++t) {
    try {
      helpers.emplace_back(run);
    } catch (const std::system_error&) {
      break;  // no more threads to be had: fewer workers take all the blocks
    }
  }
  run();
  for (std::thread& t : helpers) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace

int available_threads() {
#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
  return 1;  // the browser may report cores this build cannot start threads on
#else
  return static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
#endif
}

Index attention_row_block(Index n_keys) {
  const Index fit = (Index{1} << 17) / std::max<Index>(n_keys, 1);  // 1 MiB of doubles
  return std::clamp<Index>(fit / 8 * 8, 32, 128);
}

Eigen::MatrixXd attention_row_blocks(const Eigen::Ref<const MatrixXd>& Q,
                                     const Eigen::Ref<const MatrixXd>& K,
                                     const Eigen::Ref<const MatrixXd>& V, Masking masking,
                                     int threads) {
  check_inputs("attention_row_blocks", Q, K, V, masking);
  check_threads("attention_row_blocks", threads);
  const Index n = Q.rows(), nk = K.rows();
  MatrixXd out = MatrixXd::Zero(n, V.cols());
  if (n == 0 || nk == 0) return out;  // no keys: an empty sum, as attention() returns
  // [attention-row-blocks]
  // Blocks of one chunk of queries (32 with AVX-512): a free thread takes the next, so two
  // threads stay busy to the end even under the mask, where later blocks cost more.
  const Index block = std::min(n, detail::chunk);
  const double scale = 1.0 / std::sqrt(static_cast<double>(Q.cols()));  // 1/sqrt(d_k)
  for_each_thread(n, block, threads, [&](RowBlocks& blocks) {  // a block on one thread
    // One tile of every key: each query's whole row of scores, then its plain softmax.
    detail::BlockWorkspace w(block, Q.cols(), V.cols(), nk);
    for (Index i0 = 0, b = 0; blocks.next(i0, b);)
      detail::attend_block(Q, K, V, i0, b, nk, masking == Masking::causal, scale, w, out,
                           "attention_row_blocks");
  });
  // [attention-row-blocks]
  return out;
}

Eigen::MatrixXd tiled_attention(const Eigen::Ref<const MatrixXd>& Q,
                                const Eigen::Ref<const MatrixXd>& K,
                                const Eigen::Ref<const MatrixXd>& V, Masking masking,
                                AttentionTiles tiles, int threads) {
  check_inputs("tiled_attention", Q, K, V, masking);
  require(tiles.queries >= 1 && tiles.keys >= 1,
          "tiled_attention: tile sizes must be >= 1 (got " +
              std::to_string(tiles.queries) + " queries x " + std::to_string(tiles.keys) +
              " keys)");
  check_threads("tiled_attention", threads);
  const Index nq = Q.rows(), nk = K.rows(), dv = V.cols();
  const bool causal = masking == Masking::causal;
  const double scale = 1.0 / std::sqrt(static_cast<double>(Q.cols()));
  const Index bq = std::min(tiles.queries, std::max<Index>(nq, 1));
  const Index bk = std::min(tiles.keys, std::max<Index>(nk, 1));
  MatrixXd out = MatrixXd::Zero(nq, dv);
  if (nk == 0) return out;  // no keys: an empty sum, as attention() returns
  for_each_thread(nq, bq, threads, [&](RowBlocks& blocks) {  // a tile on one thread
    detail::BlockWorkspace w(bq, Q.cols(), V.cols(), bk);
    for (Index i0 = 0, b = 0; blocks.next(i0, b);)
      detail::attend_block(Q, K, V, i0, b, bk, causal, scale, w, out, "tiled_attention");
  });
  return out;
}

AttentionGradients attention_backward(const Eigen::Ref<const MatrixXd>& Q,
                                      const Eigen::Ref<const MatrixXd>& K,
                                      const Eigen::Ref<const MatrixXd>& V,
                                      const Eigen::Ref<const MatrixXd>& dO,
                                      Masking masking) {
  check_inputs("attention_backward", Q, K, V, masking);
  require(dO.rows() == Q.rows() && dO.cols() == V.cols(),
          "attention_backward: dO is " + shape(dO) + ", expected " +
              std::to_string(Q.rows()) + "x" + std::to_string(V.cols()));
  require(dO.allFinite(), "attention_backward: dO has a NaN or infinite entry");
  const Index nq = Q.rows(), nk = K.rows();
  const double scale = 1.0 / std::sqrt(static_cast<double>(Q.cols()));
  AttentionGradients g{MatrixXd::Zero(nq, Q.cols()), MatrixXd::Zero(nk, K.cols()),
                       MatrixXd::Zero(nk, V.cols())};
  if (nq == 0 || nk == 0) return g;
  const Index block = std::min(nq, attention_row_block(nk));
  MatrixXd T(nk, block),
      U(nk, block);  // A^T, then dS^T; (dA)^T  (column c: query i0 + c)
  for (Index i0 = 0; i0 < nq; i0 += block) {
    const Index b = std::min(block, nq - i0);
    auto A = T.leftCols(b);
    auto dA = U.leftCols(b);
    const auto Qb = Q.middleRows(i0, b);
    const auto dOb = dO.middleRows(i0, b);
    // [attention-backward]
    A.noalias() = scale * (K * Qb.transpose());  // recompute the scores S^T
    if (masking == Masking::causal) mask_future(A, i0, 0);
    for (Index c = 0; c < b; ++c) {  // weights A^T, column by column
      fast_exp_shifted(A.col(c), A.col(c).maxCoeff());
      const double sum = A.col(c).sum();
      require(std::isfinite(sum), "attention_backward: row " + std::to_string(i0 + c) +
                                      " has an infinite score");
      A.col(c) /= sum;
    }
    g.dV.noalias() += A * dOb;           // dV = A^T dO
    dA.noalias() = V * dOb.transpose();  // dA^T = V dO^T
    const Eigen::RowVectorXd D = (A.array() * dA.array()).colwise().sum();  // sum_k A dA
    A.array() *= (dA.array().rowwise() - D.array());  // dS^T = A^T o (dA^T - D)
    g.dQ.middleRows(i0, b).noalias() =
        scale * (A.transpose() * K);     // dQ = dS K / sqrt(d)
    g.dK.noalias() += scale * (A * Qb);  // dK = dS^T Q / sqrt(d)
    // [attention-backward]
  }
  return g;
}

}  // namespace attn
