#include "attn/linear_attention.hpp"

#include <fmt/core.h>

#include <stdexcept>
#include <string>

#include "attn/softmax.hpp"

namespace attn {

namespace {

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;

void check_inputs(const char* who, const Eigen::Ref<const MatrixXd>& phiQ,
                  const Eigen::Ref<const MatrixXd>& phiK,
                  const Eigen::Ref<const MatrixXd>* V) {
  if (phiQ.cols() != phiK.cols())
    throw std::invalid_argument(fmt::format("{}: phi(Q) has {} features, phi(K) has {}",
                                            who, phiQ.cols(), phiK.cols()));
  if (V != nullptr && V->rows() != phiK.rows())
    throw std::invalid_argument(
        fmt::format("{}: {} keys but {} values", who, phiK.rows(), V->rows()));
  if (!phiQ.allFinite() || !phiK.allFinite() || (V != nullptr && !V->allFinite()))
    throw std::invalid_argument(fmt::format("{}: a NaN or infinite input entry", who));
}

// Normalisers must be positive: a sum of weights <= 0 (possible for odd Taylor orders or
// trigonometric features) has no meaning as an average, and 0 would give NaN.
void check_normalisers(const char* who, const VectorXd& z) {
  for (Index i = 0; i < z.size(); ++i)
    if (!(z(i) > 0))
      throw std::invalid_argument(
          fmt::format("{}: the weights of query {} sum to {:g}, not a positive number",
                      who, i, z(i)));
}

}  // namespace

MatrixXd kernel_attention_weights(const Eigen::Ref<const MatrixXd>& phiQ,
                                  const Eigen::Ref<const MatrixXd>& phiK, bool causal) {
  check_inputs("kernel_attention_weights", phiQ, phiK, nullptr);
  MatrixXd W = phiQ * phiK.transpose();
  if (causal) {
    if (W.rows() != W.cols())
      throw std::invalid_argument(
          "kernel_attention_weights: causal needs as many queries "
          "as keys");
    W.triangularView<Eigen::StrictlyUpper>().setZero();
  }
  const VectorXd z = W.rowwise().sum();
  check_normalisers("kernel_attention_weights", z);
  return z.cwiseInverse().asDiagonal() * W;
}

MatrixXd kernel_attention_quadratic(const Eigen::Ref<const MatrixXd>& phiQ,
                                    const Eigen::Ref<const MatrixXd>& phiK,
                                    const Eigen::Ref<const MatrixXd>& V, bool causal) {
  check_inputs("kernel_attention_quadratic", phiQ, phiK, &V);
  return kernel_attention_weights(phiQ, phiK, causal) * V;
}

MatrixXd linear_attention(const Eigen::Ref<const MatrixXd>& phiQ,
                          const Eigen::Ref<const MatrixXd>& phiK,
                          const Eigen::Ref<const MatrixXd>& V) {
  check_inputs("linear_attention", phiQ, phiK, &V);
  // [linear-attention]
  const MatrixXd KV = phiK.transpose() * V;  // m x d_v, once for all queries
  const VectorXd k_sum = phiK.colwise().sum().transpose();  // phi(K)^T 1, size m
  const VectorXd z = phiQ * k_sum;                          // normalisers, size N
  check_normalisers("linear_attention", z);
  MatrixXd out = phiQ * KV;  // N x d_v
  out = z.cwiseInverse().asDiagonal() * out;
  // [linear-attention]
  return out;
}

MatrixXd causal_linear_attention(const Eigen::Ref<const MatrixXd>& phiQ,
                                 const Eigen::Ref<const MatrixXd>& phiK,
                                 const Eigen::Ref<const MatrixXd>& V) {
  check_inputs("causal_linear_attention", phiQ, phiK, &V);
  if (phiQ.rows() != phiK.rows())
    throw std::invalid_argument("causal_linear_attention: needs as many queries as keys");
  const Index N = phiQ.rows(), m = phiQ.cols(), dv = V.cols();
  MatrixXd out(N, dv);
  // [causal-rnn]
  MatrixXd S = MatrixXd::Zero(m, dv);  // the state: sum_{j<=t} phi(k_j) v_j^T
  VectorXd z = VectorXd::Zero(m);      // sum_{j<=t} phi(k_j)
  for (Index t = 0; t < N; ++t) {
    S.noalias() += phiK.row(t).transpose() * V.row(t);
    z += phiK.row(t).transpose();
    const double norm = phiQ.row(t).dot(z);
    if (!(norm > 0))
      throw std::invalid_argument(fmt::format(
          "causal_linear_attention: the weights of query {} sum to {:g}", t, norm));
    out.row(t) = (phiQ.row(t) * S) / norm;
  }
  // [causal-rnn]
  return out;
}

MatrixXd exp_kernel_attention(const Eigen::Ref<const MatrixXd>& Q,
                              const Eigen::Ref<const MatrixXd>& K,
                              const Eigen::Ref<const MatrixXd>& V) {
  if (Q.cols() != K.cols() || K.rows() != V.rows())
    throw std::invalid_argument("exp_kernel_attention: mismatched shapes");
  return softmax_rows(Q * K.transpose()) * V;
}

Index numerical_rank(const Eigen::Ref<const MatrixXd>& M, double rel_tol) {
  if (M.size() == 0) return 0;
  const VectorXd s = Eigen::BDCSVD<MatrixXd>(M).singularValues();
  if (s(0) == 0) return 0;
  return (s.array() > rel_tol * s(0)).count();
}

}  // namespace attn
