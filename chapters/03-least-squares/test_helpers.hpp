#pragma once
// What chapter 03's test files share: the shapes and seeds they sweep, the book's tolerance
// constant, and reference computations independent of the library's.

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <vector>

#include "attn/random.hpp"
#include "attn/svd.hpp"

namespace ch03_test {

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;

inline constexpr double eps = std::numeric_limits<double>::epsilon();

struct Shape {
  Index n, d;
};
// Tall, very tall, square (the worst conditioned), and a single feature.
inline const std::vector<Shape> shapes{{1, 1}, {20, 3}, {100, 10}, {50, 50}, {200, 25}};
inline const std::vector<std::uint64_t> seeds{1, 2, 3};

// Samples as in seed 000's experiment: entries uniform on [-10, 10].
inline MatrixXd samples(Index n, Index d, attn::Rng& rng) {
  return attn::random_uniform(n, d, rng, -10.0, 10.0);
}

inline double max_abs(const MatrixXd& M) {
  return M.cwiseAbs().maxCoeff();
}

// The book's generic constant for a backward-stable dense factorisation of an n x d matrix.
inline double c_nd(Index n, Index d) {
  return 4.0 * static_cast<double>(n + d);
}

// Reference (X^T X)^{-1} = T^{-1} T^{-T} from the QR factorisation X = Q_1 T: independent of
// the SVD behind attn::whitening_map and of the Cholesky behind the normal equations.
inline MatrixXd xtx_inverse(const MatrixXd& X) {
  const Index d = X.cols();
  const Eigen::HouseholderQR<MatrixXd> qr(X);
  const MatrixXd T_inv = qr.matrixQR().topRows(d).triangularView<Eigen::Upper>().solve(
      MatrixXd::Identity(d, d));
  return T_inv * T_inv.transpose();
}

// The attention system of seed 000 (eq. 6) with h = id, in the book's notation: a query x
// (one per row of Xq), keys K = X W_K, values V = Y w_V, and prediction
//   y_hat(x) = h(x^T W_Q (X W_K)^T) Y w_V = x^T W_Q W_K^T X^T Y w_V.
// (Seed 000 writes (W_q x)^T W_k X^T (W_v Y), so its W_q, W_k are our W_Q^T, W_K^T.)
inline VectorXd linear_attention(const MatrixXd& Xq, const MatrixXd& X, const VectorXd& Y,
                                 const MatrixXd& W_Q, const MatrixXd& W_K, double w_V) {
  const MatrixXd scores = (Xq * W_Q) * (X * W_K).transpose();  // h = id: no softmax
  return scores * (Y * w_V);
}

// The correct Gaussian log-likelihood of Y ~ N(X beta, sigma^2 I_n):
//   log p(Y | X, beta, sigma^2) = -(n/2) log(2 pi sigma^2) - |Y - X beta|^2 / (2 sigma^2).
inline double log_likelihood(const MatrixXd& X, const VectorXd& Y, const VectorXd& beta,
                             double sigma2) {
  const double n = static_cast<double>(X.rows());
  return -0.5 * n * std::log(2.0 * std::numbers::pi * sigma2) -
         (Y - X * beta).squaredNorm() / (2.0 * sigma2);
}

// |C^{-1/2} S C^{-T/2} - I|_F for a sample second-moment matrix S and a claimed
// covariance C (whitened by the Cholesky factor C = G G^T).
inline double whitened_deviation(const MatrixXd& S, const MatrixXd& C) {
  const Eigen::LLT<MatrixXd> llt(C);
  const MatrixXd G_inv_S = llt.matrixL().solve(S);
  const MatrixXd W = llt.matrixL().solve(G_inv_S.transpose());  // G^{-1} S G^{-T}
  return (W - MatrixXd::Identity(C.rows(), C.cols())).norm();
}

// Least-squares slope of y against x.
inline double slope(const std::vector<double>& x, const std::vector<double>& y) {
  const double n = static_cast<double>(x.size());
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sx += x[i];
    sy += y[i];
    sxx += x[i] * x[i];
    sxy += x[i] * y[i];
  }
  return (n * sxy - sx * sy) / (n * sxx - sx * sx);
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

inline double sigma_max(const MatrixXd& X) {
  return attn::singular_values(X)(0);
}

}  // namespace ch03_test
