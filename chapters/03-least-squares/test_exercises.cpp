// Chapter 03 — tests of exercise 03.1 (the hat matrix, attn::hat_matrix in
// code/src/hat_matrix.cpp). Run them with `ctest -L ex03.1`.

#include <doctest/doctest.h>

#include "attn/least_squares.hpp"
#include "attn/random.hpp"

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;

namespace {
struct Shape {
  Index n, d;
};
constexpr Shape shapes[] = {{5, 1}, {8, 3}, {30, 4}, {60, 10}};
}  // namespace

TEST_CASE("the hat matrix is symmetric, idempotent and has trace d" *
          doctest::test_suite("ex03.1")) {
  attn::Rng rng(631);
  for (const Shape s : shapes) {
    CAPTURE(s.n);
    CAPTURE(s.d);
    const MatrixXd X = attn::random_normal(s.n, s.d, rng);
    const MatrixXd H = attn::hat_matrix(X);
    REQUIRE(H.rows() == s.n);
    REQUIRE(H.cols() == s.n);
    CHECK((H - H.transpose()).cwiseAbs().maxCoeff() < 1e-14);  // |H_ij| <= 1: a few eps
    // H H = H: sums of n products of entries <= 1 in size: n eps.
    CHECK((H * H - H).cwiseAbs().maxCoeff() < 1e-13);
    CHECK(H.trace() == doctest::Approx(static_cast<double>(s.d)).epsilon(1e-12));
  }
}

TEST_CASE("the hat matrix maps Y to the least-squares fit" * doctest::test_suite("ex03.1")) {
  attn::Rng rng(632);
  for (const Shape s : shapes) {
    const MatrixXd X = attn::random_normal(s.n, s.d, rng);
    const VectorXd Y = attn::random_normal(s.n, 1, rng);
    const VectorXd fit = X * attn::least_squares_qr(X, Y);
    // kappa(X) of a Gaussian matrix is small here (<~ 30): errors of ~kappa * n * eps.
    CHECK((attn::hat_matrix(X) * Y - fit).cwiseAbs().maxCoeff() < 1e-12);
  }
}

TEST_CASE("the hat matrix stays a projection onto the columns of an ill-conditioned X" *
          doctest::test_suite("ex03.1")) {
  attn::Rng rng(635);
  // kappa(X) = 1e6: Householder QR gives an orthonormal Q_1 whatever kappa, so H X = X and
  // H H = H hold to rounding (n eps); the normal equations, X (X^T X)^-1 X^T, lose
  // kappa^2 eps = 1e-4 of them.
  const MatrixXd X = attn::matrix_with_condition(40, 5, 1e6, rng);
  const MatrixXd H = attn::hat_matrix(X);
  REQUIRE(H.rows() == 40);
  REQUIRE(H.cols() == 40);
  CHECK((H * X - X).cwiseAbs().maxCoeff() < 1e-12 * X.cwiseAbs().maxCoeff());
  CHECK((H * H - H).cwiseAbs().maxCoeff() < 1e-13);
  CHECK(H.trace() == doctest::Approx(5.0).epsilon(1e-12));
}

TEST_CASE("the hat matrix is the same at every scale of X, even near overflow" *
          doctest::test_suite("ex03.1")) {
  // H(sX) = H(X): H depends on the span of the columns only. At s = 1e+-200 a factorisation
  // that squares the entries of X as they are overflows or underflows (a false "numerical
  // rank 0", or NaN); hat_matrix scales X by a power of two before the solution region, so
  // any right answer passes. Entries of H are <= 1, a few eps each.
  attn::Rng rng(636);
  const MatrixXd X = attn::random_normal(30, 4, rng);
  const MatrixXd H = attn::hat_matrix(X);
  for (const double s : {1e-300, 1e-200, 1e200, 1e300}) {
    CAPTURE(s);
    CHECK((attn::hat_matrix(s * X) - H).cwiseAbs().maxCoeff() < 1e-13);
  }
}

// BEGIN HIDDEN TESTS 03.1
TEST_CASE("the hat matrix depends only on the column space of X" *
          doctest::test_suite("ex03.1")) {
  attn::Rng rng(633);
  for (const Shape s : shapes) {
    const MatrixXd X = attn::random_normal(s.n, s.d, rng);
    // X A has the same columns space for an invertible A (I + small: well conditioned).
    const MatrixXd A = MatrixXd::Identity(s.d, s.d) + 0.3 * attn::random_normal(s.d, s.d, rng);
    CHECK((attn::hat_matrix(X * A) - attn::hat_matrix(X)).cwiseAbs().maxCoeff() < 1e-12);
  }
}

TEST_CASE("the residual maker I - H annihilates the columns of X" *
          doctest::test_suite("ex03.1")) {
  attn::Rng rng(634);
  const MatrixXd X = attn::random_normal(20, 3, rng);
  const MatrixXd R = MatrixXd::Identity(20, 20) - attn::hat_matrix(X);
  CHECK((R * X).cwiseAbs().maxCoeff() < 1e-13 * X.cwiseAbs().maxCoeff() * 20);
}
// END HIDDEN TESTS
