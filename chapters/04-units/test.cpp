// Chapter 04 — every claim of the chapter, as a test named after the claim.
//
// The claims that units can be checked by the compiler are static_asserts here and
// compile-fail tests in compile_fail/ (ctest label compile-fail). The numerical claims
// loop over shapes, seeds and unit factors c. Tolerances: multiplying by c rounds every
// entry once (relative 2^-53), and least squares and the whitening map amplify a relative
// perturbation of X by at most about kappa(X)^2 (kappa(X) for a small residual); the data
// here have kappa(X) < 10, so each tolerance is a few hundred eps times kappa^2.

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
#include "sweep.hpp"

using ch04::Method;
using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;

namespace {

constexpr double eps = std::numeric_limits<double>::epsilon();

struct Shape {
  Index n, d;
};
const std::vector<Shape> shapes{{5, 1}, {20, 3}, {100, 10}, {300, 40}};
const std::vector<std::uint64_t> seeds{1, 2, 3};
const std::vector<double> factors{1e-6, 1e-3, 0.37, 2.0, 1e3, 1e6};

// Tolerance for a quantity computed from c X against the same from X: rounding of c X is
// amplified by at most kappa^2 (a few hundred eps for the arithmetic of the solve).
double tolerance(const MatrixXd& X) {
  const double k = attn::condition_number(X);
  return 300 * eps * k * k;
}

// sigma_max / (smallest gap between consecutive singular values of X), at least 1.
double gap_factor(const MatrixXd& X) {
  const VectorXd sv = attn::singular_values(X);
  double gap = sv(0);
  for (Index i = 1; i < sv.size(); ++i) gap = std::min(gap, sv(i - 1) - sv(i));
  return std::max(1.0, sv(0) / gap);
}

}  // namespace

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

  TEST_CASE("typed least squares carries V/A and computes the numbers of least_squares_qr" *
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

  TEST_CASE("unnormalised attention with fixed weights scales its predictions by c^2") {
    for (const auto seed : seeds)
      for (const Shape s : shapes) {
        attn::Rng rng(seed);
        const ch04::UnitsProblem p = ch04::units_problem(s.n, s.d, 9, rng);
        const VectorXd base = ch04::predict_in_units(p, 1.0, Method::id_attention).y;
        // At c = 1 these weights are least squares (chapter 03's theorem).
        CHECK(ch04::relative_change(
                  base, ch04::predict_in_units(p, 1.0, Method::least_squares).y) <=
              tolerance(p.X));
        for (const double c : factors) {
          CAPTURE(c);
          const VectorXd y = ch04::predict_in_units(p, c, Method::id_attention).y;
          // q^T M K^T Y with q, K scaled by c: c^2 times, up to a few roundings.
          CHECK(ch04::relative_change(y, c * c * base) <= 100 * eps * s.d);
        }
      }
  }

  TEST_CASE(
      "softmax logits scale by c^2 so a change of units is a change of temperature") {
    for (const auto seed : seeds)
      for (const Shape s : shapes) {
        attn::Rng rng(seed);
        const ch04::UnitsProblem p = ch04::units_problem(s.n, s.d, 9, rng);
        const attn::AttentionRegressor w =
            ch04::fixed_weights(p, 1.0, Method::softmax_attention);
        const MatrixXd S = p.X_query * w.W_q.transpose() * w.W_k * p.X.transpose();
        for (const double c : {1e-2, 0.37, 2.0, 10.0}) {
          CAPTURE(c);
          const MatrixXd Xc = c * p.X, Xqc = c * p.X_query;
          const MatrixXd Sc = Xqc * w.W_q.transpose() * w.W_k * Xc.transpose();
          // Logits c^2 S: a few roundings of numbers of size |S|.
          CHECK((Sc - c * c * S).cwiseAbs().maxCoeff() <=
                100 * eps * c * c * S.cwiseAbs().maxCoeff() * s.d);
          // The prediction is that of softmax(S / T) Y with temperature T = 1 / c^2.
          const VectorXd hot = attn::softmax_rows(S / (1 / (c * c))) * p.Y;
          const VectorXd y = ch04::predict_in_units(p, c, Method::softmax_attention).y;
          // Softmax's condition number is about the spread of the logits, here < 1e3.
          CHECK(ch04::relative_change(y, hot) <= 1e-12);
        }
      }
  }

  TEST_CASE("softmax attention with fixed weights goes from uniform (c to 0) to argmax") {
    attn::Rng rng(4);
    const ch04::UnitsProblem p = ch04::units_problem(100, 10, 30, rng);
    const double log_n = std::log(100.0);
    const ch04::Prediction cold =
        ch04::predict_in_units(p, 1e-4, Method::softmax_attention);
    const ch04::Prediction hot =
        ch04::predict_in_units(p, 1e4, Method::softmax_attention);
    // c = 1e-4: logits of size 1e-8, entropy log n - O(1e-16).
    CHECK(cold.entropy == doctest::Approx(log_n).epsilon(1e-12));
    CHECK(cold.y.isApprox(VectorXd::Constant(30, p.Y.mean()), 1e-6));
    // c = 1e4: logits 1e8 times apart, every query puts all its weight on its best key.
    CHECK(hot.max_weight == 1.0);
    CHECK(hot.entropy <= 1e-12);
    const attn::AttentionRegressor w =
        ch04::fixed_weights(p, 1.0, Method::softmax_attention);
    const MatrixXd S = p.X_query * w.W_q.transpose() * w.W_k * p.X.transpose();
    for (Index i = 0; i < 30; ++i) {
      Index best = 0;
      S.row(i).maxCoeff(&best);
      CHECK(hot.y(i) == p.Y(best));
    }
    // In between, the entropy falls monotonically as c grows (softmax of beta z has an
    // entropy that decreases in beta); allow one rounding of the flat end.
    double previous = INFINITY;
    for (const double c : ch04::unit_grid(4, 4)) {
      const double h = ch04::predict_in_units(p, c, Method::softmax_attention).entropy;
      CHECK(h <= previous + 1e-12);
      previous = h;
    }
  }

  TEST_CASE(
      "softmax attention with fixed weights changes its predictions with the unit") {
    for (const auto seed : seeds) {
      attn::Rng rng(seed);
      const ch04::UnitsProblem p = ch04::units_problem(100, 10, 20, rng);
      const VectorXd base = ch04::predict_in_units(p, 1.0, Method::softmax_attention).y;
      for (const double c : {1e-3, 1e3}) {
        CAPTURE(c);
        // Not a rounding effect: from mean-like to nearest-key-like, O(1) apart.
        CHECK(ch04::relative_change(
                  ch04::predict_in_units(p, c, Method::softmax_attention).y, base) > 0.1);
      }
    }
  }

  TEST_CASE("whitened softmax attention predicts the same in every unit") {
    for (const auto seed : seeds)
      for (const Shape s : shapes) {
        attn::Rng rng(seed);
        const ch04::UnitsProblem p = ch04::units_problem(s.n, s.d, 13, rng);
        const ch04::Prediction base =
            ch04::predict_in_units(p, 1.0, Method::whitened_attention);
        for (const double c : ch04::unit_grid(6, 2)) {
          CAPTURE(c);
          const ch04::Prediction pr =
              ch04::predict_in_units(p, c, Method::whitened_attention);
          // Scores of size up to ~sqrt(d) carry kappa^2 eps each; softmax and the
          // average keep that relative size.
          CHECK(ch04::relative_change(pr.y, base.y) <= 10 * tolerance(p.X) * s.d);
          CHECK(pr.entropy == doctest::Approx(base.entropy).epsilon(1e-12));
        }
      }
  }

  TEST_CASE("training softmax attention in A and in mA ends at different losses") {
    attn::ExperimentConfig config;
    config.n = 100;
    config.d = 10;
    config.h = attn::Normalisation::softmax;
    config.runs = 2;
    config.iterations = 200;
    config.seed = 5;
    const std::vector<attn::RunResult> amperes = attn::run_experiment(config);
    config.unit = 1e3;
    const std::vector<attn::RunResult> milliamperes = attn::run_experiment(config);
    for (std::size_t r = 0; r < amperes.size(); ++r) {
      CAPTURE(r);
      // Same data, same initial numbers: only the unit differs. In mA the scores start
      // 10^6 times larger, softmax is saturated, and the loss hardly moves.
      CHECK(milliamperes[r].ls_loss ==
            doctest::Approx(amperes[r].ls_loss).epsilon(1e-12));
      CHECK(milliamperes[r].loss.back() > 10 * amperes[r].loss.back());
      CHECK(milliamperes[r].loss.back() > 0.5 * milliamperes[r].loss.front());
    }
  }

  TEST_CASE("training whitened softmax attention ends at the same loss in A, mA and kA") {
    attn::ExperimentConfig config;
    config.n = 100;
    config.d = 10;
    config.h = attn::Normalisation::softmax;
    config.runs = 2;
    config.iterations = 200;
    config.seed = 5;
    config.whiten = true;
    const std::vector<attn::RunResult> amperes = attn::run_experiment(config);
    for (const double unit : {1e3, 1e-3}) {
      config.unit = unit;
      const std::vector<attn::RunResult> other = attn::run_experiment(config);
      for (std::size_t r = 0; r < amperes.size(); ++r) {
        CAPTURE(unit);
        CAPTURE(r);
        // The features X L^T agree to kappa^2 eps; 200 Adam steps amplify that to
        // ~1e-13 in practice, far below the factor 10 of the unwhitened system.
        CHECK(other[r].loss.back() ==
              doctest::Approx(amperes[r].loss.back()).epsilon(1e-9));
        CHECK(other[r].test_loss == doctest::Approx(amperes[r].test_loss).epsilon(1e-9));
      }
      // And it learns: the final loss is well below the first.
      CHECK(amperes[0].loss.back() < 0.2 * amperes[0].loss.front());
    }
  }

  TEST_CASE("LayerNorm is scale-invariant only up to its epsilon") {
    for (const auto seed : seeds) {
      attn::Rng rng(seed);
      const ch04::UnitsProblem p = ch04::units_problem(50, 8, 1, rng);
      for (const double eps0 : {1e-5, 1e-3}) {
        for (const double c : {1e-5, 1e-4, 1e-3, 1e-2, 0.5, 3.0, 1e3}) {
          CAPTURE(c);
          CAPTURE(eps0);
          // The formula (x - mean) / sqrt(s^2 + eps0 / c^2), row by row; agreement to
          // the rounding of a change that may be as small as 1e-9.
          const double measured = ch04::layer_norm_change(p.X, c, eps0);
          const double formula = ch04::layer_norm_change_formula(p.X, c, eps0);
          CHECK(std::abs(measured - formula) <= 1e-6 * formula + 1e-12);
        }
        // Far from eps: invariant to ~eps0 / s^2; near and below: it is not.
        CHECK(ch04::layer_norm_change(p.X, 1e3, eps0) <= eps0);
        CHECK(ch04::layer_norm_change(p.X, 1e-5, eps0) > 0.5);
      }
      // With eps0 = 0 it would be exact; the library refuses eps0 <= 0 instead.
      CHECK_THROWS_AS(ch04::layer_norm_change(p.X, 1.0, 0.0), std::invalid_argument);
    }
  }
}
