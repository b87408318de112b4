// Chapter 03 — the statistics of least squares (unbiasedness, covariance, likelihood,
// Fisher information): each claim of the chapter about them, as a test named after the
// claim.
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
#include "test_helpers.hpp"

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;
using namespace ch03_test;

TEST_SUITE("ch03") {
  TEST_CASE("least squares is unbiased with covariance sigma^2 (X^T X)^-1") {
    // Monte Carlo over M noise draws with X and beta fixed. Let D_m = beta_hat_m - beta.
    // Mean: each coordinate of mean(D) is N(0, C_jj / M) if the claim holds, so it lies
    // within 4 standard errors (each coordinate misses with probability 6e-5).
    // Covariance: with C = G G^T and z_m = G^{-1} D_m ~ N(0, I_d), the whitened second
    // moment W = (1/M) sum z_m z_m^T has sqrt(M) (W - I) -> a symmetric Gaussian matrix
    // with N(0, 2) diagonal and N(0, 1) off-diagonal entries, so M |W - I|_F^2 ->
    // 2 chi^2 with d (d + 1) / 2 = 10 degrees of freedom (d = 4). The bound
    // |W - I|_F <= 8 / sqrt(M) fails with probability P(chi^2_10 > 32) = 4e-4. A claimed
    // covariance off by a factor a gives |W - I|_F ~ |1/a - 1| sqrt(d): a = 2 gives 1.0,
    // far above 8 / sqrt(M) = 0.057.
    const Index n = 30, d = 4, M = 20000;
    const double sigma = 2.0;
    attn::Rng rng(303);
    const MatrixXd X = samples(n, d, rng);
    const VectorXd beta = attn::random_normal(d, 1, rng);
    MatrixXd D(d, M);
    for (Index m = 0; m < M; ++m) {
      const VectorXd Y = X * beta + attn::random_normal(n, 1, rng, sigma);
      D.col(m) = attn::least_squares_qr(X, Y) - beta;
    }
    const MatrixXd C = sigma * sigma * xtx_inverse(X);
    const VectorXd mean = D.rowwise().mean();
    for (Index j = 0; j < d; ++j) CHECK(std::abs(mean(j)) <= 4 * std::sqrt(C(j, j) / M));

    const MatrixXd S = D * D.transpose() / static_cast<double>(M);
    const double bound = 8.0 / std::sqrt(static_cast<double>(M));
    CHECK(whitened_deviation(S, C) <= bound);  // measured 0.045 (chi^2_10 = 21)
    // The same statistic rejects the wrong covariances the bound must tell apart:
    CHECK(whitened_deviation(S, 2 * C) > 10 * bound);                // twice too large
    CHECK(whitened_deviation(S, C / (sigma * sigma)) > 10 * bound);  // sigma^2 forgotten
    // Seed 000's density (sec. 2.1, step 1) has -sigma^2/2 where -1/(2 sigma^2) belongs;
    // its Fisher information would be sigma^2 X^T X and its bound (X^T X)^{-1} / sigma^2,
    // sigma^4 = 16 times below the actual covariance.
    CHECK(whitened_deviation(S, C / std::pow(sigma, 4)) > 10 * bound);
    // Ignoring the correlations between coefficients (diagonal only) fails too.
    CHECK(whitened_deviation(S, MatrixXd(C.diagonal().asDiagonal())) > bound);
  }

  TEST_CASE("the Gaussian log-likelihood is maximised at the least-squares estimate") {
    // The correct density is p(Y | X, beta, sigma^2) = (2 pi sigma^2)^{-n/2}
    // exp(-|Y - X beta|^2 / (2 sigma^2)). Seed 000, sec. 2.1, step 1, writes
    // 1/sqrt((2 pi sigma^2)^d) exp(-(sigma^2/2) |y - X beta|^2) (and Y ~ N(X^T beta, ...)):
    // the power d should be n, and sigma^2 belongs in the denominator of the exponent.
    // That function does not integrate to 1 unless n = d and sigma = 1; its steps 2-3
    // differentiate the correct density.
    for (const auto seed : seeds)
      for (const auto [n, d] : shapes) {
        if (n == d) continue;  // a perfect fit: nothing to maximise against noise
        attn::Rng rng(seed);
        const double sigma2 = 2.25;
        const MatrixXd X = samples(n, d, rng);
        const VectorXd Y =
            X * attn::random_normal(d, 1, rng) + attn::random_normal(n, 1, rng, 1.5);
        const VectorXd b = attn::least_squares_qr(X, Y);
        const VectorXd r = Y - X * b;
        CAPTURE(n);
        CAPTURE(d);
        // Gradient X^T (Y - X b) / sigma^2 = 0. Backward stability makes b exact for
        // (X + dX, Y + dY) with |dX|, |dY| ~ c eps: |X^T r| <= c eps |X| (|r| + |Y| +
        // |X| |b|).
        // Measured: at most 0.002 of the tolerance.
        const double grad_tol =
            c_nd(n, d) * eps * X.norm() * (r.norm() + Y.norm() + X.norm() * b.norm());
        CHECK((X.transpose() * r).norm() <= grad_tol);
        // ll(b + delta) = ll(b) - |X delta|^2 / (2 sigma^2) exactly (the cross term is the
        // zero gradient), so every perturbation lowers it. Rounding: a few n eps |ll|.
        const double ll = log_likelihood(X, Y, b, sigma2);
        for (int t = 0; t < 5; ++t) {
          const VectorXd delta = attn::random_normal(d, 1, rng, 0.1);
          const double drop = (X * delta).squaredNorm() / (2 * sigma2);
          const double ll_moved = log_likelihood(X, Y, b + delta, sigma2);
          CHECK(ll_moved < ll);
          CHECK(std::abs((ll - ll_moved) - drop) <=
                c_nd(n, d) * eps * (std::abs(ll) + drop) +
                    grad_tol * delta.norm() / sigma2);
        }
      }
  }

  TEST_CASE(
      "the Fisher information is X^T X / sigma^2 and least squares attains the CRLB") {
    const Index n = 30, d = 4;
    const double sigma = 2.0, sigma2 = sigma * sigma;
    attn::Rng rng(304);
    const MatrixXd X = samples(n, d, rng);
    const VectorXd beta = attn::random_normal(d, 1, rng);
    const VectorXd Y = X * beta + attn::random_normal(n, 1, rng, sigma);
    const MatrixXd fisher = X.transpose() * X / sigma2;

    // 1. Minus the Hessian of the log-likelihood, by central differences. ll is quadratic
    // in beta, so the differences are exact up to rounding of the four values, each off by
    // about n eps |ll|; step h makes the quadratic term of size O(1).
    const double h = 1.0 / std::sqrt(fisher.norm());
    const VectorXd b = attn::least_squares_qr(X, Y);
    MatrixXd hessian(d, d);
    double ll_max = 0;
    for (Index i = 0; i < d; ++i)
      for (Index j = 0; j < d; ++j) {
        const VectorXd ei = VectorXd::Unit(d, i) * h, ej = VectorXd::Unit(d, j) * h;
        const double pp = log_likelihood(X, Y, b + ei + ej, sigma2);
        const double pm = log_likelihood(X, Y, b + ei - ej, sigma2);
        const double mp = log_likelihood(X, Y, b - ei + ej, sigma2);
        const double mm = log_likelihood(X, Y, b - ei - ej, sigma2);
        hessian(i, j) = (pp - pm - mp + mm) / (4 * h * h);
        ll_max =
            std::max({ll_max, std::abs(pp), std::abs(pm), std::abs(mp), std::abs(mm)});
      }
    // Measured: 0.003 of the tolerance.
    CHECK(max_abs(-hessian - fisher) <= c_nd(n, d) * eps * ll_max / (h * h));

    // 2. The Fisher information is also the covariance of the score
    // grad ll(beta) = X^T (Y - X beta) / sigma^2 = X^T eps / sigma^2: Monte Carlo with the
    // whitened bound of the previous test (|W - I|_F <= 8 / sqrt(M), d = 4).
    const Index M = 20000;
    MatrixXd scores(d, M);
    for (Index m = 0; m < M; ++m)
      scores.col(m) = X.transpose() * attn::random_normal(n, 1, rng, sigma) / sigma2;
    const MatrixXd S = scores * scores.transpose() / static_cast<double>(M);
    const double bound = 8.0 / std::sqrt(static_cast<double>(M));
    CHECK(whitened_deviation(S, fisher) <= bound);
    CHECK(whitened_deviation(S, sigma2 * X.transpose() * X) > 10 * bound);  // seed 000

    // 3. Cramer-Rao: an unbiased estimator has covariance >= I(beta)^{-1}; least squares
    // has covariance sigma^2 (X^T X)^{-1} (previous test) = I(beta)^{-1}, so it attains
    // the bound: I(beta) Cov(beta_hat) = I_d up to the kappa(X)^2 eps of the inverse.
    const MatrixXd cov = sigma2 * xtx_inverse(X);
    const double kappa = attn::condition_number(X);
    CHECK(max_abs(fisher * cov - MatrixXd::Identity(d, d)) <=
          c_nd(n, d) * kappa * kappa * eps);
  }
}
