#pragma once
// Internal to the library: the check every fast attention form (and any new kernel) makes
// before it computes, so that it keeps the promise of the reference attention(). Finite
// inputs can still overflow a score q_i . k_j / sqrt(d_k) (|q| |k| > 1e308), to +inf, to
// -inf or, when both meet in one sum, to NaN: attention() throws for that, masked or not,
// naming the first such row. A fast form must not give such a score a weight of 0 (-inf
// would pass for a mask) or return NaN.

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <string>
#include <vector>

#include "attn/parallel.hpp"
#include "attn/tiled_attention.hpp"
#include "common.hpp"

namespace attn::detail {

// Throws std::invalid_argument("<who>: row i has an infinite score") for the first row i
// of the scores Q K^T / sqrt(d_k) (all of them, before any mask, as attention() checks)
// with an entry that is not finite; returns otherwise. The same error for every thread
// count: the rows are checked in blocks by parallel_for(), which reports the lowest.
//
// Cheap in the usual case: no partial sum of q . k exceeds sum_l |q_l k_l| <= d_k max|Q|
// max|K| (to rounding), so when that bound is far below the largest double no score can
// overflow, and the check is one pass over Q and K. Only above it (entries near 1e150 and
// beyond) are the scores computed, a block of rows at a time.
inline void require_finite_scores(const char* who,
                                  const Eigen::Ref<const Eigen::MatrixXd>& Q,
                                  const Eigen::Ref<const Eigen::MatrixXd>& K,
                                  int threads) {
  using Eigen::Index;
  if (Q.size() == 0 || K.size() == 0) return;
  const double bound = static_cast<double>(Q.cols()) * Q.cwiseAbs().maxCoeff() *
                       K.cwiseAbs().maxCoeff();  // +inf if it overflows itself
  if (bound <= 0.25 * std::numeric_limits<double>::max()) return;
  const double scale = 1.0 / std::sqrt(static_cast<double>(Q.cols()));
  const Index n = Q.rows(), block = std::min(n, attention_row_block(K.rows()));
  const Index blocks = (n + block - 1) / block;
  std::vector<Eigen::MatrixXd> scores(
      static_cast<std::size_t>(parallel_workers(blocks, threads)));
  parallel_for(blocks, threads, [&](Index k, int worker) {
    const Index i0 = k * block, b = std::min(block, n - i0);
    Eigen::MatrixXd& S = scores[static_cast<std::size_t>(worker)];
    S.noalias() = scale * (Q.middleRows(i0, b) * K.transpose());  // as attention() does
    if (S.allFinite()) return;
    for (Index r = 0; r < b; ++r)
      require(S.row(r).allFinite(), std::string(who) + ": row " + std::to_string(i0 + r) +
                                        " has an infinite score");
  });
}

}  // namespace attn::detail
