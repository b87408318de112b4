// Chapter 05 — the Taylor and exp-limit feature maps: each claim a test named after it.
//
// Tolerances: the feature-map identities are sums of products of at most a few hundred
// thousand terms; each is checked relative to the size of its terms (sum_p |t|^p / p!),
// a few hundred eps, which an off-by-one in the series or a wrong scaling misses by many
// orders of magnitude. Statistical claims use fixed seeds; their bounds (a few standard
// errors, slopes within an interval) are explained next to each.

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "attn/feature_maps.hpp"
#include "attn/random.hpp"
#include "attn/svd.hpp"
#include "ch05.hpp"
#include "test_helpers.hpp"

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;
using namespace ch05_test;

TEST_SUITE("ch05") {
  TEST_CASE("the Taylor map's inner product is the exponential series from l = 0 to p") {
    for (const auto seed : seeds)
      for (const auto& [n, d] : shapes)
        for (int P = 0; P <= 5; ++P) {
          attn::Rng rng(seed);
          const MatrixXd Q = attn::random_normal(n, d, rng),
                         K = attn::random_normal(n, d, rng);
          const MatrixXd lhs =
              attn::taylor_features(Q, P) * attn::taylor_features(K, P).transpose();
          const MatrixXd t = Q * K.transpose();
          const MatrixXd T =
              t.unaryExpr([&](double x) { return attn::taylor_exp(x, P); });
          // The scale of the terms: T_P(sum_i |q_i k_i|), which bounds the sum of the
          // absolute values of all d^p products in block p.
          const MatrixXd S =
              (Q.cwiseAbs() * K.cwiseAbs().transpose()).unaryExpr([&](double x) {
                return attn::taylor_exp(x, P);
              });
          // Rounding: products of p + 1 factors, summed; relative to the term sizes.
          CHECK(max_rel(lhs, T, S) <= 200 * eps);
          // The seed's series starts at p = 1: it misses the constant term 1 exactly.
          const MatrixXd seed_series = T.array() - 1.0;
          CHECK((lhs - seed_series).minCoeff() >= 1 - 200 * eps * S.maxCoeff());
        }
  }

  TEST_CASE(
      "the Taylor map's inner product at order 20 is exp(q.k), and a series from l = 1 "
      "misses it by 1") {
    // Seed 001 writes e^(q.k) as the sum over m >= 1 of (q.k)^m / m!. That sum is e^(q.k) - 1;
    // the kernel needs the term l = 0. At order 20 and |q.k| <= 2 the Lagrange remainder
    // is below e^2 2^21 / 21! < 4e-13: the feature inner product must be e^(q.k) to that.
    attn::Rng rng(7);
    const MatrixXd Q = attn::random_normal(6, 2, rng, 0.5),
                   K = attn::random_normal(6, 2, rng, 0.5);
    const MatrixXd t = Q * K.transpose();
    REQUIRE(t.cwiseAbs().maxCoeff() <= 2);
    const MatrixXd kernel = t.array().exp();
    const MatrixXd lhs =
        attn::taylor_features(Q, 20) * attn::taylor_features(K, 20).transpose();
    CHECK(max_abs(lhs - kernel) <= 1e-12 * kernel.maxCoeff());
    // The source's series, summed directly, is one below the kernel for every pair.
    const MatrixXd from_one = t.unaryExpr([](double x) {
      double term = 1, sum = 0;
      for (int l = 1; l <= 20; ++l) sum += (term *= x / l);
      return sum;
    });
    CHECK(max_abs(kernel - from_one - MatrixXd::Ones(6, 6)) <= 1e-12 * kernel.maxCoeff());
  }

  TEST_CASE("the Taylor map of order p has sum_l d^l features") {
    attn::Rng rng(4);
    for (Index d = 1; d <= 5; ++d)
      for (int P = 0; P <= 5; ++P) {
        const MatrixXd X = attn::random_normal(2, d, rng);
        double expected = 0;
        for (int p = 0; p <= P; ++p) expected += std::pow(double(d), p);
        CHECK(double(attn::taylor_features(X, P).cols()) == expected);
        CHECK(attn::taylor_feature_dim(d, P) == expected);
      }
  }

  TEST_CASE("the Taylor truncation error lies within the Lagrange remainder bounds") {
    // e^t - T_P(t) = e^xi t^{P+1}/(P+1)! for some xi between 0 and t, so the error lies
    // between e^{min(t,0)} and e^{max(t,0)} times |t|^{P+1}/(P+1)!, with the sign of
    // t^{P+1}.
    for (double t : {-5.0, -2.0, -0.5, 0.3, 1.0, 3.0, 6.0})
      for (int P = 0; P <= 15; ++P) {
        const double err = std::exp(t) - attn::taylor_exp(t, P);
        const double base = std::pow(std::abs(t), P + 1) / std::tgamma(P + 2.0);
        const double rounding = 64 * eps * attn::taylor_exp(std::abs(t), P);
        if (base <= 1e3 * rounding) continue;  // the error is rounding, not truncation
        CHECK(std::abs(err) <= std::exp(std::max(t, 0.0)) * base + rounding);
        CHECK(std::abs(err) >= std::exp(std::min(t, 0.0)) * base - rounding);
        CHECK((err > 0) == (t > 0 || (P + 1) % 2 == 0));
      }
  }

  TEST_CASE("odd Taylor orders give negative weights below a root, even orders never") {
    attn::Rng rng(5);
    for (int P = 1; P <= 9; P += 2) {
      const double root = ch05::taylor_root(P);
      CHECK(std::abs(attn::taylor_exp(root, P)) <= 1e-12);
      CHECK(attn::taylor_exp(root - 0.05, P) < 0);
      CHECK(attn::taylor_exp(root + 0.05, P) > 0);
      // Two vectors with q.k = root - 0.1: the Taylor feature inner product is negative.
      VectorXd q, k;
      ch05::pair_with_product(3, 1.1 * std::sqrt(-root + 0.1), root - 0.1, q, k);
      MatrixXd X(2, 3);
      X << q.transpose(), k.transpose();
      const MatrixXd phi = attn::taylor_features(X, P);
      CHECK(phi.row(0).dot(phi.row(1)) < 0);
    }
    // Even P: T_P' = T_{P-1}, so the minimum is at the root t* of T_{P-1}, where
    // T_P(t*) = t*^P / P! > 0. Check that value, and that a grid never goes below it.
    for (int P = 2; P <= 10; P += 2) {
      const double ts = ch05::taylor_even_minimum_point(P);
      const double minimum = attn::taylor_exp(ts, P);
      CHECK(minimum ==
            doctest::Approx(std::pow(ts, P) / std::tgamma(P + 1.0)).epsilon(1e-9));
      CHECK(minimum > 0);
      for (double t = -30; t <= 5; t += 0.01)
        CHECK_MESSAGE(attn::taylor_exp(t, P) >= minimum * (1 - 1e-9),
                      "P = " << P << ", t = " << t);
    }
  }

  TEST_CASE("the exp-limit map's inner product is (1 + q.k/p)^p" *
            doctest::test_suite("ex05.6")) {
    for (const auto seed : seeds)
      for (const auto& [rows, d] : shapes)
        for (int n = 1; n <= 4; ++n) {
          attn::Rng rng(seed);
          const MatrixXd Q = attn::random_normal(rows, d, rng, 2.0),
                         K = attn::random_normal(rows, d, rng, 2.0);
          const MatrixXd lhs =
              attn::exp_limit_features(Q, n) * attn::exp_limit_features(K, n).transpose();
          const MatrixXd t = Q * K.transpose();
          const double nn = n;
          const MatrixXd rhs =
              t.unaryExpr([&](double x) { return std::pow(1 + x / nn, nn); });
          const MatrixXd S =
              (Q.cwiseAbs() * K.cwiseAbs().transpose()).unaryExpr([&](double x) {
                return std::pow(1 + x / nn, nn);
              });
          CHECK(max_rel(lhs, rhs, S) <= 200 * eps);  // as for the Taylor map
          CHECK(double(attn::exp_limit_features(Q, n).cols()) == std::pow(d + 1.0, n));
        }
  }

  TEST_CASE(
      "the exp-limit feature matrix has rank binom(d + p, p), fewer than its (d + 1)^p "
      "features" *
      doctest::test_suite("ex05.6")) {
    // (1 + q.k/p)^p is a polynomial of degree p in q.k with no zero coefficient, so, like
    // the Taylor map, psi_p(X) spans the binom(d + p, p) monomials of degree <= p; its
    // (d + 1)^p coordinates hold each of them once per ordering.
    struct Case {
      Index d;
      int p;
      double binom;  // binom(d + p, p)
    };
    for (const auto& [d, p, binom] : {Case{2, 4, 15}, Case{3, 3, 20}, Case{16, 2, 153}}) {
      CAPTURE(d);
      CAPTURE(p);
      attn::Rng rng(32);
      const MatrixXd X = attn::random_normal(Index(2 * binom) + 10, d, rng, 0.7);
      const MatrixXd psi = attn::exp_limit_features(X, p);
      CHECK(double(psi.cols()) == std::pow(d + 1.0, p));
      CHECK(double(psi.cols()) > 1.8 * binom);
      CHECK(double(attn::numerical_rank(psi, 1e-10)) == binom);
    }
  }

  TEST_CASE("the exp-limit error is e^t t^2/(2p) to leading order: slope -1 in p") {
    for (double t : {-2.0, 0.5, 1.0, 2.0}) {
      std::vector<double> ns, errs;
      for (int k = 6; k <= 16; ++k) {
        const double n = std::ldexp(1.0, k);
        ns.push_back(n);
        errs.push_back(std::abs(std::exp(t) - std::exp(n * std::log1p(t / n))));
      }
      const ch05::Fit f = ch05::fit_loglog(ns, errs);
      // The next term is O(1/n^2): over n = 64..65536 it bends the slope by < 0.01. A
      // rate of 1/sqrt(n) or 1/n^2 is 0.5 or 1 away.
      CHECK(f.slope == doctest::Approx(-1.0).epsilon(0.01));
      // And the constant: error * 2n / (e^t t^2) -> 1, with an O(1/n) correction.
      const double ratio = errs.back() * 2 * ns.back() / (std::exp(t) * t * t);
      CHECK(ratio == doctest::Approx(1.0).epsilon(4.0 * std::abs(t) / ns.back() + 1e-6));
    }
  }

  TEST_CASE("odd exp-limit powers give negative weights when q.k < -p, even ones never" *
            doctest::test_suite("ex05.6")) {
    for (int n = 1; n <= 5; ++n) {
      VectorXd q, k;
      ch05::pair_with_product(2, 1.1 * std::sqrt(n + 1.0), -(n + 1.0), q,
                              k);  // q.k = -(n + 1)
      MatrixXd X(2, 2);
      X << q.transpose(), k.transpose();
      const MatrixXd psi = attn::exp_limit_features(X, n);
      const double w = psi.row(0).dot(psi.row(1));
      CHECK(w == doctest::Approx(std::pow(-1.0 / n, n)).epsilon(1e-12));
      if (n % 2 == 1)
        CHECK(w < 0);
      else
        CHECK(w > 0);
    }
  }
}
