#pragma once
// What chapter 03's test files share: the shapes and seeds they sweep, the book's tolerance
// constant, and reference computations independent of the library's (in test_helpers.cpp,
// so that the decompositions they use are compiled once, not in every test file).
// (eps, Shape, seeds and max_abs come from tests/support/test_support.hpp.)

#include <Eigen/Dense>
#include <cstdint>
#include <limits>
#include <vector>

#include "attn/random.hpp"
#include "experiments/statistics.hpp"
#include "test_support.hpp"

namespace ch03_test {

using book_test::eps;
using book_test::max_abs;
using book_test::seeds;
using book_test::Shape;

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;

// Tall, very tall, square (the worst conditioned), and a single feature.
inline const std::vector<Shape> shapes{{1, 1}, {20, 3}, {100, 10}, {50, 50}, {200, 25}};

// Samples as in seed 000's experiment: entries uniform on [-10, 10].
MatrixXd samples(Index n, Index d, attn::Rng& rng);

// The book's generic constant for a backward-stable dense factorisation of an n x d matrix.
double c_nd(Index n, Index d);

// Reference (X^T X)^{-1} = T^{-1} T^{-T} from the QR factorisation X = Q_1 T: independent of
// the SVD behind attn::whitening_map and of the Cholesky behind the normal equations.
MatrixXd xtx_inverse(const MatrixXd& X);

// The attention system of seed 000 (eq. 6) with h = id, in the book's notation: a query x
// (one per row of Xq), keys K = X W_K, values V = Y w_V, and prediction
//   y_hat(x) = h(x^T W_Q (X W_K)^T) Y w_V = x^T W_Q W_K^T X^T Y w_V.
// (Seed 000 writes (W_q x)^T W_k X^T (W_v Y), so its W_q, W_k are our W_Q^T, W_K^T.)
VectorXd linear_attention(const MatrixXd& Xq, const MatrixXd& X, const VectorXd& Y,
                          const MatrixXd& W_Q, const MatrixXd& W_K, double w_V);

// The correct Gaussian log-likelihood of Y ~ N(X beta, sigma^2 I_n):
//   log p(Y | X, beta, sigma^2) = -(n/2) log(2 pi sigma^2) - |Y - X beta|^2 / (2 sigma^2).
double log_likelihood(const MatrixXd& X, const VectorXd& Y, const VectorXd& beta,
                      double sigma2);

// |C^{-1/2} S C^{-T/2} - I|_F for a sample second-moment matrix S and a claimed
// covariance C (whitened by the Cholesky factor C = G G^T).
double whitened_deviation(const MatrixXd& S, const MatrixXd& C);

using experiments::median;

double sigma_max(const MatrixXd& X);

}  // namespace ch03_test
