// Chapter 04 — what a change of units does to least squares (the typed quantities are in
// test.cpp, attention and training in test_attention.cpp).
//
// The claims loop over shapes, seeds and unit factors c. Tolerances: multiplying by c rounds
// every entry once (relative 2^-53), and least squares and the whitening map amplify a
// relative perturbation of X by at most about kappa(X)^2 (kappa(X) for a small residual); the
// data here have kappa(X) < 10, so each tolerance is a few hundred eps times kappa^2.

#include <doctest/doctest.h>

#include "attn/least_squares.hpp"
#include "attn/random.hpp"
#include "ch04.hpp"
#include "test_helpers.hpp"

using ch04::Method;
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
