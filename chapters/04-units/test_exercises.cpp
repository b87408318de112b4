// Chapter 04 — tests of exercise 04.6 (the size of a unit, attn::unit_factor in
// code/src/unit_factor.cpp, which attn::from_units and attn::in_units use). Run them with
// `ctest -L ex04.6`.

#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "attn/random.hpp"
#include "attn/units.hpp"

using Eigen::MatrixXd;

namespace {
constexpr double eps = std::numeric_limits<double>::epsilon();
}  // namespace

TEST_CASE("numbers in milliamperes become amperes divided by 1000" *
          doctest::test_suite("ex04.6")) {
  MatrixXd n(2, 2);
  n << 1000.0, -250.0, 4.0, 0.0;
  const auto I = attn::from_units<1, 0>(n, 1e-3);  // mA: a = 1e-3
  // One multiplication per entry: one rounding.
  CHECK(I.si_value()(0, 0) == doctest::Approx(1.0).epsilon(1e-15));
  CHECK(I.si_value()(0, 1) == doctest::Approx(-0.25).epsilon(1e-15));
  CHECK(I.si_value()(1, 0) == doctest::Approx(0.004).epsilon(1e-15));
  CHECK(I.si_value()(1, 1) == 0.0);
}

TEST_CASE("in_units undoes from_units in every unit" * doctest::test_suite("ex04.6")) {
  attn::Rng rng(641);
  const MatrixXd n = attn::random_normal(4, 3, rng);
  for (const double a : {1e-3, 1.0, 1e3})
    for (const double v : {1e-6, 1.0, 7.5}) {
      CAPTURE(a);
      CAPTURE(v);
      const auto q = attn::from_units<2, -1>(n, a, v);
      // The way there is a^2 / v (so that a round trip through any wrong factor that is
      // not 0 cannot pass): a^2 v^-1 computed two ways and one product, a few roundings.
      CHECK((q.si_value() - n * (a * a / v)).cwiseAbs().maxCoeff() <=
            8 * eps * n.cwiseAbs().maxCoeff() * a * a / v);
      // A multiplication then a division by the same factor a^A v^V: two roundings.
      CHECK((attn::in_units(q, a, v) - n).cwiseAbs().maxCoeff() <
            4e-16 * n.cwiseAbs().maxCoeff());
    }
}

TEST_CASE("a volt prefix counts too, raised to the volt exponent" *
          doctest::test_suite("ex04.6")) {
  MatrixXd n(1, 1);
  n << 5.0;
  // 5 mV = 0.005 V; 5 kV/mA = 5e6 ohm; 5 per square kilovolt = 5e-6 per square volt.
  // Each is a product of prefixes that are not binary fractions: a few roundings.
  CHECK(attn::from_units<0, 1>(n, 1.0, 1e-3).si_value()(0, 0) ==
        doctest::Approx(5e-3).epsilon(4 * eps));
  CHECK(attn::from_units<-1, 1>(n, 1e-3, 1e3).si_value()(0, 0) ==
        doctest::Approx(5e6).epsilon(4 * eps));
  CHECK(attn::from_units<0, -2>(n, 1.0, 1e3).si_value()(0, 0) ==
        doctest::Approx(5e-6).epsilon(4 * eps));
  // And back: 0.005 V is 5 in millivolts.
  const auto U = attn::from_units<0, 1>(n, 1.0, 1e-3);
  CHECK(attn::in_units(U, 1.0, 1e-3)(0, 0) == doctest::Approx(5.0).epsilon(4 * eps));
}

TEST_CASE("the size of a unit is right even when a prefix's power alone is out of range" *
          doctest::test_suite("ex04.6")) {
  // (1e-200 A)^3 (1e200 V)^3 is about 1 SI unit, but (1e-200)^3 underflows to 0 and
  // (1e200)^3 overflows to inf: the powers taken apart multiply to NaN (or to 0, or inf).
  // Each reference multiplies the prefixes first (one rounding, no power out of range); the
  // factor itself takes a few more roundings: 16 eps, relative.
  CHECK(attn::unit_factor(3, 3, 1e-200, 1e200) ==
        doctest::Approx(std::pow(1e-200 * 1e200, 3)).epsilon(16 * eps));
  CHECK(attn::unit_factor(-2, -2, 1e-160, 1e160) ==
        doctest::Approx(std::pow(1e-160 * 1e160, -2)).epsilon(16 * eps));
  CHECK(attn::unit_factor(2, -1, 1e-200, 1e-300) ==
        doctest::Approx(1e-200 * (1e-200 / 1e-300)).epsilon(16 * eps));
  CHECK(attn::unit_factor(-3, 1, 1e120, 1e300) ==
        doctest::Approx(1e300 / 1e120 / 1e120 / 1e120).epsilon(16 * eps));
}

// BEGIN HIDDEN TESTS 04.6
TEST_CASE("an ohm is a volt per ampere, whatever the prefixes of both" *
          doctest::test_suite("ex04.6")) {
  MatrixXd n(1, 1);
  n << 5.0;
  // 5 mV / mA = 5 ohm; 5 V / kA = 5 milliohm.
  CHECK(attn::from_units<-1, 1>(n, 1e-3, 1e-3).si_value()(0, 0) ==
        doctest::Approx(5.0).epsilon(1e-15));
  CHECK(attn::from_units<-1, 1>(n, 1e3, 1.0).si_value()(0, 0) ==
        doctest::Approx(5e-3).epsilon(1e-15));
  const auto R = attn::from_units<-1, 1>(n);
  CHECK(attn::in_units(R, 1e-3, 1.0)(0, 0) == doctest::Approx(5e-3).epsilon(1e-15));
}

TEST_CASE("the size of a unit is each prefix raised to its exponent" *
          doctest::test_suite("ex04.6")) {
  // Powers of 2: every product below is exact.
  CHECK(attn::unit_factor(0, 0, 8.0, 0.5) == 1.0);
  CHECK(attn::unit_factor(-2, 3, 2.0, 4.0) == 16.0);
  CHECK(attn::unit_factor(1, -1, 0.25, 0.5) == 0.5);
}
// END HIDDEN TESTS
