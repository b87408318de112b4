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
#include <numbers>
#include <string>
#include <vector>

#include "attn/least_squares.hpp"
#include "attn/random.hpp"
#include "attn/softmax.hpp"
#include "ch03.hpp"
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

  TEST_CASE("the log-likelihood is the sum of n Gaussian log densities centred at x_i^T beta") {
    // The observations are independent, y_i ~ N(x_i^T beta, sigma^2) with x_i^T row i of X,
    // so log p(Y) is a sum of n one-dimensional log densities, computed here one observation
    // at a time from the density (2 pi sigma^2)^{-1/2} exp(-(y_i - mu_i)^2 / (2 sigma^2)),
    // a route that shares nothing with log_likelihood's vector formula. The two agree to
    // rounding, a few n eps |ll|. The least-squares paper's Step 1 (sec. 2.1) has three
    // slips, each of which this comparison catches: the power d for n in the normalising
    // factor (off by (n - d)/2 log(2 pi sigma^2), here at least 1.6), sigma^2 multiplying
    // the squared residuals instead of dividing (off by (sigma^2 - 1/sigma^2) |r|^2 / 2), and
    // the mean X^T beta for X beta (defined only for square X, and there a different vector).
    const double sigma2 = 2.25;  // not 1 and not 1/(2 pi): each slip changes the value
    attn::Rng rng(308);
    for (const auto [n, d] : std::vector<Shape>{{20, 3}, {100, 10}, {3, 3}, {7, 7}}) {
      const MatrixXd X = samples(n, d, rng);
      const VectorXd beta = attn::random_normal(d, 1, rng);
      const VectorXd Y = X * beta + attn::random_normal(n, 1, rng, 1.5);
      double direct = 0;
      for (Index i = 0; i < n; ++i) {
        const double mu = X.row(i).dot(beta);  // E y_i = x_i^T beta
        const double density = std::exp(-(Y(i) - mu) * (Y(i) - mu) / (2 * sigma2)) /
                               std::sqrt(2 * std::numbers::pi * sigma2);
        direct += std::log(density);
      }
      const double ll = log_likelihood(X, Y, beta, sigma2);
      CAPTURE(n);
      CAPTURE(d);
      CHECK(std::abs(ll - direct) <= c_nd(n, d) * eps * std::abs(direct));
      // The paper's density, -(d/2) log(2 pi sigma^2) - (sigma^2 / 2) |Y - X beta|^2, and its
      // mean X^T beta (square X only), are far from it.
      const double r2 = (Y - X * beta).squaredNorm();
      const double paper = -0.5 * double(d) * std::log(2 * std::numbers::pi * sigma2) -
                           0.5 * sigma2 * r2;
      CHECK(std::abs(paper - direct) > 1.0);
      if (n == d) {
        const VectorXd mean_transposed = X.transpose() * beta;
        CHECK((mean_transposed - X * beta).norm() > 1.0);
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

  TEST_CASE("least absolute deviations refuses a shape it cannot fit, with a message") {
    attn::Rng rng(306);
    const MatrixXd wide = attn::random_normal(3, 5, rng);  // fewer rows than columns
    const MatrixXd X = attn::random_normal(8, 2, rng);
    // (both once ended in a segfault, reading past the rows)
    CHECK_THROWS_WITH_AS(ch03::least_absolute_deviations(wide, VectorXd::Zero(3)),
                         doctest::Contains("at least as many samples as features"),
                         std::invalid_argument);
    CHECK_THROWS_WITH_AS(ch03::least_absolute_deviations(X, VectorXd::Zero(5)),
                         doctest::Contains("X has 8 rows, Y 5 entries"), std::invalid_argument);
    VectorXd Y = VectorXd::Zero(8);
    Y(3) = std::numeric_limits<double>::quiet_NaN();
    CHECK_THROWS_AS(ch03::least_absolute_deviations(X, Y), std::invalid_argument);
    MatrixXd twice(8, 2);
    twice << X.col(0), X.col(0);  // rank 1
    CHECK_THROWS_WITH_AS(ch03::least_absolute_deviations(twice, VectorXd::Zero(8)),
                         doctest::Contains("full column rank"), std::invalid_argument);
  }

  TEST_CASE("ridge is biased, below the Cramer-Rao bound and has a smaller error than LS") {
    // The least-squares paper (sec. 2.1) concludes from "least squares attains the bound"
    // that it is the UMVUE, "the optimal estimate in the statistical sense". The bound holds
    // for unbiased estimators only, and unbiasedness is what the paper never shows; and a
    // biased estimator can have a smaller mean squared error. Ridge, b = A X^T Y with
    // A = (G + lambda I)^-1 and G = X^T X, has bias -lambda A beta, covariance sigma^2 A G A
    // (below sigma^2 G^-1 in the positive semi-definite order), and mean squared error
    // lambda^2 |A beta|^2 + sigma^2 tr(A G A), which for lambda = d sigma^2 / |beta|^2 is
    // below least squares' sigma^2 tr G^-1 (here by about a third). A Monte Carlo of the
    // same noise draws for both confirms the exact formulas within 4 standard errors.
    const Index n = 10, d = 4, M = 20000;
    const double sigma = 3.0, sigma2 = sigma * sigma;
    attn::Rng rng(309);
    const MatrixXd X = attn::random_normal(n, d, rng);
    const VectorXd beta = attn::random_normal(d, 1, rng);
    const MatrixXd G = X.transpose() * X;
    const double lambda = double(d) * sigma2 / beta.squaredNorm();
    const MatrixXd A = (G + lambda * MatrixXd::Identity(d, d)).inverse();
    const double mse_ls = sigma2 * xtx_inverse(X).trace();
    const double mse_ridge =
        lambda * lambda * (A * beta).squaredNorm() + sigma2 * (A * G * A).trace();
    CAPTURE(mse_ls);
    CAPTURE(mse_ridge);
    CHECK(mse_ridge < 0.9 * mse_ls);
    // Below the bound: sigma^2 (G^-1 - A G A) is positive definite.
    const Eigen::SelfAdjointEigenSolver<MatrixXd> gap(sigma2 * (xtx_inverse(X) - A * G * A));
    CHECK(gap.eigenvalues().minCoeff() > 0);
    // Monte Carlo: the per-draw errors of both estimators, and the bias of ridge.
    VectorXd e_ls(M), e_ridge(M);
    VectorXd ridge_mean = VectorXd::Zero(d);
    for (Index m = 0; m < M; ++m) {
      const VectorXd Y = X * beta + attn::random_normal(n, 1, rng, sigma);
      const VectorXd b_ridge = A * (X.transpose() * Y);
      e_ls(m) = (attn::least_squares_qr(X, Y) - beta).squaredNorm();
      e_ridge(m) = (b_ridge - beta).squaredNorm();
      ridge_mean += b_ridge / double(M);
    }
    const auto se = [&](const VectorXd& e) {
      return std::sqrt((e.array() - e.mean()).square().sum() / double(M - 1) / double(M));
    };
    CHECK(std::abs(e_ls.mean() - mse_ls) <= 4 * se(e_ls));
    CHECK(std::abs(e_ridge.mean() - mse_ridge) <= 4 * se(e_ridge));
    CHECK(e_ridge.mean() < e_ls.mean());
    // The bias -lambda A beta is many standard errors away from zero.
    const VectorXd bias = -lambda * A * beta;
    CHECK((ridge_mean - beta - bias).norm() <= 4 * std::sqrt(sigma2 * (A * G * A).trace() / double(M)));
    CHECK(bias.norm() > 10 * std::sqrt(sigma2 * (A * G * A).trace() / double(M)));
  }

  TEST_CASE(
      "least absolute deviations is exact: the median for an intercept, a minimum") {
    // 1. With one column of ones, sum_i |y_i - b| is minimised by the median of Y (n odd).
    attn::Rng rng(305);
    for (const Index n : {1, 7, 51}) {
      const VectorXd Y = attn::random_normal(n, 1, rng);
      std::vector<double> sorted(Y.data(), Y.data() + n);
      std::sort(sorted.begin(), sorted.end());
      const VectorXd b = ch03::least_absolute_deviations(MatrixXd::Ones(n, 1), Y);
      CHECK(b(0) ==
            sorted[std::size_t(n / 2)]);  // it fits one point exactly: no rounding
    }
    // 2. On the chapter's data it fits d points exactly (a vertex) and every small step
    // away raises the sum of absolute residuals, which least squares does not minimise.
    for (const auto [n, d] : std::vector<Shape>{{20, 3}, {100, 10}, {200, 25}}) {
      const MatrixXd X = samples(n, d, rng);
      const VectorXd Y =
          X * attn::random_normal(d, 1, rng) + attn::random_normal(n, 1, rng);
      const VectorXd b = ch03::least_absolute_deviations(X, Y);
      const VectorXd r = Y - X * b;
      const double f = r.cwiseAbs().sum();
      CAPTURE(n);
      CAPTURE(d);
      // The d fitted residuals are rounding-sized: c eps (|X| |b| + |Y|) per entry.
      const double tiny =
          c_nd(n, d) * eps * (max_abs(X) * b.cwiseAbs().sum() + max_abs(Y));
      CHECK((r.array().abs() <= tiny).count() >= d);
      CHECK(f < (Y - X * attn::least_squares_qr(X, Y)).cwiseAbs().sum());
      // f is piecewise linear: a step of size 1e-4 changes it by about 1e-4 |X delta|_1,
      // far above rounding (n eps f ~ 1e-11), and at the minimum never downwards.
      for (int t = 0; t < 20; ++t) {
        const VectorXd delta = attn::random_normal(d, 1, rng, 1e-4);
        CHECK((Y - X * (b + delta)).cwiseAbs().sum() > f);
      }
    }
  }

  TEST_CASE(
      "least squares is best unbiased only under Gaussian noise: LAD wins heavy tails") {
    // Least squares attains the Cramer-Rao bound under Gaussian noise (previous test), so
    // no unbiased estimator beats it there; without normality Gauss-Markov makes it only
    // the best *linear* unbiased estimator, and least absolute deviations, which is not
    // linear in Y, beats it under heavy tails. Noise of variance 1 in all three laws. For
    // large n the ratio of mean squared errors LAD / LS is 1 / (4 f(0)^2), f the noise
    // density: pi/2 = 1.57 (Gaussian), 0.62 (Student t, 3 dof), 0.17 (contaminated).
    // The Monte Carlo's ratio has standard error se (delta method on the paired draws);
    // each bound holds with 4 se to spare, and an "LAD" that returned least squares (ratio
    // exactly 1) fails all three. (For Student t with 3 dof the squared error has no
    // finite variance, so se is only indicative there.)
    const Index n = 30, d = 2, M = 3000;
    attn::Rng rng(306);
    const MatrixXd X = samples(n, d, rng);
    const VectorXd beta = attn::random_normal(d, 1, rng);
    const auto gaussian =
        ch03::compare_estimators(X, beta, ch03::Noise::gaussian, M, rng);
    const auto t3 = ch03::compare_estimators(X, beta, ch03::Noise::student_t3, M, rng);
    const auto mixed =
        ch03::compare_estimators(X, beta, ch03::Noise::contaminated, M, rng);
    CAPTURE(gaussian.ratio);
    CAPTURE(t3.ratio);
    CAPTURE(mixed.ratio);
    CHECK(gaussian.ratio - 4 * gaussian.ratio_se > 1.2);  // measured 1.58 +- 0.02
    CHECK(t3.ratio + 4 * t3.ratio_se < 0.9);              // measured 0.68 +- 0.02
    CHECK(mixed.ratio + 4 * mixed.ratio_se < 0.3);        // measured 0.18 +- 0.006
    // Least squares' own error does not depend on the law, only on the variance: under
    // Gaussian noise |beta_hat - beta|^2 has mean tr C and variance 2 tr C^2, C =
    // (X^T X)^-1, so the Monte Carlo mean lies within 4 sqrt(2 tr C^2 / M) of tr C.
    const MatrixXd C = xtx_inverse(X);
    CHECK(std::abs(gaussian.mse_ls - C.trace()) <=
          4 * std::sqrt(2 * (C * C).trace() / double(M)));
  }

  TEST_CASE(
      "n (X^T X)^-1 inverts a covariance only for centred X and a correlation if "
      "scaled") {
    // (X^T X)^-1 = n^-1 (X^T X / n)^-1, and X^T X / n is the second-moment matrix: it
    // equals the covariance matrix Cov (1/n convention) plus m m^T, m the column means. Only
    // centred columns make it Cov; only centred columns scaled to unit variance make it
    // the correlation matrix R, R_ij = Cov_ij / sqrt(Cov_ii Cov_jj).
    const Index n = 200, d = 3;
    attn::Rng rng(307);
    MatrixXd X = samples(n, d, rng);
    X.col(0) = 2 * X.col(0).array() + 5;    // mean about 5, sd about 11.5
    X.col(1) = 0.1 * X.col(1).array() - 3;  // mean about -3, sd about 0.6
    X.col(2) = X.col(2) + 0.5 * X.col(0);   // correlated with column 0
    const double nn = static_cast<double>(n);
    const VectorXd m = X.colwise().mean();
    MatrixXd Cov = MatrixXd::Zero(d, d);  // by its definition, one sample at a time
    for (Index i = 0; i < n; ++i) {
      const VectorXd c = X.row(i).transpose() - m;
      Cov += c * c.transpose() / nn;
    }
    const VectorXd sd = Cov.diagonal().cwiseSqrt();
    const MatrixXd R =
        sd.cwiseInverse().asDiagonal() * Cov * sd.cwiseInverse().asDiagonal();
    const MatrixXd Xc = X.rowwise() - m.transpose();
    const MatrixXd Z = Xc * sd.cwiseInverse().asDiagonal();
    // The matrices have entries up to ~200 and condition numbers below ~1e3 (checked), so
    // the inverses agree to c eps kappa^2 relative; a wrong identity is off by O(1).
    const auto rel = [](const MatrixXd& A, const MatrixXd& B) {
      return (A - B).norm() / B.norm();
    };
    const double tol = c_nd(n, d) * eps * 1e6;  // c eps kappa^2 with kappa <= 1e3
    CHECK(attn::condition_number(X) < 1e3);
    CHECK(attn::condition_number(Xc) < 1e3);
    CHECK(attn::condition_number(Z) < 1e3);
    CHECK(rel(X.transpose() * X / nn, Cov + m * m.transpose()) <= tol);
    CHECK(rel(nn * xtx_inverse(Xc), Cov.inverse()) <= tol);  // centred: covariance
    CHECK(rel(nn * xtx_inverse(Z), R.inverse()) <= tol);       // and scaled: correlation
    CHECK(rel(nn * xtx_inverse(X), Cov.inverse()) > 0.1);    // raw: neither
    CHECK(rel(nn * xtx_inverse(X), R.inverse()) > 0.1);
    CHECK(rel(nn * xtx_inverse(Xc), R.inverse()) > 0.1);  // centred only: not correlation
  }
}
