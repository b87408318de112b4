// Chapter 04 — what a change of units does to least squares (the typed quantities are in
// test.cpp, attention and training in test_attention.cpp).
//
// The claims loop over shapes, seeds and unit factors c. Tolerances: multiplying by c rounds
// every entry once (relative 2^-53), and least squares and the whitening map amplify a
// relative perturbation of X by at most about kappa(X)^2 (kappa(X) for a small residual); the
// data here have kappa(X) < 10, so each tolerance is a few hundred eps times kappa^2.

#include <doctest/doctest.h>

#include <cmath>

#include "attn/least_squares.hpp"
#include "attn/random.hpp"
#include "attn/svd.hpp"
#include "ch04.hpp"
#include "test_helpers.hpp"

using ch04::Method;
using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;
using namespace ch04_test;

TEST_SUITE("ch04") {
  TEST_CASE("LS(cX) = LS(X) / c and L(cX) = L(X) / c") {
    for (const auto seed : seeds)
      for (const Shape s : shapes) {
        attn::Rng rng(seed);
        const ch04::UnitsProblem p = ch04::units_problem(s.n, s.d, 3, rng);
        const VectorXd beta = attn::least_squares_qr(p.X, p.Y);
        const MatrixXd L = attn::whitening_map(p.X);
        for (const double c : factors) {
          CAPTURE(c);
          CHECK(attn::relative_error(c * attn::least_squares_qr(c * p.X, p.Y), beta) <=
                tolerance(p.X));
          // L itself comes from singular vectors, whose rounding error grows with
          // sigma_max / (smallest gap between singular values) as well as kappa (and the
          // same algorithm on a positive multiple of X makes the same sign choices).
          const MatrixXd Lc = c * attn::whitening_map(c * p.X);
          CHECK(attn::relative_error(Lc, L) <= tolerance(p.X) * gap_factor(p.X));
          // L^T L = (X^T X)^-1 does not depend on the singular vectors' rounding.
          CHECK(attn::relative_error(Lc.transpose() * Lc, L.transpose() * L) <=
                tolerance(p.X));
        }
      }
  }

  TEST_CASE("L divides by the singular values of X, the square roots of those of X^T X") {
    for (const auto seed : seeds)
      for (const Shape s : shapes) {
        attn::Rng rng(seed);
        const ch04::UnitsProblem p = ch04::units_problem(s.n, s.d, 3, rng);
        const MatrixXd L = attn::whitening_map(p.X);
        const VectorXd lambda = attn::singular_values(p.X);
        const VectorXd of_gram = attn::singular_values(p.X.transpose() * p.X);
        // Row i of L = r_i^T / lambda_i with r_i of unit length: its length is 1 / lambda_i.
        for (Index i = 0; i < s.d; ++i) {
          CAPTURE(i);
          CHECK(L.row(i).norm() * lambda(i) == doctest::Approx(1).epsilon(tolerance(p.X)));
          // X^T X = R Lambda^2 R^T: its singular values are the squares (in A^2).
          CHECK(of_gram(i) == doctest::Approx(lambda(i) * lambda(i)).epsilon(tolerance(p.X)));
        }
        // Dividing the projections r_i^T x_j by singular values in A makes them pure numbers;
        // dividing by those of X^T X (in A^2) would leave A^-1: numbers that change like 1/c.
        const MatrixXd R = attn::thin_svd(p.X).V;
        const auto divided = [&](double c, const VectorXd& by) {
          return MatrixXd((c * p.X * R) * by.cwiseInverse().asDiagonal());
        };
        const double c = 1e3;
        const MatrixXd cX = c * p.X;
        CHECK(attn::relative_error(divided(c, attn::singular_values(cX)), divided(1, lambda)) <=
              tolerance(p.X));
        CHECK(attn::relative_error(
                  c * divided(c, attn::singular_values(cX.transpose() * cX)),
                  divided(1, of_gram)) <= tolerance(p.X));
      }
  }

  TEST_CASE(
      "lambda_i is sqrt(n) times the root mean square along axis i, so L X^T has rows of "
      "unit length") {
    for (const auto seed : seeds)
      for (const Shape s : shapes) {
        attn::Rng rng(seed);
        const ch04::UnitsProblem p = ch04::units_problem(s.n, s.d, 3, rng);
        const attn::ThinSvd svd = attn::thin_svd(p.X);
        const MatrixXd projections = p.X * svd.V;  // column i: r_i^T x_j for every sample j
        const double root_n = std::sqrt(double(s.n));
        const double tol = tolerance(p.X);
        for (Index i = 0; i < s.d; ++i) {
          CAPTURE(i);
          const double rms = projections.col(i).norm() / root_n;  // uncentred
          CHECK(svd.s(i) == doctest::Approx(root_n * rms).epsilon(tol));
        }
        // Projecting on the axes decorrelates the features without whitening them:
        // R^T X^T X R = Lambda^2, diagonal but not I. Dividing by lambda_i whitens.
        const MatrixXd rotated_gram = projections.transpose() * projections;
        const MatrixXd lambda2 = svd.s.cwiseAbs2().asDiagonal();
        CHECK(attn::relative_error(rotated_gram, lambda2) <= tol);
        // So the whitened samples L X^T have rows of unit length, mean square 1 / n; the
        // rows of sqrt(n) L X^T have mean square 1 (the factor in whitened attention).
        const MatrixXd LXt = attn::whitening_map(p.X) * p.X.transpose();
        for (Index i = 0; i < s.d; ++i) {
          CAPTURE(i);
          CHECK(LXt.row(i).norm() == doctest::Approx(1).epsilon(tol));
          CHECK((root_n * LXt.row(i)).squaredNorm() / double(s.n) ==
                doctest::Approx(1).epsilon(tol));
        }
      }
  }

  TEST_CASE(
      "with features in two units the whitened inputs change but their inner products do "
      "not") {
    for (const auto seed : seeds)
      for (const Shape s : shapes) {
        if (s.d < 2) continue;  // two units need two features
        attn::Rng rng(seed);
        const ch04::UnitsProblem p = ch04::units_problem(s.n, s.d, 7, rng);
        // The whitened queries L x_q (d x m), up to the sign of each singular vector.
        const auto whitened = [&](const VectorXd& factors) {
          const MatrixXd D = factors.asDiagonal();
          return MatrixXd(attn::whitening_map(p.X * D) * (p.X_query * D).transpose());
        };
        const auto inner_products = [&](const VectorXd& factors) {
          const MatrixXd D = factors.asDiagonal();
          const MatrixXd keys = attn::whitening_map(p.X * D) * (p.X * D).transpose();
          return MatrixXd(whitened(factors).transpose() * keys);
        };
        const VectorXd amperes = VectorXd::Ones(s.d);
        // Feature 0 in mA, the others in A; and, for contrast, all of them in mA.
        VectorXd two_units = amperes;
        two_units(0) = 1e3;
        const VectorXd one_unit = VectorXd::Constant(s.d, 1e3);
        const double tol = tolerance(p.X) * gap_factor(p.X);
        // One unit for all features: L x is the same numbers (the unit cancels).
        CHECK(ch04::relative_change(whitened(one_unit).cwiseAbs(),
                                    whitened(amperes).cwiseAbs()) <= tol);
        // Two units: the axes of X D are not those of X, and L x changes by order one ...
        CHECK(ch04::relative_change(whitened(two_units).cwiseAbs(),
                                    whitened(amperes).cwiseAbs()) > 0.1);
        // ... while the inner products x_q^T (X^T X)^-1 x_j, the scores, stay the same.
        CHECK(ch04::relative_change(inner_products(two_units), inner_products(amperes)) <=
              tolerance(p.X * two_units.asDiagonal()));
      }
  }

  TEST_CASE("a change of units of x leaves least-squares predictions unchanged") {
    for (const auto seed : seeds)
      for (const Shape s : shapes) {
        attn::Rng rng(seed);
        const ch04::UnitsProblem p = ch04::units_problem(s.n, s.d, 11, rng);
        const VectorXd base = ch04::predict_in_units(p, 1.0, Method::least_squares).y;
        for (const double c : ch04::unit_grid(6, 2)) {
          CAPTURE(c);
          const VectorXd y = ch04::predict_in_units(p, c, Method::least_squares).y;
          CHECK(ch04::relative_change(y, base) <= tolerance(p.X));
        }
      }
  }

  TEST_CASE("scaling Y by a scales least-squares predictions by a") {
    for (const auto seed : seeds)
      for (const Shape s : shapes) {
        attn::Rng rng(seed);
        const ch04::UnitsProblem p = ch04::units_problem(s.n, s.d, 11, rng);
        const VectorXd base = p.X_query * attn::least_squares_qr(p.X, p.Y);
        for (const double a : factors) {
          CAPTURE(a);
          const VectorXd y = p.X_query * attn::least_squares_qr(p.X, a * p.Y);
          // Linear in Y: only the rounding of a Y and of the solve (kappa eps).
          CHECK(ch04::relative_change(y, a * base) <= tolerance(p.X));
        }
      }
  }
}
