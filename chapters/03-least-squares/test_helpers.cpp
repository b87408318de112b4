#include "test_helpers.hpp"

#include <cmath>
#include <numbers>

#include "attn/svd.hpp"

namespace ch03_test {

MatrixXd samples(Index n, Index d, attn::Rng& rng) {
  return attn::random_uniform(n, d, rng, -10.0, 10.0);
}

double c_nd(Index n, Index d) {
  return 4.0 * static_cast<double>(n + d);
}

MatrixXd xtx_inverse(const MatrixXd& X) {
  const Index d = X.cols();
  const Eigen::HouseholderQR<MatrixXd> qr(X);
  const MatrixXd T_inv = qr.matrixQR().topRows(d).triangularView<Eigen::Upper>().solve(
      MatrixXd::Identity(d, d));
  return T_inv * T_inv.transpose();
}

VectorXd linear_attention(const MatrixXd& Xq, const MatrixXd& X, const VectorXd& Y,
                          const MatrixXd& W_Q, const MatrixXd& W_K, double w_V) {
  const MatrixXd scores = (Xq * W_Q) * (X * W_K).transpose();  // h = id: no softmax
  return scores * (Y * w_V);
}

double log_likelihood(const MatrixXd& X, const VectorXd& Y, const VectorXd& beta,
                      double sigma2) {
  const double n = static_cast<double>(X.rows());
  return -0.5 * n * std::log(2.0 * std::numbers::pi * sigma2) -
         (Y - X * beta).squaredNorm() / (2.0 * sigma2);
}

double whitened_deviation(const MatrixXd& S, const MatrixXd& C) {
  const Eigen::LLT<MatrixXd> llt(C);
  const MatrixXd G_inv_S = llt.matrixL().solve(S);
  const MatrixXd W = llt.matrixL().solve(G_inv_S.transpose());  // G^{-1} S G^{-T}
  return (W - MatrixXd::Identity(C.rows(), C.cols())).norm();
}

double sigma_max(const MatrixXd& X) {
  return attn::singular_values(X)(0);
}

}  // namespace ch03_test
