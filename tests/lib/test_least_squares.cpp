// Library tests: least squares and the singular values are right at every scale of X (the
// hat matrix, exercise 03.1, is tested the same way in chapters/03-least-squares/
// test_exercises.cpp: a student copy's stub would fail here). A Householder step squares the entries of a column: without scaling first, X
// with entries near 1e-160 or 1e160 gives a wrong hat matrix, a false "numerical rank 0" or
// NaN, although the answers are representable and the SVD gets them right.
//
// Each function is compared with its value for the same X at scale 1, scaled as the
// mathematics says: beta(sX, Y) = beta(X, Y) / s, sigma(sX) = s sigma(X),
// kappa(sX) = kappa(X). X is 30 x 4 and well conditioned (kappa about 2), so every answer is
// accurate to a few eps; 1e-12 (relative) leaves ample room and a wrong answer misses by far
// more (the unscaled factorisation is off by 100 % or NaN).
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "attn/least_squares.hpp"
#include "attn/random.hpp"
#include "attn/svd.hpp"

namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;

double relative_error(const MatrixXd& got, const MatrixXd& want) {
  return (got - want).cwiseAbs().maxCoeff() / want.cwiseAbs().maxCoeff();
}

}  // namespace

TEST_SUITE("lib") {
  TEST_CASE("least squares and the singular values are right at every scale") {
    attn::Rng rng(3);
    const MatrixXd X = attn::random_normal(30, 4, rng) + MatrixXd::Constant(30, 4, 0.1);
    const VectorXd Y = attn::random_normal(30, 1, rng);
    const VectorXd beta = attn::least_squares_qr(X, Y);
    const VectorXd sv = attn::singular_values(X);
    const double kappa = attn::condition_number(X);
    for (const double s : std::vector<double>{1e-300, 1e-200, 1e-160, 1e160, 1e200, 1e300}) {
      CAPTURE(s);
      const MatrixXd sX = s * X;
      CHECK(relative_error(attn::least_squares_qr(sX, Y) * s, beta) < 1e-12);
      CHECK(relative_error(attn::least_squares_svd(sX, Y) * s, beta) < 1e-12);
      CHECK(relative_error(attn::least_squares_normal_equations(sX, Y) * s, beta) < 1e-12);
      CHECK(relative_error(attn::singular_values(sX) / s, sv) < 1e-12);
      CHECK(std::abs(attn::condition_number(sX) / kappa - 1) < 1e-12);
      CHECK(relative_error(attn::whitening_map(sX) * s, attn::whitening_map(X)) < 1e-12);
    }
  }
}
