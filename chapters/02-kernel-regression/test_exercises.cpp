// Chapter 02 — tests of exercise 02.6 (leave-one-out predictions, attn::nw_loo_predictions in
// code/src/nw_loo_predictions.cpp). Run them with `ctest -L ex02.6`.

#include <doctest/doctest.h>

#include <cmath>

#include "attn/kernel_regression.hpp"
#include "attn/random.hpp"

using Eigen::Index;
using Eigen::MatrixXd;

namespace {

// The prediction at x_i of the smoother refitted without point i.
MatrixXd refit_without(const MatrixXd& X, const MatrixXd& Y, attn::Kernel kernel, double h,
                       Index i) {
  const Index n = X.rows();
  MatrixXd X1(n - 1, X.cols()), Y1(n - 1, Y.cols());
  for (Index j = 0, r = 0; j < n; ++j)
    if (j != i) {
      X1.row(r) = X.row(j);
      Y1.row(r++) = Y.row(j);
    }
  return attn::nadaraya_watson(X.row(i), X1, Y1, kernel, h);
}

}  // namespace

TEST_CASE("leave-one-out predictions equal the smoother refitted without each point" *
          doctest::test_suite("ex02.6")) {
  attn::Rng rng(621);
  for (const attn::Kernel kernel : {attn::Kernel::gaussian, attn::Kernel::epanechnikov}) {
    const MatrixXd X = attn::random_uniform(40, 1, rng, 0.0, 1.0);
    const MatrixXd Y = attn::random_normal(40, 2, rng);
    const MatrixXd P = attn::nw_loo_predictions(X, Y, kernel, 0.3);
    REQUIRE(P.rows() == 40);
    REQUIRE(P.cols() == 2);
    // Both are weighted means of the same numbers with the same weights, computed in a
    // different order: a few eps times |Y| <= ~4.
    for (Index i = 0; i < X.rows(); ++i)
      CHECK((P.row(i) - refit_without(X, Y, kernel, 0.3, i)).cwiseAbs().maxCoeff() < 1e-13);
  }
}

TEST_CASE("a leave-one-out prediction does not depend on the point's own target" *
          doctest::test_suite("ex02.6")) {
  attn::Rng rng(622);
  const MatrixXd X = attn::random_uniform(25, 2, rng, -1.0, 1.0);
  MatrixXd Y = attn::random_normal(25, 1, rng);
  const MatrixXd P = attn::nw_loo_predictions(X, Y, attn::Kernel::gaussian, 0.5);
  Y(7, 0) = 1e6;
  const MatrixXd P2 = attn::nw_loo_predictions(X, Y, attn::Kernel::gaussian, 0.5);
  CHECK(P2(7, 0) == P(7, 0));  // point 7's own weight is exactly 0: 0 * 1e6 = 0
  CHECK(std::abs(P2(3, 0) - P(3, 0)) > 0.0);  // the others do see it
}

TEST_CASE("with a narrow Gaussian each point gets the label of its nearest other point" *
          doctest::test_suite("ex02.6")) {
  // h = 0.001 and points 1 or more apart: every logit is -(distance / h)^2 / 2 <= -5e5, so
  // every kernel value underflows to 0 unless each row's largest logit is subtracted first
  // (the stable softmax). Then the nearest other point has weight 1 and the next one
  // e^-(1.5e6) = 0: the nearest label exactly.
  MatrixXd X(4, 1), Y(4, 1);
  X << 0.0, 1.0, 3.0, 7.0;
  Y << 10.0, 20.0, 30.0, 40.0;
  const MatrixXd P = attn::nw_loo_predictions(X, Y, attn::Kernel::gaussian, 1e-3);
  CHECK(P(0, 0) == 20.0);
  CHECK(P(1, 0) == 10.0);
  CHECK(P(2, 0) == 20.0);
  CHECK(P(3, 0) == 30.0);
}

// BEGIN HIDDEN TESTS 02.6
TEST_CASE("box-kernel leave-one-out is the mean of the other points in the window" *
          doctest::test_suite("ex02.6")) {
  MatrixXd X(5, 1), Y(5, 1);
  X << 0.0, 0.1, 0.2, 0.9, 1.0;
  Y << 1.0, 2.0, 4.0, 8.0, 16.0;
  const MatrixXd P = attn::nw_loo_predictions(X, Y, attn::Kernel::box, 0.15);
  // Windows of half-width 0.15 around each point, without the point itself; each is a
  // mean of at most two numbers: one rounding.
  CHECK(P(0, 0) == doctest::Approx(2.0).epsilon(1e-15));
  CHECK(P(1, 0) == doctest::Approx(2.5).epsilon(1e-15));
  CHECK(P(2, 0) == doctest::Approx(2.0).epsilon(1e-15));
  CHECK(P(3, 0) == doctest::Approx(16.0).epsilon(1e-15));
  CHECK(P(4, 0) == doctest::Approx(8.0).epsilon(1e-15));
}
// END HIDDEN TESTS
