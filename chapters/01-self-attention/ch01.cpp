// Chapter 01's computations (ch01.hpp says what they are for).
#include "ch01.hpp"

#include <algorithm>

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

}  // namespace ch01
