// Chapter 03 — least squares as a special case of attention: every mathematical claim of
// the chapter, as a test named after the claim. (The trained attention system is tested in
// test_training.cpp.)
//
// Tolerances. An identity that goes through (X^T X)^{-1} loses up to kappa(X)^2 eps in the
// worst case: a backward-stable factorisation is exact for some X + E with |E| <= c eps |X|,
// and that perturbs (X^T X)^{-1} by up to 2 c eps kappa(X)^2 relative to its norm. The
// constant c grows with the sizes, so these tests use c = 4 (n + d); each test notes the
// largest error/tolerance ratio measured over its shapes and seeds (Release build). Identities without an inverse (one
// gradient step) lose only a few (n + d) eps relative to the size of the products. With X
// uniform on [-10, 10], kappa(X) is below 3 for n >= 4d, and a few hundred to a few
// thousand for the square 50 x 50 case, so a wrong formula (an O(1) error) fails every
// check by many orders of magnitude. Statistical claims use fixed seeds and bounds derived
// next to them.

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <string>
#include <vector>

#include "attn/least_squares.hpp"
#include "attn/random.hpp"
#include "attn/softmax.hpp"

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;

namespace {

constexpr double eps = std::numeric_limits<double>::epsilon();

struct Shape {
  Index n, d;
};
// Tall, very tall, square (the worst conditioned), and a single feature.
const std::vector<Shape> shapes{{1, 1}, {20, 3}, {100, 10}, {50, 50}, {200, 25}};
const std::vector<std::uint64_t> seeds{1, 2, 3};

// Samples as in seed 000's experiment: entries uniform on [-10, 10].
MatrixXd samples(Index n, Index d, attn::Rng& rng) {
  return attn::random_uniform(n, d, rng, -10.0, 10.0);
}

double max_abs(const MatrixXd& M) {
  return M.cwiseAbs().maxCoeff();
}

// The book's generic constant for a backward-stable dense factorisation of an n x d matrix.
double c_nd(Index n, Index d) {
  return 4.0 * static_cast<double>(n + d);
}

// Reference (X^T X)^{-1} = T^{-1} T^{-T} from the QR factorisation X = Q_1 T: independent of
// the SVD behind attn::whitening_map and of the Cholesky behind the normal equations.
MatrixXd xtx_inverse(const MatrixXd& X) {
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
VectorXd linear_attention(const MatrixXd& Xq, const MatrixXd& X, const VectorXd& Y,
                          const MatrixXd& W_Q, const MatrixXd& W_K, double w_V) {
  const MatrixXd scores = (Xq * W_Q) * (X * W_K).transpose();  // h = id: no softmax
  return scores * (Y * w_V);
}

// The correct Gaussian log-likelihood of Y ~ N(X beta, sigma^2 I_n):
//   log p(Y | X, beta, sigma^2) = -(n/2) log(2 pi sigma^2) - |Y - X beta|^2 / (2 sigma^2).
double log_likelihood(const MatrixXd& X, const VectorXd& Y, const VectorXd& beta,
                      double sigma2) {
  const double n = static_cast<double>(X.rows());
  return -0.5 * n * std::log(2.0 * std::numbers::pi * sigma2) -
         (Y - X * beta).squaredNorm() / (2.0 * sigma2);
}

// |C^{-1/2} S C^{-T/2} - I|_F for a sample second-moment matrix S and a claimed
// covariance C (whitened by the Cholesky factor C = G G^T).
double whitened_deviation(const MatrixXd& S, const MatrixXd& C) {
  const Eigen::LLT<MatrixXd> llt(C);
  const MatrixXd G_inv_S = llt.matrixL().solve(S);
  const MatrixXd W = llt.matrixL().solve(G_inv_S.transpose());  // G^{-1} S G^{-T}
  return (W - MatrixXd::Identity(C.rows(), C.cols())).norm();
}

// Least-squares slope of y against x.
double slope(const std::vector<double>& x, const std::vector<double>& y) {
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

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double sigma_max(const MatrixXd& X) {
  return Eigen::JacobiSVD<MatrixXd>(X).singularValues()(0);
}

}  // namespace

TEST_SUITE("ch03") {
  TEST_CASE("QR and SVD least squares equal the normal-equation formula") {
    for (const auto seed : seeds)
      for (const auto [n, d] : shapes) {
        attn::Rng rng(seed);
        const MatrixXd X = samples(n, d, rng);
        const VectorXd beta = attn::random_normal(d, 1, rng);
        const VectorXd Y = X * beta + attn::random_normal(n, 1, rng);
        const double kappa = attn::condition_number(X);
        const VectorXd b_ne = attn::least_squares_normal_equations(X, Y);
        // The normal equations lose kappa(X^T X) eps = kappa^2 eps; QR and SVD lose
        // kappa eps plus kappa^2 eps times the relative residual. Both are within
        // c kappa^2 eps of the exact solution, so of each other.
        const double tol =
            2 * c_nd(n, d) * kappa * kappa * eps;  // measured: <= 0.005 tol
        const double e_qr = attn::relative_error(attn::least_squares_qr(X, Y), b_ne);
        const double e_svd = attn::relative_error(attn::least_squares_svd(X, Y), b_ne);
        CAPTURE(n);
        CAPTURE(d);
        CAPTURE(kappa);
        CHECK(e_qr <= tol);
        CHECK(e_svd <= tol);
      }
  }

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

  TEST_CASE("whitening map L: L^T L = (X^T X)^-1 and L X^T X L^T = I and L X^T = U_1^T") {
    for (const auto seed : seeds)
      for (const auto [n, d] : shapes) {
        attn::Rng rng(seed);
        const MatrixXd X = samples(n, d, rng);
        const MatrixXd L = attn::whitening_map(X);
        const double kappa = attn::condition_number(X);
        const MatrixXd I = MatrixXd::Identity(d, d);
        CAPTURE(n);
        CAPTURE(d);
        CAPTURE(kappa);
        // Both sides carry the kappa^2 eps of a backward-stable route to (X^T X)^{-1}.
        // Measured: at most 0.13 of the tolerances tol and tol_u.
        const double tol = c_nd(n, d) * kappa * kappa * eps;
        const MatrixXd A = xtx_inverse(X);
        const double e1 = max_abs(L.transpose() * L - A) / max_abs(A);
        const double e2 = max_abs(L * (X.transpose() * X) * L.transpose() - I);
        CHECK(e1 <= tol);
        CHECK(e2 <= tol);

        // L X^T = U_1^T, against an independent SVD (BDCSVD; the library uses JacobiSVD).
        // Singular vectors are unique up to sign: align each row before comparing. Error
        // of column i of X L^T = X r_i / lambda_i is c eps kappa; the reference u_i moves
        // by up to c eps sigma_max / gap_i (Wedin).
        const Eigen::BDCSVD<MatrixXd> svd(X, Eigen::ComputeThinU);
        const VectorXd lam = svd.singularValues();
        const MatrixXd LXt = L * X.transpose();
        double gap = std::numeric_limits<double>::infinity();
        for (Index i = 0; i + 1 < d; ++i) gap = std::min(gap, lam(i) - lam(i + 1));
        const double tol_u = c_nd(n, d) * eps * (kappa + (d > 1 ? lam(0) / gap : 0.0));
        MatrixXd Ut = svd.matrixU().transpose();
        for (Index i = 0; i < d; ++i)
          if (Ut.row(i).dot(LXt.row(i)) < 0) Ut.row(i) *= -1.0;
        const double e3 = max_abs(LXt - Ut);
        CHECK(e3 <= tol_u);
        // ... hence L X^T X L^T = U_1^T U_1 = I: the whitened samples are orthonormal.
        const double e4 = max_abs(LXt * LXt.transpose() - I);
        CHECK(e4 <= tol);
      }
  }

  TEST_CASE(
      "linear attention with W_Q W_K^T w_V = (X^T X)^-1 predicts like least squares") {
    for (const auto seed : seeds)
      for (const auto [n, d] : shapes) {
        attn::Rng rng(seed);
        const MatrixXd X = samples(n, d, rng);
        const VectorXd Y =
            X * attn::random_normal(d, 1, rng) + attn::random_normal(n, 1, rng);
        // New queries, and the training samples themselves.
        MatrixXd Xq(n + 5, d);
        Xq << samples(5, d, rng), X;
        const VectorXd y_ls = Xq * attn::least_squares_qr(X, Y);  // x^T beta_LS

        const MatrixXd A = xtx_inverse(X);
        const MatrixXd L = attn::whitening_map(X);
        const MatrixXd I = MatrixXd::Identity(d, d);
        // A random factorisation: any invertible W_Q, any w_V != 0, and W_K solved from
        // W_Q W_K^T w_V = A, i.e. W_K = A W_Q^{-T} / w_V.
        const MatrixXd W_Q = attn::random_normal(d, d, rng);
        const double w_V = (attn::uniform01(rng) < 0.5 ? -1.0 : 1.0) *
                           (0.5 + 1.5 * attn::uniform01(rng));
        const MatrixXd W_K = W_Q.partialPivLu().solve(A).transpose() / w_V;
        const double kappa = attn::condition_number(X),
                     kappa_q = attn::condition_number(W_Q);

        struct Choice {
          const char* name;
          MatrixXd W_Q, W_K;
          double w_V, extra_kappa;
        };
        const std::vector<Choice> choices{
            {"W_Q = W_K = L^T (seed: W_q = W_k = L)", L.transpose(), L.transpose(), 1.0,
             1.0},
            {"W_Q = I, W_K = (X^T X)^-1", I, A, 1.0, 1.0},
            {"random W_Q, w_V; W_K solved", W_Q, W_K, w_V, kappa_q}};
        for (const auto& c : choices) {
          const VectorXd y_attn = linear_attention(Xq, X, Y, c.W_Q, c.W_K, c.w_V);
          CAPTURE(c.name);
          CAPTURE(n);
          CAPTURE(d);
          CAPTURE(kappa);
          // Error of A (kappa^2 eps, times kappa(W_Q) when W_K is solved from it) times the
          // size of the product x^T A X^T Y, bounded by |x| |A| |X| |Y|.
          const double scale = A.norm() * X.norm() * Y.norm();
          for (Index i = 0; i < Xq.rows(); ++i) {
            // Measured: at most 0.23 of the tolerance.
            const double tol = c_nd(n, d) * kappa * kappa * c.extra_kappa * eps *
                               Xq.row(i).norm() * scale;
            CHECK(std::abs(y_attn(i) - y_ls(i)) <= tol);
          }
        }
      }
  }

  TEST_CASE("on the training tokens the attention matrix is the hat matrix: a projection" *
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

  TEST_CASE("gradient descent approaches LS for eta < 2/lambda_max^2 and diverges above") {
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
        const VectorXd sv = Eigen::JacobiSVD<MatrixXd>(X).singularValues();
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

  TEST_CASE("normal equations square the condition number but QR and SVD do not") {
    // X = U_1 Lambda R^T with kappa(X) = 1e2 .. 1e7 (n = 100, d = 10), exact Y = X beta.
    // QR and SVD are backward stable: relative error ~ kappa eps. The normal equations
    // solve with X^T X, kappa(X^T X) = kappa^2: relative error ~ kappa^2 eps. Median over
    // 7 seeds per kappa, then the slope of log10(error) against log10(kappa). Measured:
    // slopes 2.00 (normal equations), 0.96 (QR), 0.80 (SVD); over nine other seed sets
    // 1.88-2.04, 0.86-0.92, 0.81-0.93 (kappa eps is the worst case, so QR and SVD grow
    // a little slower). A solver that formed X^T X would give 2, one that did not, 1.
    const Index n = 100, d = 10;
    std::vector<double> log_kappa, log_ne, log_qr, log_svd;
    for (int p = 2; p <= 7; ++p) {
      const double kappa = std::pow(10.0, p);
      std::vector<double> ne, qr, svd;
      for (std::uint64_t seed = 1; seed <= 7; ++seed) {
        attn::Rng rng(1000 * seed + static_cast<std::uint64_t>(p));
        const MatrixXd X = attn::matrix_with_condition(n, d, kappa, rng);
        const VectorXd beta = attn::random_normal(d, 1, rng);
        const VectorXd Y = X * beta;
        ne.push_back(
            attn::relative_error(attn::least_squares_normal_equations(X, Y), beta));
        qr.push_back(attn::relative_error(attn::least_squares_qr(X, Y), beta));
        svd.push_back(attn::relative_error(attn::least_squares_svd(X, Y), beta));
        CAPTURE(kappa);
        CAPTURE(seed);
        // Upper bounds for every run: d kappa eps and d kappa^2 eps.
        CHECK(qr.back() <= d * kappa * eps);
        CHECK(svd.back() <= d * kappa * eps);
        CHECK(ne.back() <= d * kappa * kappa * eps);
      }
      log_kappa.push_back(p);
      log_ne.push_back(std::log10(median(ne)));
      log_qr.push_back(std::log10(median(qr)));
      log_svd.push_back(std::log10(median(svd)));
      if (p == 6) {
        // At kappa = 1e6: kappa^2 eps = 2e-4 against kappa eps = 2e-10.
        CHECK(median(ne) > 1e-6);
        CHECK(median(ne) > 1e4 * median(qr));
        CHECK(median(qr) < 1e-9);
        CHECK(median(svd) < 1e-9);
      }
    }
    const double s_ne = slope(log_kappa, log_ne), s_qr = slope(log_kappa, log_qr),
                 s_svd = slope(log_kappa, log_svd);
    CHECK(s_ne >= 1.8);
    CHECK(s_ne <= 2.2);
    CHECK(s_qr >= 0.6);
    CHECK(s_qr <= 1.2);
    CHECK(s_svd >= 0.6);
    CHECK(s_svd <= 1.2);
  }

  TEST_CASE("least squares refuses d > n with a message giving the shape") {
    attn::Rng rng(8);
    const MatrixXd X = samples(5, 10, rng);
    const VectorXd Y = attn::random_normal(5, 1, rng);
    const auto msg = doctest::Contains(
        "least squares needs at least as many samples as features: X is 5x10 (n = 5 < d "
        "= "
        "10)");
    CHECK_THROWS_WITH_AS(attn::require_full_column_rank(X), msg, std::invalid_argument);
    CHECK_THROWS_WITH_AS(attn::least_squares_qr(X, Y), msg, std::invalid_argument);
    CHECK_THROWS_WITH_AS(attn::least_squares_svd(X, Y), msg, std::invalid_argument);
    CHECK_THROWS_WITH_AS(attn::least_squares_normal_equations(X, Y), msg,
                         std::invalid_argument);
    CHECK_THROWS_WITH_AS(attn::hat_matrix(X), msg, std::invalid_argument);
    CHECK_THROWS_WITH_AS(attn::whitening_map(X), msg, std::invalid_argument);
  }

  TEST_CASE(
      "least squares refuses a rank-deficient X and names its rank and sigma ratio") {
    attn::Rng rng(9);
    MatrixXd X = samples(20, 4, rng);
    X.col(3) = X.col(0) - 2 * X.col(1);  // a column that adds no information
    const VectorXd Y = attn::random_normal(20, 1, rng);
    const auto msg = doctest::Contains("X is 20x4 but its numerical rank is 3 < d = 4");
    CHECK_THROWS_WITH_AS(attn::require_full_column_rank(X), msg, std::invalid_argument);
    CHECK_THROWS_WITH_AS(attn::require_full_column_rank(X),
                         doctest::Contains("sigma_min/sigma_max = "),
                         std::invalid_argument);
    CHECK_THROWS_WITH_AS(attn::least_squares_qr(X, Y), msg, std::invalid_argument);
    CHECK_THROWS_WITH_AS(attn::least_squares_svd(X, Y), msg, std::invalid_argument);
    CHECK_THROWS_WITH_AS(attn::least_squares_normal_equations(X, Y), msg,
                         std::invalid_argument);
    CHECK_THROWS_WITH_AS(attn::hat_matrix(X), msg, std::invalid_argument);
    CHECK_THROWS_WITH_AS(attn::whitening_map(X), msg, std::invalid_argument);
    CHECK(attn::condition_number(X) > 1e14);  // a diagnostic: it does not throw

    // The tolerance is max(n, d) eps sigma_max = 2.2e-14 sigma_max for n = 100:
    // kappa = 1e12 passes, kappa = 1e15 is refused.
    attn::Rng rng2(10);
    CHECK_NOTHROW(
        attn::require_full_column_rank(attn::matrix_with_condition(100, 5, 1e12, rng2)));
    CHECK_THROWS_WITH_AS(
        attn::require_full_column_rank(attn::matrix_with_condition(100, 5, 1e15, rng2)),
        doctest::Contains("numerical rank is 4 < d = 5"), std::invalid_argument);
  }

  TEST_CASE("least squares refuses a Y of the wrong length and NaN entries") {
    attn::Rng rng(11);
    MatrixXd X = samples(20, 3, rng);
    VectorXd Y = attn::random_normal(20, 1, rng);
    CHECK_THROWS_WITH_AS(attn::least_squares_qr(X, Y.head(7)),
                         doctest::Contains("Y has 7 entries but X has 20 rows"),
                         std::invalid_argument);
    Y(4) = std::numeric_limits<double>::quiet_NaN();
    CHECK_THROWS_WITH_AS(attn::least_squares_svd(X, Y), doctest::Contains("Y has a NaN"),
                         std::invalid_argument);
    X(2, 1) = std::numeric_limits<double>::infinity();
    CHECK_THROWS_WITH_AS(attn::hat_matrix(X), doctest::Contains("NaN or infinite entry"),
                         std::invalid_argument);
    CHECK_THROWS_WITH_AS(attn::require_full_column_rank(MatrixXd(3, 0)),
                         doctest::Contains("at least one feature"),
                         std::invalid_argument);
  }
}
