// Chapter 03 — least squares as a special case of attention: every mathematical claim of
// the chapter about least squares itself, as a test named after the claim. Its statistics
// are tested in test_statistics.cpp, the whitening map in test_whitening.cpp, the attention
// forms of it in test_attention_forms.cpp, the trained system in test_training.cpp.
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
    using experiments::fit_line;
    const double s_ne = fit_line(log_kappa, log_ne).slope,
                 s_qr = fit_line(log_kappa, log_qr).slope,
                 s_svd = fit_line(log_kappa, log_svd).slope;
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
