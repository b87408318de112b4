// Chapter 04 — every claim of the chapter about units in attention, training and LayerNorm,
// as a test named after the claim.
//
// The numerical claims loop over shapes, seeds and unit factors c. Tolerances: multiplying
// by c rounds every entry once (relative 2^-53), and least squares and the whitening map
// amplify a relative perturbation of X by at most about kappa(X)^2 (kappa(X) for a small
// residual); the data here have kappa(X) < 10, so each tolerance is a few hundred eps times
// kappa^2.

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
#include "experiments/regression_experiment.hpp"
#include "test_helpers.hpp"

using ch04::Method;
using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;
using namespace ch04_test;

namespace {

// The training runs both unit tests compare: softmax attention, (n, d) = (100, 10), two runs
// of 200 Adam iterations from seed 5.
experiments::ExperimentConfig small_softmax_training() {
  experiments::ExperimentConfig config;
  config.n = 100;
  config.d = 10;
  config.h = attn::Normalisation::softmax;
  config.runs = 2;
  config.iterations = 200;
  config.seed = 5;
  return config;
}

}  // namespace

TEST_SUITE("ch04") {
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
      "unnormalised attention's held-out error tends to the mean square of the outputs in "
      "large units and grows like c^4 in small ones") {
    for (const auto seed : seeds) {
      attn::Rng rng(seed);
      const ch04::UnitsProblem p = ch04::units_problem(100, 10, 50, rng);
      const VectorXd y_ls = ch04::predict_in_units(p, 1.0, Method::least_squares).y;
      const double m = double(p.Y_query.size());
      const auto mse = [&](const VectorXd& y) { return (y - p.Y_query).squaredNorm() / m; };
      const double mean_square_outputs = p.Y_query.squaredNorm() / m;
      const double mean_square_ls = y_ls.squaredNorm() / m;
      for (const double c : ch04::unit_grid(4, 2)) {
        CAPTURE(c);
        const double error = mse(ch04::predict_in_units(p, c, Method::id_attention).y);
        // The prediction is c^2 y_LS, so the error is the mean of (c^2 y_LS - y)^2.
        CHECK(error == doctest::Approx(mse(c * c * y_ls)).epsilon(1e-10));
        // Large units (c << 1): the prediction tends to 0, the error to the mean square of
        // the outputs, not to c^4 times the error in amperes.
        if (c <= 1e-2) {
          CHECK(error == doctest::Approx(mean_square_outputs).epsilon(4 * c * c));
          CHECK(error > 1e3 * std::pow(c, 4) * mse(y_ls));
        }
        // Small units (c >> 1): the error grows like c^4, times the mean square of y_LS.
        if (c >= 1e2)
          CHECK(error / std::pow(c, 4) ==
                doctest::Approx(mean_square_ls).epsilon(4 / (c * c)));
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
        const MatrixXd S = p.X_query * w.W_Q * w.W_K.transpose() * p.X.transpose();
        for (const double c : {1e-2, 0.37, 2.0, 10.0}) {
          CAPTURE(c);
          const MatrixXd Xc = c * p.X, Xqc = c * p.X_query;
          const MatrixXd Sc = Xqc * w.W_Q * w.W_K.transpose() * Xc.transpose();
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
    const MatrixXd S = p.X_query * w.W_Q * w.W_K.transpose() * p.X.transpose();
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

  TEST_CASE(
      "two attention systems keep the numbers of their weights in every unit, whitened "
      "attention divides them by c and keeps its attention weights") {
    for (const auto seed : seeds)
      for (const Shape s : shapes) {
        attn::Rng rng(seed);
        const ch04::UnitsProblem p = ch04::units_problem(s.n, s.d, 13, rng);
        const auto product = [&](double c, Method m) {  // W_Q W_K^T as numbers in the unit
          const attn::AttentionRegressor w = ch04::fixed_weights(p, c, m);
          return MatrixXd(w.W_Q * w.W_K.transpose());
        };
        const MatrixXd A = ch04::softmax_weights_in_units(p, 1.0, Method::whitened_attention);
        for (const double c : factors) {
          CAPTURE(c);
          // Chosen once, for amperes: the same numbers whatever the unit.
          CHECK(product(c, Method::id_attention) == product(1.0, Method::id_attention));
          CHECK(product(c, Method::softmax_attention) ==
                product(1.0, Method::softmax_attention));
          // Recomputed from the data in the unit: W_Q W_K^T carries A^-2, its numbers
          // are divided by c^2, and the softmax weights stay the same.
          CHECK(attn::relative_error(c * c * product(c, Method::whitened_attention),
                                     product(1.0, Method::whitened_attention)) <=
                tolerance(p.X));
          const MatrixXd Ac = ch04::softmax_weights_in_units(p, c, Method::whitened_attention);
          CHECK((Ac - A).cwiseAbs().maxCoeff() <= 10 * tolerance(p.X) * s.d);
        }
        // Least squares has no attention weights.
        CHECK_THROWS_AS(ch04::fixed_weights(p, 1.0, Method::least_squares),
                        std::invalid_argument);
      }
  }

  TEST_CASE("training softmax attention in A and in mA ends at different losses") {
    experiments::ExperimentConfig config = small_softmax_training();
    const std::vector<experiments::RunResult> amperes =
        experiments::run_experiment(config);
    config.inputs = ch04::in_unit(1e3);
    const std::vector<experiments::RunResult> milliamperes =
        experiments::run_experiment(config);
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
    experiments::ExperimentConfig config = small_softmax_training();
    config.features = ch04::whitening_features;
    const std::vector<experiments::RunResult> amperes =
        experiments::run_experiment(config);
    for (const double unit : {1e3, 1e-3}) {
      config.inputs = ch04::in_unit(unit);
      const std::vector<experiments::RunResult> other =
          experiments::run_experiment(config);
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
