// Chapter 01's computations (ch01.hpp says what they are for).
#include "ch01.hpp"

#include <algorithm>
#include <cmath>

#include "attn/attention.hpp"
#include "attn/softmax.hpp"

namespace ch01 {

using Eigen::MatrixXd;
using Eigen::VectorXd;

MatrixXd word_embeddings() {
  MatrixXd E(14, 2);
  // clang-format off
  E <<  1,  1,   1,  2,   2,  1,   2,  2,           // red, blue, green, yellow
       -1, -1,  -2, -1,  -2, -2,                    // fast, slow, fragrant
       -2,  1,  -1,  1,                             // table, chair
        1, -1,   2, -1,   3, -1,   2, -2,   1, -2;  // dog, cat, leopard, deer, horse
  // clang-format on
  return E;
}

MatrixXd sentence_embeddings() {
  MatrixXd X(6, 4);
  // clang-format off
  X << 2, 0, 2,  0,   // jin  (today)
       2, 2, 0,  0,   // tian (day)
       2, 2, 0,  0,   // tian (day)
       0, 2, 0,  2,   // qi   (air, weather)
       0, 0, 2, -2,   // hen  (very)
       0, 0, 2,  2;   // hao  (good)
  // clang-format on
  return X;
}

MatrixXd seed_weight_table() {
  MatrixXd W(6, 6);
  // clang-format off
  W << 1,    0,    0,    0,    0,    0,
       0.5,  0.5,  0,    0,    0,    0,
       0.25, 0.25, 0.5,  0,    0,    0,
       0.1,  0.2,  0.3,  0.4,  0,    0,
       0.05, 0.1,  0.25, 0.27, 0.33, 0,
       0.05, 0.05, 0.1,  0.2,  0.3,  0.5;
  // clang-format on
  return W;
}

DotsAndDistances dots_and_distances(const MatrixXd& E, Index query) {
  // [dot-vs-distance]
  const VectorXd q = E.row(query).transpose();  // the query, e.g. cat
  const VectorXd dots = E * q;                  // a.q, every word a
  const VectorXd sq_dist = (E.rowwise() - q.transpose()).rowwise().squaredNorm();
  const VectorXd norms_sq = E.rowwise().squaredNorm();  // |a|^2
  const VectorXd identity = norms_sq.array() + q.squaredNorm() - 2 * dots.array();
  // [dot-vs-distance]
  return {dots, sq_dist, norms_sq, (identity - sq_dist).cwiseAbs().maxCoeff()};
}

Context weighted_average(const MatrixXd& W, const MatrixXd& X) {
  // [weighted-average]
  // Row t of C is c_t = sum_i w_ti x_i over i <= t (W is lower triangular).
  const MatrixXd C = W * X;
  const VectorXd row_sums = W.rowwise().sum();
  // [weighted-average]
  return {C, row_sums};
}

double jacobian_norm(const VectorXd& p) {
  using Solver = Eigen::SelfAdjointEigenSolver<MatrixXd>;
  return Solver(attn::softmax_jacobian(p), Eigen::EigenvaluesOnly)
      .eigenvalues()
      .maxCoeff();
}

// [causal-toy]
MatrixXd toy_attention_weights(const MatrixXd& X, bool causal, double s) {
  // M: the causal mask (a decoder: token t reads tokens 0..t) or none (an encoder: every
  // token reads the whole sentence)
  const MatrixXd M = causal ? attn::causal_mask(X.rows()) : MatrixXd();
  return attn::attention_weights(s * X, X, M);  // softmax(s X X^T / sqrt(d) + M)
}
// [causal-toy]

double later_weight(const MatrixXd& A, Index t) {
  return A.row(t).tail(A.cols() - 1 - t).sum();
}

double smallest_visible_weight(const MatrixXd& A, bool causal) {
  double smallest = 1;
  for (Index i = 0; i < A.rows(); ++i)
    for (Index j = 0; j <= (causal ? i : A.cols() - 1); ++j)
      smallest = std::min(smallest, A(i, j));
  return smallest;
}

ToyMasks toy_masks(const MatrixXd& X) {
  const Index n = X.rows();
  ToyMasks m;
  m.A_all = toy_attention_weights(X, false);  // no mask: encoder
  m.A = toy_attention_weights(X, true);       // decoder
  m.C = m.A * X;                              // row t: a weighted average of rows 0..t
  // Change the last token ("hao", good, becomes a copy of "jin", today) and see which
  // outputs move: without the mask every earlier output does; with it none does.
  MatrixXd X2 = X;
  X2.row(n - 1) = X.row(0);
  const MatrixXd C2_all = toy_attention_weights(X2, false) * X2;
  const MatrixXd C2 = toy_attention_weights(X2, true) * X2;
  m.past_change_all = (C2_all - m.A_all * X).topRows(n - 1).cwiseAbs().maxCoeff();
  m.past_change_causal = (C2 - m.C).topRows(n - 1).cwiseAbs().maxCoeff();
  // The causal row t is the unmasked row t cut to tokens 0..t and renormalised.
  m.renormalised_residual = 0;
  for (Index t = 0; t < n; ++t) {
    const Eigen::RowVectorXd head = m.A_all.row(t).head(t + 1);
    m.renormalised_residual =
        std::max(m.renormalised_residual,
                 (m.A.row(t).head(t + 1) - head / head.sum()).cwiseAbs().maxCoeff());
  }
  return m;
}

MultiHeadChecks multi_head_checks(Index n, Index d, Index heads, attn::Rng& rng) {
  const double init = 1.0 / std::sqrt(static_cast<double>(d));  // keeps q.k of order 1
  attn::MultiHeadParams p;
  p.heads = heads;
  for (MatrixXd* W : {&p.W_Q, &p.W_K, &p.W_V, &p.W_O})
    *W = attn::random_normal(d, d, rng, init);
  MatrixXd X = attn::random_normal(n, d, rng);
  MultiHeadChecks m;
  m.Y = attn::multi_head_attention(X, p, attn::Masking::causal);

  // Changing the last token must leave every earlier output row unchanged, bit for bit.
  X.row(n - 1) = attn::random_normal(1, d, rng);
  const MatrixXd Y2 = attn::multi_head_attention(X, p, attn::Masking::causal);
  m.earlier_change =
      n > 1 ? (Y2.topRows(n - 1) - m.Y.topRows(n - 1)).cwiseAbs().maxCoeff() : 0.0;

  // Row sums of every head's weights.
  m.rowsum_error = 0;
  const Index dh = d / heads;
  for (Index i = 0; i < heads; ++i) {
    const MatrixXd A =
        attn::attention_weights(X * p.W_Q.middleCols(i * dh, dh),
                                X * p.W_K.middleCols(i * dh, dh), attn::causal_mask(n));
    m.rowsum_error =
        std::max(m.rowsum_error, (A.rowwise().sum().array() - 1.0).abs().maxCoeff());
  }
  return m;
}

}  // namespace ch01
