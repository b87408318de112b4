// Chapter 03 — the hat matrix and linear-attention layers as least squares and gradient
// steps: each claim of the chapter about them, as a test named after the claim.
// (Least squares itself is tested in test.cpp, the trained system in test_training.cpp.)
//
// Tolerances. An identity that goes through (X^T X)^{-1} loses up to kappa(X)^2 eps in the
// worst case: a backward-stable factorisation is exact for some X + E with |E| <= c eps |X|,
// and that perturbs (X^T X)^{-1} by up to 2 c eps kappa(X)^2 relative to its norm. The
// constant c grows with the sizes, so these tests use c = 4 (n + d); each test notes the
// largest error/tolerance ratio measured over its shapes and seeds (Release build).
// Identities without an inverse (one gradient step) lose only a few (n + d) eps relative to
// the size of the products. With X
// uniform on [-10, 10], kappa(X) is below 3 for n >= 4d, and a few hundred to a few
// thousand for the square 50 x 50 case, so a wrong formula (an O(1) error) fails every
// check by many orders of magnitude. Statistical claims use fixed seeds and bounds derived
// next to them.

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "attn/least_squares.hpp"
#include "attn/random.hpp"
#include "attn/softmax.hpp"
#include "attn/svd.hpp"
#include "test_helpers.hpp"

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;
using namespace ch03_test;

