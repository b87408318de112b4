// Chapter 01 — every claim of the chapter about softmax, its Jacobian and its entropy, as a
// test named after the claim.
//
// Tolerances: softmax and attention are well conditioned in these tests (logits of order
// 1-10, matrices of at most 64 x 64), so exact identities are checked to a small multiple
// of machine epsilon times the size of the numbers involved; each tolerance says why next
// to it. Statistical claims use fixed seeds and bounds of a few standard errors that a
// wrong formula would miss by far.

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "attn/random.hpp"
#include "attn/softmax.hpp"
#include "test_helpers.hpp"

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;
using namespace ch01_test;

TEST_SUITE("ch01") {
  TEST_CASE("softmax rows are non-negative and sum to 1") {
    for (const auto seed : seeds)
      for (const auto [n, d] : shapes) {
        attn::Rng rng(seed);
        const MatrixXd Z = attn::random_normal(n, d, rng, 10.0);
        const MatrixXd P = attn::softmax_rows(Z);
        CHECK(P.minCoeff() >= 0.0);
        // A sum of d terms in [0, 1], each rounded once: error below d * eps.
        CHECK((P.rowwise().sum().array() - 1.0).abs().maxCoeff() <= (d + 1) * eps);
      }
  }

  TEST_CASE("softmax is invariant to adding a constant to a row") {
    for (const auto seed : seeds)
      for (const auto [n, d] : shapes) {
        attn::Rng rng(seed);
        const MatrixXd Z = attn::random_normal(n, d, rng, 3.0);
        const VectorXd shift =
            attn::random_normal(n, 1, rng, 1000.0);  // a different constant per row
        const MatrixXd P = attn::softmax_rows(Z);
        const MatrixXd P_shifted = attn::softmax_rows(Z.colwise() + shift);
        // Adding c ~ 1000 rounds each logit by up to ulp(1000) ~ 1.1e-13; exp turns that
        // into a relative error of the same size in each weight.
        CHECK(max_abs(P - P_shifted) <= 1e-12);
      }
  }

  TEST_CASE("softmax is stable for logits of +-1e4") {
    const VectorXd z{{1e4, 1e4 - 1, -1e4, 1e4}};
    const VectorXd p =
        attn::softmax(z);  // naive exp(1e4) overflows to inf, and inf/inf is NaN
    CHECK(p.allFinite());
    const double e = std::exp(-1.0);
    CHECK(p(0) == doctest::Approx(1 / (2 + e)).epsilon(1e-15));
    CHECK(p(1) == doctest::Approx(e / (2 + e)).epsilon(1e-15));
    CHECK(
        p(2) ==
        0.0);  // e^{-2e4} underflows to 0, which is its correct value to double precision
    const VectorXd low = attn::softmax(VectorXd::Constant(5, -1e4));
    CHECK((low.array() - 0.2).abs().maxCoeff() <= 2 * eps);
  }

  TEST_CASE("a fully masked row is an error, not NaN") {
    const double inf = std::numeric_limits<double>::infinity();
    MatrixXd Z{{0.0, -inf}, {-inf, -inf}};
    CHECK_THROWS_WITH_AS(attn::softmax_rows(Z),
                         doctest::Contains("row 1 is fully masked"),
                         std::invalid_argument);
    // A partly masked row is fine: the masked entry gets weight exactly 0.
    const MatrixXd P = attn::softmax_rows(Z.topRows(1));
    CHECK(P(0, 0) == 1.0);
    CHECK(P(0, 1) == 0.0);
  }

  TEST_CASE("the softmax Jacobian is diag(p) - p p^T (checked by central differences)") {
    for (const auto seed : seeds)
      for (const Index n : {1, 2, 7, 20}) {
        attn::Rng rng(seed);
        const VectorXd z = attn::random_normal(n, 1, rng, 2.0);
        const MatrixXd J = attn::softmax_jacobian(attn::softmax(z));
        const double h = 1e-5;
        MatrixXd J_fd(n, n);
        for (Index j = 0; j < n; ++j) {
          VectorXd zp = z, zm = z;
          zp(j) += h;
          zm(j) -= h;
          J_fd.col(j) = (attn::softmax(zp) - attn::softmax(zm)) / (2 * h);
        }
        // Central differences: truncation ~h^2 |p'''| <= 1e-10, rounding ~eps/h ~ 2e-11.
        CHECK(max_abs(J - J_fd) <= 1e-8);
        // Symmetric and positive semi-definite: u^T J u = Var_p(u) >= 0.
        CHECK(max_abs(J - J.transpose()) == 0.0);
        CHECK(Eigen::SelfAdjointEigenSolver<MatrixXd>(J).eigenvalues().minCoeff() >=
              -1e-15);
      }
  }

  TEST_CASE("the softmax Jacobian vanishes as the logit scale grows") {
    for (const auto seed : seeds) {
      attn::Rng rng(seed);
      const Index n = 10;
      VectorXd z = attn::random_normal(n, 1, rng);
      Index top = 0;
      z.maxCoeff(&top);
      z(top) += 1.0;  // a gap g >= 1 between the largest logit and the rest
      double previous = std::numeric_limits<double>::infinity();
      for (const double s : {2.0, 5.0, 10.0, 20.0, 50.0, 100.0}) {
        const MatrixXd J = attn::softmax_jacobian(attn::softmax(s * z));
        const double norm =
            Eigen::SelfAdjointEigenSolver<MatrixXd>(J, Eigen::EigenvaluesOnly)
                .eigenvalues()
                .maxCoeff();
        // J is positive semi-definite, so ||J||_2 <= trace J = sum p_i (1 - p_i), which
        // is <= 2 (1 - p_top), and 1 - p_top <= (n - 1) e^{-s g} with the gap g >= 1.
        CAPTURE(s);
        CHECK(norm <= 2.0 * (n - 1) * std::exp(-s * 1.0) * (1 + 1e-12) + 1e-300);
        CHECK(norm < previous);
        previous = norm;
      }
    }
  }

  TEST_CASE("softmax entropy falls from log n to 0 as the logit scale grows") {
    attn::Rng rng(5);
    const Index n = 12;
    VectorXd z = attn::random_normal(n, 1, rng);
    Index top = 0;
    z.maxCoeff(&top);
    z(top) += 1.0;
    CHECK(attn::entropy(attn::softmax(1e-6 * z)) ==
          doctest::Approx(std::log(double(n))).epsilon(1e-5));
    double previous = std::log(double(n)) + 1e-12;
    for (const double s : {0.1, 1.0, 3.0, 10.0, 30.0}) {
      const double H = attn::entropy(attn::softmax(s * z));
      CHECK(H < previous);
      previous = H;
    }
    CHECK(attn::entropy(attn::softmax(100.0 * z)) < 1e-30);
  }
}
