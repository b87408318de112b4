#include "attn/tiled_attention.hpp"

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <cstddef>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "attention_kernels.hpp"
#include "attn/fast_exp.hpp"
#include "attn/parallel.hpp"
#include "common.hpp"
#include "finite_scores.hpp"

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

}  // namespace

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
  // Finite inputs can still overflow a score (|q| |k| > 1e308): an error, as in attention().
  detail::require_finite_scores("attention_row_blocks", Q, K, threads);
  // [attention-row-blocks]
  // Blocks of one chunk of queries (32 with AVX-512): a free thread takes the next, so two
  // threads stay busy to the end even under the mask, where later blocks cost more.
  const Index block = std::min(n, detail::chunk);
  const Index blocks = (n + block - 1) / block;
  const double scale = 1.0 / std::sqrt(static_cast<double>(Q.cols()));  // 1/sqrt(d_k)
  // One tile of every key: each query's whole row of scores, then its plain softmax.
  std::vector<detail::BlockWorkspace> workspaces;  // one per worker
  for (int w = 0; w < parallel_workers(blocks, threads); ++w)
    workspaces.emplace_back(block, Q.cols(), V.cols(), nk);
  parallel_for(blocks, threads, [&](Index k, int worker) {  // a block on one thread
    const Index i0 = k * block;
    detail::attend_block(Q, K, V, i0, std::min(block, n - i0), nk,
                         masking == Masking::causal, scale,
                         workspaces[static_cast<std::size_t>(worker)], out,
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
  // Finite inputs can still overflow a score (|q| |k| > 1e308): an error, as in attention().
  detail::require_finite_scores("tiled_attention", Q, K, threads);
  const Index query_tiles = (nq + bq - 1) / bq;
  std::vector<detail::BlockWorkspace> workspaces;  // one per worker
  for (int w = 0; w < parallel_workers(query_tiles, threads); ++w)
    workspaces.emplace_back(bq, Q.cols(), V.cols(), bk);
  parallel_for(query_tiles, threads, [&](Index k, int worker) {  // a tile on one thread
    const Index i0 = k * bq;
    detail::attend_block(Q, K, V, i0, std::min(bq, nq - i0), bk, causal, scale,
                         workspaces[static_cast<std::size_t>(worker)], out,
                         "tiled_attention");
  });
  return out;
}

AttentionGradients attention_backward(const Eigen::Ref<const MatrixXd>& Q,
                                      const Eigen::Ref<const MatrixXd>& K,
                                      const Eigen::Ref<const MatrixXd>& V,
                                      const Eigen::Ref<const MatrixXd>& dO,
                                      Masking masking, int threads) {
  check_inputs("attention_backward", Q, K, V, masking);
  require(dO.rows() == Q.rows() && dO.cols() == V.cols(),
          "attention_backward: dO is " + shape(dO) + ", expected " +
              std::to_string(Q.rows()) + "x" + std::to_string(V.cols()));
  require(dO.allFinite(), "attention_backward: dO has a NaN or infinite entry");
  check_threads("attention_backward", threads);
  const Index nq = Q.rows(), nk = K.rows();
  const double scale = 1.0 / std::sqrt(static_cast<double>(Q.cols()));
  AttentionGradients g{MatrixXd::Zero(nq, Q.cols()), MatrixXd::Zero(nk, K.cols()),
                       MatrixXd::Zero(nk, V.cols())};
  if (nq == 0 || nk == 0) return g;
  // Finite inputs can still overflow a score (|q| |k| > 1e308): an error, as in attention().
  detail::require_finite_scores("attention_backward", Q, K, threads);
  const Index block = std::min(nq, attention_row_block(nk));
  const Index blocks = (nq + block - 1) / block;
  // dK and dV are sums over every block of queries. So that the thread count cannot change
  // their rounding, the sum has a fixed shape: the blocks form groups of about 512
  // consecutive queries, each group's share is summed in block order (group 0's straight
  // into g, the others' into their worker's partial sums), and the shares are added to g
  // in group order; a worker whose group is done waits for the groups before it. Threads
  // share the groups.
  // Adding a group's share costs a few passes over n_k (d_k + d_v) numbers, against
  // 10 n_k d flops per query: with 512 queries per group it is lost in the noise of
  // BM_backward on one thread, where smaller groups were measurably slower.
  const Index blocks_per_group = std::max<Index>(1, 512 / block);
  const Index groups = (blocks + blocks_per_group - 1) / blocks_per_group;
  struct Scratch {
    MatrixXd T;       // A^T, then dS^T  (column c: query i0 + c)
    MatrixXd U;       // (dA)^T
    MatrixXd dK, dV;  // the share of the worker's group (not group 0)
  };
  std::vector<Scratch> scratch;  // one per worker
  for (int w = 0; w < parallel_workers(groups, threads); ++w)
    scratch.push_back({MatrixXd(nk, block), MatrixXd(nk, block), MatrixXd(nk, K.cols()),
                       MatrixXd(nk, V.cols())});
  std::mutex turn_mutex;
  std::condition_variable turn_changed;
  Index shares_added = 0;  // groups whose share is in g
  bool failed = false;     // a group threw: the others stop waiting
  parallel_for(groups, threads, [&](Index group, int worker) {
    auto& [T, U, share_dK, share_dV] = scratch[static_cast<std::size_t>(worker)];
    MatrixXd& dK = group == 0 ? g.dK : share_dK.setZero();
    MatrixXd& dV = group == 0 ? g.dV : share_dV.setZero();
    const Index first = group * blocks_per_group;
    try {
      for (Index k = first; k < std::min(blocks, first + blocks_per_group); ++k) {
        const Index i0 = k * block, b = std::min(block, nq - i0);
        auto A = T.leftCols(b);
        auto dA = U.leftCols(b);
        const auto Qb = Q.middleRows(i0, b);
        const auto dOb = dO.middleRows(i0, b);
        // [attention-backward]
        A.noalias() = scale * (K * Qb.transpose());  // recompute the scores S^T
        if (masking == Masking::causal) mask_future(A, i0, 0);
        for (Index c = 0; c < b; ++c) {  // weights A^T, column by column
          fast_exp_shifted(A.col(c), A.col(c).maxCoeff());
          A.col(c) /= A.col(c).sum();
        }
        dV.noalias() += A * dOb;             // dV = A^T dO
        dA.noalias() = V * dOb.transpose();  // dA^T = V dO^T
        // D: sum_k A dA, one number per query
        const Eigen::RowVectorXd D = (A.array() * dA.array()).colwise().sum();
        A.array() *= (dA.array().rowwise() - D.array());  // dS^T = A^T o (dA^T - D)
        g.dQ.middleRows(i0, b).noalias() =
            scale * (A.transpose() * K);   // dQ = dS K / sqrt(d)
        dK.noalias() += scale * (A * Qb);  // dK = dS^T Q / sqrt(d)
        // [attention-backward]
      }
    } catch (...) {
      const std::lock_guard lock(turn_mutex);
      failed = true;
      turn_changed.notify_all();
      throw;
    }
    std::unique_lock lock(turn_mutex);
    turn_changed.wait(lock, [&] { return shares_added == group || failed; });
    if (failed) return;  // the group that threw reports it
    if (group > 0) {
      g.dK += dK;
      g.dV += dV;
    }
    ++shares_added;
    turn_changed.notify_all();
  });
  return g;
}

}  // namespace attn