TEST_SUITE("ch03") {
  TEST_CASE(
      "on the training tokens the attention matrix is the hat matrix: a projection" *
      doctest::test_suite("ex03.1")) {
    // Scores X W_Q (X W_K)^T with W_Q W_K^T = (X^T X)^{-1} (here W_Q = W_K = L^T) and no
    // softmax: the matrix that maps the values Y to the outputs on the training tokens.
    for (const auto seed : seeds)
      for (const auto [n, d] : shapes) {
        attn::Rng rng(seed);
        const MatrixXd X = samples(n, d, rng);
        const MatrixXd L = attn::whitening_map(X);
        const MatrixXd S = (X * L.transpose()) * (X * L.transpose()).transpose();
        const MatrixXd H = attn::hat_matrix(X);
        const double kappa = attn::condition_number(X);
        const double nd = static_cast<double>(n);
        CAPTURE(n);
        CAPTURE(d);
        CAPTURE(kappa);
        // Measured: the checks against tol_s and tol_h use at most 0.13 of them.
        const double tol_s = c_nd(n, d) * kappa * kappa * eps;  // S goes through L
        CHECK(max_abs(S - H) <= tol_s);
        CHECK(max_abs(S - S.transpose()) <= tol_s);
        // H = Q_1 Q_1^T with Q_1 orthonormal to about n eps: each property to a few n eps.
        const double tol_h = c_nd(n, d) * eps;
        CHECK(max_abs(H - H.transpose()) == 0.0);  // built exactly symmetric
        CHECK(max_abs(H * H - H) <= tol_h);        // idempotent
        CHECK(std::abs(H.trace() - static_cast<double>(d)) <= tol_h * std::sqrt(nd));
        const VectorXd ev = Eigen::SelfAdjointEigenSolver<MatrixXd>(H).eigenvalues();
        if (n > d) CHECK(ev.head(n - d).cwiseAbs().maxCoeff() <= tol_h);  // n - d zeros
        CHECK((ev.tail(d).array() - 1.0).abs().maxCoeff() <= tol_h);  // d eigenvalues 1
        if (n == d) {
          // Square and invertible: every token attends only to itself.
          CHECK(max_abs(H - MatrixXd::Identity(n, n)) <= tol_h);
          continue;
        }
        // Negative weights, far from rounding: no softmax can produce them. Softmax of the
        // very same scores gives weights that are all > 0 and rows that sum to 1.
        CHECK(H.minCoeff() < -0.01);
        const MatrixXd P = attn::softmax_rows(S);
        CHECK(P.minCoeff() > 0.0);
        CHECK((P.rowwise().sum().array() - 1.0).abs().maxCoeff() <= 2 * nd * eps);
      }
  }

  TEST_CASE("hat-matrix rows sum to 1 with an intercept column but not without one" *
            doctest::test_suite("ex03.1")) {
    for (const auto seed : seeds)
      for (const auto [n, d] : shapes) {
        if (d < 2 || n == d)
          continue;  // need an intercept and at least one feature; n > d
        attn::Rng rng(seed);
        MatrixXd X(n, d);
        X << VectorXd::Ones(n), samples(n, d - 1, rng);
        const MatrixXd H = attn::hat_matrix(X);
        CAPTURE(n);
        CAPTURE(d);
        // 1 is a column of X, so H 1 = 1: rounding only, a sum of n terms each below 1.
        const VectorXd sums = H.rowwise().sum();
        CHECK((sums.array() - 1.0).abs().maxCoeff() <= c_nd(n, d) * eps);
        CHECK(H.minCoeff() <
              -0.01);  // still negative weights: an affine, not convex, mix
        // Without the intercept, H 1 is the projection of 1 onto d random directions,
        // of squared length about d, far from |1|^2 = n: rows do not sum to 1.
        const MatrixXd Z = samples(n, d, rng);
        const VectorXd sums_z = attn::hat_matrix(Z).rowwise().sum();
        CHECK((sums_z.array() - 1.0).abs().maxCoeff() > 0.5);
      }
  }

  TEST_CASE("the weights that make attention least squares for one X do not for another") {
    // The least-squares paper's title: least squares *is* attention. With h = id and
    // W_Q W_K^T w_v = (X^T X)^-1 it is, for that X: the weights are computed from the data.
    // Keep them and draw new data, and the same layer no longer predicts like least squares
    // on the new data (it is off by O(1), against 1e-12 on the data it was made for).
    attn::Rng rng(33);
    const Index n = 100, d = 10, m = 50;
    const MatrixXd X1 = samples(n, d, rng), X2 = samples(n, d, rng), Xq = samples(m, d, rng);
    const VectorXd Y1 = X1 * attn::random_normal(d, 1, rng) + attn::random_normal(n, 1, rng);
    const VectorXd Y2 = X2 * attn::random_normal(d, 1, rng) + attn::random_normal(n, 1, rng);
    const MatrixXd W_Q = MatrixXd::Identity(d, d), W_K = xtx_inverse(X1);
    const auto rel = [&](const MatrixXd& X, const VectorXd& Y) {
      const VectorXd y_ls = Xq * attn::least_squares_qr(X, Y);
      return (linear_attention(Xq, X, Y, W_Q, W_K, 1.0) - y_ls).norm() / y_ls.norm();
    };
    CHECK(rel(X1, Y1) <= 1e-12);
    CHECK(rel(X2, Y2) > 0.1);
  }

  TEST_CASE("one linear-attention layer predicts like one gradient step from beta = 0") {
    // Loss (1/2)|Y - X beta|^2, gradient -X^T (Y - X beta). One step of size eta from 0 is
    // beta_1 = eta X^T Y. The layer: h = id, W_Q W_K^T = eta I (W_Q = eta I, W_K = I),
    // w_V = 1. No inverse anywhere: rounding only, a few (n + d) eps times the size of
    // the product x^T (eta X^T Y), at most eta |x| |X|_F |Y|.
    for (const auto seed : seeds)
      for (const auto [n, d] : shapes) {
        attn::Rng rng(seed);
        const MatrixXd X = samples(n, d, rng);
        const VectorXd Y =
            X * attn::random_normal(d, 1, rng) + attn::random_normal(n, 1, rng);
        const MatrixXd Xq = samples(7, d, rng);
        const double eta = 1.0 / std::pow(sigma_max(X), 2);
        const VectorXd beta0 = VectorXd::Zero(d);
        const VectorXd grad = -X.transpose() * (Y - X * beta0);
        const VectorXd beta1 = beta0 - eta * grad;
        const MatrixXd I = MatrixXd::Identity(d, d);
        const VectorXd y_attn = linear_attention(Xq, X, Y, eta * I, I, 1.0);
        CAPTURE(n);
        CAPTURE(d);
        for (Index i = 0; i < Xq.rows(); ++i) {
          // Measured: at most 0.13 of the tolerance.
          const double tol =
              c_nd(n, d) * eps * eta * Xq.row(i).norm() * X.norm() * Y.norm();
          CHECK(std::abs(y_attn(i) - Xq.row(i).dot(beta1)) <= tol);
        }
      }
  }

  TEST_CASE("one layer with W_Q W_K^T = (X^T X)^-1 is a Newton step: it lands on LS") {
    // Preconditioned step beta_1 = beta_0 - (X^T X)^{-1} grad(beta_0) = beta_0 +
    // (X^T X)^{-1} X^T (Y - X beta_0) = beta_LS from ANY beta_0 (the loss is quadratic);
    // from beta_0 = 0 it is the layer with W_Q = I, W_K = (X^T X)^{-1}, w_V = 1.
    for (const auto seed : seeds)
      for (const auto [n, d] : shapes) {
        attn::Rng rng(seed);
        const MatrixXd X = samples(n, d, rng);
        const VectorXd Y =
            X * attn::random_normal(d, 1, rng) + attn::random_normal(n, 1, rng);
        const VectorXd b_ls = attn::least_squares_qr(X, Y);
        const MatrixXd A = xtx_inverse(X);
        const double kappa = attn::condition_number(X);
        // Measured: at most 0.11 of the tolerances below.
        const double tol = c_nd(n, d) * kappa * kappa * eps;  // through (X^T X)^{-1}
        CAPTURE(n);
        CAPTURE(d);
        CAPTURE(kappa);
        for (int t = 0; t < 3; ++t) {
          const VectorXd beta0 =
              t == 0 ? VectorXd::Zero(d) : VectorXd(attn::random_normal(d, 1, rng, 3.0));
          const VectorXd grad = -X.transpose() * (Y - X * beta0);
          const VectorXd beta1 = beta0 - A * grad;
          // The error of A X^T r is relative to |beta_0| + |A| |X| |r|, not to |beta_LS|.
          const double size = beta0.norm() + A.norm() * X.norm() * (Y - X * beta0).norm();
          CHECK((beta1 - b_ls).norm() <= tol * size);
        }
        const MatrixXd Xq = samples(7, d, rng);
        const VectorXd y_attn =
            linear_attention(Xq, X, Y, MatrixXd::Identity(d, d), A, 1.0);
        for (Index i = 0; i < Xq.rows(); ++i)
          CHECK(std::abs(y_attn(i) - Xq.row(i).dot(b_ls)) <=
                tol * Xq.row(i).norm() * A.norm() * X.norm() * Y.norm());
      }
  }

  TEST_CASE("k stacked linear-attention layers predict like k gradient steps") {
    // von Oswald et al. 2023 (arXiv:2212.07677). Each training token carries a residual,
    // r^0 = Y; a layer (h = id, W_Q W_K^T = eta I, values = the residuals) updates
    //   training tokens: r <- r - eta X X^T r,   query: y_hat <- y_hat + eta x^T X^T r,
    // and by induction r^k = Y - X beta_k, y_hat^k = x^T beta_k for gradient descent
    // beta_{k+1} = beta_k + eta X^T (Y - X beta_k), beta_0 = 0.
    // Rounding: with eta <= 1/sigma_max^2 the map r -> (I - eta X X^T) r does not expand,
    // so each layer adds at most c (n + d) eps g |Y| to r, with g = eta |X|_F^2 <= d, and
    // the k errors add up. The query sums eta x^T X^T r over k layers, each off by the
    // error of r times eta |x| |X|_F: after k layers, c k^2 (n + d) eps g eta |x| |X|_F |Y|.
    for (const auto seed : seeds)
      for (const auto [n, d] : shapes) {
        attn::Rng rng(seed);
        const MatrixXd X = samples(n, d, rng);
        const VectorXd Y =
            X * attn::random_normal(d, 1, rng) + attn::random_normal(n, 1, rng);
        const MatrixXd Xq = samples(7, d, rng);
        const double s_max = sigma_max(X);
        const double eta = 1.0 / (s_max * s_max);
        const double g = eta * X.squaredNorm();
        VectorXd r = Y, y_hat = VectorXd::Zero(Xq.rows()), beta = VectorXd::Zero(d);
        CAPTURE(n);
        CAPTURE(d);
        for (int k = 1; k <= 10; ++k) {
          // One linear-attention layer on the tokens (x_j, r_j) and the queries:
          const VectorXd attn_train = (X * X.transpose()) * r;  // sum_j (x_i^T x_j) r_j
          y_hat += eta * (Xq * X.transpose()) * r;
          r -= eta * attn_train;
          // One gradient-descent step:
          beta += eta * X.transpose() * (Y - X * beta);
          CAPTURE(k);
          const double kk = static_cast<double>(k);
          // Measured: at most 0.13 of the tolerances below.
          const double tol_r = c_nd(n, d) * kk * eps * g * Y.norm();
          CHECK((r - (Y - X * beta)).norm() <= tol_r);
          for (Index i = 0; i < Xq.rows(); ++i) {
            const double tol = tol_r * kk * eta * Xq.row(i).norm() *
                               X.norm();  // c k^2 ... |x| |X|_F |Y|
            CHECK(std::abs(y_hat(i) - Xq.row(i).dot(beta)) <= tol);
          }
        }
      }
  }

  TEST_CASE(
      "gradient descent approaches LS for eta < 2/lambda_max^2 and diverges above") {
    // beta_k - beta_LS = (I - eta X^T X)^k (beta_0 - beta_LS): along the right singular
    // vector r_i it shrinks by |1 - eta lambda_i^2| per step, which is < 1 for every i
    // exactly when 0 < eta < 2/lambda_max^2 (lambda_max = the largest singular value of X).
    for (const auto seed : seeds)
      for (const auto [n, d] : shapes) {
        if (n < 4 * d) continue;  // well conditioned: kappa < 3, so a few hundred steps
        attn::Rng rng(seed);
        const MatrixXd X = samples(n, d, rng);
        const VectorXd Y =
            X * attn::random_normal(d, 1, rng) + attn::random_normal(n, 1, rng);
        const VectorXd b_ls = attn::least_squares_qr(X, Y);
        const VectorXd sv = attn::singular_values(X);
        const double s_max = sv(0), s_min = sv(d - 1);
        CAPTURE(n);
        CAPTURE(d);
        auto run = [&](double eta, int steps, std::vector<double>& errors) {
          VectorXd beta = VectorXd::Zero(d);
          for (int k = 0; k < steps; ++k) {
            beta += eta * X.transpose() * (Y - X * beta);
            errors.push_back((beta - b_ls).norm() / b_ls.norm());
          }
        };
        std::vector<double> good, bad;
        const double eta = 1.0 / (s_max * s_max);
        run(eta, 400, good);
        // Contraction rate of the slowest direction, 1 - eta sigma_min^2, plus rounding.
        const double rate = 1.0 - eta * s_min * s_min;
        for (std::size_t k = 0; k < good.size(); ++k)
          CHECK(good[k] <= std::pow(rate, static_cast<double>(k + 1)) + 1e-12);
        CHECK(good.back() <= 1e-12);
        run(2.2 / (s_max * s_max), 60, bad);  // |1 - 2.2| = 1.2 per step: 1.2^60 ~ 5e4
        CHECK(bad.back() > 100.0);
      }
  }
}
