// Chapter 04 — every claim of the chapter about units in least squares, as a test named
// after the claim: the typed quantities here, what a change of units does to least squares
// in test_scaling.cpp, attention and training in test_attention.cpp.
//
// The claims that units can be checked by the compiler are static_asserts here and
// compile-fail tests in compile_fail/ (ctest label compile-fail). Tolerances: see
// test_helpers.hpp.

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "attn/attention_regression.hpp"
#include "attn/least_squares.hpp"
#include "attn/random.hpp"
#include "attn/softmax.hpp"
#include "attn/svd.hpp"
#include "attn/units.hpp"
#include "ch04.hpp"
#include "test_helpers.hpp"

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;
using namespace ch04_test;

TEST_SUITE("ch04") {
  TEST_CASE("products add unit exponents, inverses negate them, transposes keep them") {
    using attn::Quantity;
    const attn::Amperes X(MatrixXd::Identity(3, 3) * 2.0);
    const attn::Volts Y(MatrixXd::Ones(3, 1));
    const auto XtX = X.transpose() * X;
    const auto XtX_inv = XtX.inverse();
    const auto ratio = XtX_inv * X.transpose() * Y;
    static_assert(std::is_same_v<decltype(XtX), const Quantity<2, 0>>);
    static_assert(std::is_same_v<decltype(XtX_inv), const Quantity<-2, 0>>);
    static_assert(std::is_same_v<decltype(X.transpose()), Quantity<1, 0>>);
    static_assert(std::is_same_v<decltype(ratio), const Quantity<-1, 1>>);
    static_assert(std::is_same_v<decltype(attn::whitening_map(X)), Quantity<-1, 0>>);
    static_assert(
        std::is_same_v<decltype(attn::softmax_rows(XtX_inv * XtX)), attn::Dimensionless>);
    // The numbers are Eigen's: (2I)^T (2I) = 4I, its inverse I/4, and I/4 * 2I * 1 = 1/2.
    CHECK((XtX.si_value() - 4 * MatrixXd::Identity(3, 3)).norm() == 0);
    CHECK((XtX_inv.si_value() - 0.25 * MatrixXd::Identity(3, 3)).norm() <= 4 * eps);
    CHECK((ratio.si_value() - 0.5 * MatrixXd::Ones(3, 1)).norm() <= 4 * eps);
    CHECK_THROWS_AS(attn::Amperes(MatrixXd::Zero(2, 2)).inverse(), std::invalid_argument);
    CHECK_THROWS_AS(attn::Amperes(MatrixXd::Ones(2, 3)).inverse(), std::invalid_argument);
  }

  TEST_CASE(
      "typed least squares carries V/A and computes the numbers of least_squares_qr" *
      doctest::test_suite("ex04.6")) {
    for (const auto seed : seeds) {
      attn::Rng rng(seed);
      const ch04::UnitsProblem p = ch04::units_problem(40, 4, 7, rng);
      const attn::Amperes X = attn::from_units<1, 0>(p.X);
      const attn::Volts Y = attn::from_units<0, 1>(p.Y);
      const auto beta = attn::least_squares(X, Y);
      static_assert(std::is_same_v<decltype(beta), const attn::Quantity<-1, 1>>);
      const attn::Volts y = attn::from_units<1, 0>(p.X_query) * beta;
      // The same solve; the typed product is a matrix-matrix product where the plain one
      // is matrix-vector, so the last bits may round differently (d terms per entry).
      const VectorXd plain = p.X_query * attn::least_squares_qr(p.X, p.Y);
      CHECK(ch04::relative_change(y.si_value().col(0), plain) <= 8 * eps);
      // Entering the currents in mA gives the same quantity (one rounding of X * 1000).
      const attn::Amperes X_mA = attn::from_units<1, 0>(1e3 * p.X, 1e-3);
      CHECK(attn::relative_error(X_mA.si_value(), p.X) <= 2 * eps);
      // 1 V/A = 0.001 V/mA: in milliamperes the coefficients are 1000 times smaller.
      CHECK(attn::in_units(beta, 1e-3).isApprox(beta.si_value() * 1e-3, 2 * eps));
    }
  }
}
