// Chapter 03 — the whitening map L against an independent SVD, as a test named after the
// claim. Tolerances as in test.cpp. A file of its own because Eigen's divide-and-conquer
// SVD, the independent reference, is slow to compile: an edit of test.cpp does not pay for
// it.

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "attn/least_squares.hpp"
#include "attn/random.hpp"
#include "test_helpers.hpp"

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;
using namespace ch03_test;

TEST_SUITE("ch03") {
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
}
