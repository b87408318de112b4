// Chapter 05 — worked solutions (instructor's copy only): the code of the implement
// exercises 05.1 (the symmetric Taylor map) and 05.5 (hyperbolic positive random features),
// and a test of every number and identity that solutions.md states.
//
// Tolerance policy. Exact identities (feature inner products, the epsilon-in-the-denominator
// factor, the binomial expansion) are sums of at most a few thousand products and are
// checked to a few hundred eps relative to the size of their terms, as in the chapter's own
// tests, relative to that size. Every number solutions.md prints is recorded with
// solution_value("05.M.key", x) and shown from the build (<!--#sol:05.M.key-->); the tests
// assert what the page says of those numbers. Monte Carlo claims (unbiasedness, the RMSE
// against its formula, slopes) use the chapter's statistical bounds (4 standard errors, 25 %
// relative on an RMSE from 300 trials, 0.08 on a slope), explained next to each. Every Approx
// is relative (scale 0): with doctest's default scale of 1 an epsilon is absolute for |x| < 1.

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "attn/feature_maps.hpp"
#include "attn/linear_attention.hpp"
#include "attn/random.hpp"
#include "ch05.hpp"
#include "solution_values.hpp"
#include "test_helpers.hpp"

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;
using namespace ch05_test;
using book_test::solution_value;

namespace {

// [sol-05-1-symmetric-taylor]
// The Taylor map with one coordinate per multiset of indices: for every multi-index alpha
// with |alpha| <= p, the coordinate x^alpha / sqrt(alpha!), which is the monomial times the
// square root of its multinomial coefficient l! / alpha!, divided by sqrt(l!). Its inner
// products are T_p(q.k) and it has binom(d + p, p) coordinates.
MatrixXd taylor_features_symmetric(const MatrixXd& X, int p) {
  const Index d = X.cols();
  // The columns of order l, as non-decreasing index tuples i_1 <= .. <= i_l: the value
  // x^alpha / sqrt(alpha!), the last index i_l and how often it occurs at the end.
  struct Column {
    VectorXd value;
    Index last;
    int run;
  };
  std::vector<Column> order{{VectorXd::Ones(X.rows()), 0, 0}};  // l = 0: the constant 1
  std::vector<VectorXd> all{order.front().value};
  for (int l = 1; l <= p; ++l) {
    std::vector<Column> next;
    for (const Column& c : order)
      for (Index j = c.last; j < d; ++j) {  // append j >= i_{l-1}: each multiset once
        // alpha_j grows by one: alpha! is multiplied by the new count of j.
        const int count = j == c.last ? c.run + 1 : 1;
        next.push_back(
            {c.value.cwiseProduct(X.col(j)) / std::sqrt(double(count)), j, count});
      }
    order = std::move(next);
    for (const Column& c : order) all.push_back(c.value);
  }
  MatrixXd phi(X.rows(), Index(all.size()));
  for (Index i = 0; i < phi.cols(); ++i) phi.col(i) = all[std::size_t(i)];
  return phi;
}
// [sol-05-1-symmetric-taylor]

// binom(n, k) as a double (exact for the sizes used here).
double binomial(int n, int k) {
  double b = 1;
  for (int i = 1; i <= k; ++i) b = b * (n - k + i) / i;
  return b;
}

// [sol-05-3-epsilon-denominator]
// Linear attention with the fast-transformers epsilon in the denominator:
// o_i = sum_j w_ij v_j / (sum_j w_ij + eps).
MatrixXd linear_attention_eps_denominator(const MatrixXd& phiQ, const MatrixXd& phiK,
                                          const MatrixXd& V, double eps) {
  const VectorXd z = phiQ * phiK.colwise().sum().transpose();  // zeta_i
  const MatrixXd out = phiQ * (phiK.transpose() * V);
  return (z.array() + eps).inverse().matrix().asDiagonal() * out;
}
// [sol-05-3-epsilon-denominator]

// [sol-05-4-operation-counts]
// Floating-point operations per call, an exponential counted as c_exp operations:
// softmax attention forms Q K^T and A V (2 n^2 d_k each) and n^2 exponentials; linear
// attention forms the exponents of phi(Q) and phi(K) (2 n r d_k each), phi(K)^T V and
// phi(Q)(phi(K)^T V) (2 n r d_k each) and 2 n r exponentials (d_v = d_k).
double softmax_operations(double n, double d, double c_exp) {
  return n * n * (4 * d + c_exp);
}
double linear_operations(double n, double d, double r, double c_exp) {
  return n * r * (8 * d + 2 * c_exp);
}
// The n where the two counts are equal (softmax is cheaper below it), by bisection.
double crossover_n(double d, double r, double c_exp) {
  double lo = 1, hi = 1e9;
  for (int i = 0; i < 200; ++i) {
    const double mid = std::sqrt(lo * hi);
    (softmax_operations(mid, d, c_exp) < linear_operations(mid, d, r, c_exp) ? lo : hi) =
        mid;
  }
  return std::sqrt(lo * hi);
}
// [sol-05-4-operation-counts]

// [sol-05-5-hyperbolic-features]
// Hyperbolic positive random features (Performer):
// phi(x) = e^{-|x|^2/2} [e^{omega_i.x}, e^{-omega_i.x}]_i / sqrt(2r), dimension 2r, from the
// r rows omega_i of W. Both halves are unbiased (-omega is N(0, I) too), so
// E[phi(q).phi(k)] = e^{q.k}; the estimate is (1/r) sum_i e^{-(|q|^2+|k|^2)/2} cosh(omega_i.(q+k)).
MatrixXd hyperbolic_random_features(const MatrixXd& X, const MatrixXd& W) {
  const Index r = W.rows();
  const MatrixXd P = X * W.transpose();  // omega_i . x
  const VectorXd half_norm = 0.5 * X.rowwise().squaredNorm();
  MatrixXd phi(X.rows(), 2 * r);
  phi.leftCols(r) = (P.colwise() - half_norm).array().exp();
  phi.rightCols(r) = ((-P).colwise() - half_norm).array().exp();
  return phi / std::sqrt(2.0 * double(r));
}
// [sol-05-5-hyperbolic-features]

// `trials` estimates phi(q).phi(k) of e^{q.k} from r fresh Gaussian directions each, with
// the hyperbolic map (hyperbolic = true) or the library's positive map.
VectorXd estimates(bool hyperbolic, const VectorXd& q, const VectorXd& k, Index r,
                   int trials, attn::Rng& rng) {
  if (hyperbolic) return ch05::kernel_estimates(hyperbolic_random_features, q, k, r, trials, rng);
  return ch05::kernel_estimates(ch05::Estimator::positive, q, k, r, trials, rng);
}

// Relative MSE of the hyperbolic estimate from r directions (2r features):
// (cosh|q+k|^2 - 1) / r.
double hyperbolic_relative_mse(const VectorXd& q, const VectorXd& k, double r) {
  return (std::cosh((q + k).squaredNorm()) - 1) / r;
}

}  // namespace

TEST_SUITE("ch05") {
  TEST_CASE(
      "solution 05.1: the symmetric Taylor map has binom(d + p, p) features and inner "
      "products T_p(q.k)") {
    for (const auto seed : seeds)
      for (const auto& [n, d] : shapes)
        for (int P = 0; P <= 5; ++P) {
          CAPTURE(seed);
          CAPTURE(d);
          CAPTURE(P);
          attn::Rng rng(seed);
          const MatrixXd Q = attn::random_normal(n, d, rng),
                         K = attn::random_normal(n, d, rng);
          const MatrixXd phiQ = taylor_features_symmetric(Q, P),
                         phiK = taylor_features_symmetric(K, P);
          CHECK(double(phiQ.cols()) == binomial(int(d) + P, P));
          const MatrixXd lhs = phiQ * phiK.transpose();
          const MatrixXd T = (Q * K.transpose()).unaryExpr([&](double t) {
            return attn::taylor_exp(t, P);
          });
          // As the chapter's Taylor test: relative to T_P(sum_i |q_i k_i|), the size of the
          // terms; the square roots of the multinomial coefficients add a rounding or two.
          const MatrixXd S =
              (Q.cwiseAbs() * K.cwiseAbs().transpose()).unaryExpr([&](double t) {
                return attn::taylor_exp(t, P);
              });
          CHECK(max_rel(lhs, T, S) <= 200 * eps);
          // The same Gram matrix as the full map, with fewer coordinates.
          const MatrixXd full =
              attn::taylor_features(Q, P) * attn::taylor_features(K, P).transpose();
          CHECK(max_rel(lhs, full, S) <= 200 * eps);
        }
  }

  TEST_CASE(
      "solution 05.1: at d_k = 64 and p = 2 the symmetric map keeps about half of the "
      "full map's features") {
    attn::Rng rng(501);
    const MatrixXd X = attn::random_normal(3, 64, rng, 0.125);
    const MatrixXd phi = taylor_features_symmetric(X, 2);
    // Counts are integers: exact.
    CHECK(double(phi.cols()) == binomial(66, 2));
    solution_value("05.1.sym_dim_64_2", double(phi.cols()));
    solution_value("05.1.full_dim_64_2", double(attn::taylor_feature_dim(64, 2)));
    // About half: each x_i x_j with i != j is stored once instead of twice.
    CHECK(std::abs(double(phi.cols()) / double(attn::taylor_feature_dim(64, 2)) - 0.5) <
          0.05);
    // The d_k = 4, p = 8 map of the program's section 1.
    const Index program_sym =
        taylor_features_symmetric(attn::random_normal(2, 4, rng), 8).cols();
    CHECK(double(program_sym) == binomial(12, 8));
    solution_value("05.1.sym_dim_4_8", double(program_sym));
    solution_value("05.1.full_dim_4_8", double(attn::taylor_feature_dim(4, 8)));
    // Same Gram matrix as the full map (|x|^2 ~ 1/4: terms of size ~1).
    const MatrixXd full = attn::taylor_features(X, 2);
    CHECK((phi * phi.transpose() - full * full.transpose()).cwiseAbs().maxCoeff() <=
          200 * eps);
    // Order 2 alone: the columns beyond order 1, binom(65, 2) against 64^2, a ratio near 2!.
    const Index order2 = phi.cols() - taylor_features_symmetric(X, 1).cols();
    CHECK(double(order2) == binomial(65, 2));
    CHECK(std::abs(64.0 * 64.0 / double(order2) - 2) < 0.05);
    solution_value("05.1.sym_order2_dim_64", double(order2));
  }

  TEST_CASE(
      "solution 05.2: the exp-limit coefficients binom(p l)/p^l are at most 1/l! and "
      "equal it only for l <= 1") {
    for (int p = 1; p <= 40; ++p) {
      double factorial = 1;  // l!
      for (int l = 0; l <= p; ++l) {
        if (l > 0) factorial *= l;
        const double coefficient = binomial(p, l) / std::pow(double(p), l);
        double product = 1;  // prod_{i<l} (1 - i/p)
        for (int i = 0; i < l; ++i) product *= 1 - double(i) / p;
        // Two ways of writing the same coefficient: at most 3 roundings per factor, l <= 40
        // factors, so 120 eps relative; 400 eps leaves room for pow.
        CHECK(coefficient * factorial ==
              doctest::Approx(product).scale(0).epsilon(400 * eps));
        if (l <= 1) CHECK(product == 1.0);
        // For l >= 2 the factor (1 - 1/p) alone already puts it below 1/l!.
        else
          CHECK(product <= 1 - 1.0 / p + 1e-15);
      }
      // The binomial sum is (1 + t/p)^p: relative to the sum of |terms|, (1 + |t|/p)^p.
      for (const double t : {-3.0, 0.5, 2.0}) {
        double sum = 0;
        for (int l = 0; l <= p; ++l) sum += binomial(p, l) * std::pow(t / p, l);
        CHECK(std::abs(sum - std::pow(1 + t / p, p)) <=
              200 * eps * std::pow(1 + std::abs(t) / p, p));
      }
    }
  }

  TEST_CASE(
      "solution 05.2: for q.k > 0 the exp-limit kernel lies below the Taylor kernel of "
      "the same order") {
    attn::Rng rng(502);
    // Non-negative entries: every logit q.k is positive.
    const MatrixXd Q = attn::random_normal(6, 4, rng, 0.7).cwiseAbs(),
                   K = attn::random_normal(5, 4, rng, 0.7).cwiseAbs();
    const MatrixXd logits = Q * K.transpose();
    for (int p = 1; p <= 5; ++p) {
      CAPTURE(p);
      const MatrixXd G =
          attn::exp_limit_features(Q, p) * attn::exp_limit_features(K, p).transpose();
      for (Index i = 0; i < G.rows(); ++i)
        for (Index j = 0; j < G.cols(); ++j) {
          const double t = logits(i, j), T = attn::taylor_exp(t, p);
          const double rounding = 200 * eps * std::exp(t);  // all terms positive
          double binomial_sum = 0;
          for (int l = 0; l <= p; ++l)
            binomial_sum += binomial(p, l) * std::pow(t / p, l);
          CHECK(std::abs(G(i, j) - binomial_sum) <= rounding);
          CHECK(T <= std::exp(t) + rounding);
          // T_p - (1 + t/p)^p >= (1/2 - binom(p, 2)/p^2) t^2 = t^2/(2p) for p >= 2.
          if (p >= 2)
            CHECK(T - G(i, j) >= t * t / (2 * p) - rounding);
          else
            CHECK(std::abs(T - G(i, j)) <= rounding);  // p = 1: both are 1 + t
        }
    }
    // The worked example: q = k = e_1, t = 1, p = 4: (5/4)^4 < T_4(1) < e.
    MatrixXd e1 = MatrixXd::Zero(1, 4);
    e1(0, 0) = 1;
    const double g = (attn::exp_limit_features(e1, 4) *
                      attn::exp_limit_features(e1, 4).transpose())(0, 0);
    // (5/4)^4 to the rounding of a sum of 5^4 products (the squares of 1/2 are exact).
    CHECK(g == doctest::Approx(std::pow(1.25, 4)).scale(0).epsilon(16 * eps));
    CHECK(g < attn::taylor_exp(1.0, 4));
    CHECK(attn::taylor_exp(1.0, 4) < std::exp(1.0));
    solution_value("05.2.exp_limit_t1_p4", g);
    solution_value("05.2.taylor_t1_p4", attn::taylor_exp(1.0, 4));
    // For t < 0 the order can flip: t = -4, p = 3 (q = 2 e_1, k = -2 e_1).
    const MatrixXd q = 2 * e1, k = -2 * e1;
    const double g3 = (attn::exp_limit_features(q, 3) *
                       attn::exp_limit_features(k, 3).transpose())(0, 0);
    // (1 - 4/3)^3 = -1/27 and T_3(-4) = -17/3, to a few roundings of sums of O(1) terms
    // (g3 is a sum of 4^3 products of size up to 1, hence the absolute 64 eps).
    CHECK(std::abs(g3 + 1.0 / 27) <= 64 * eps);
    CHECK(attn::taylor_exp(-4.0, 3) ==
          doctest::Approx(-17.0 / 3).scale(0).epsilon(16 * eps));
    CHECK(g3 > attn::taylor_exp(-4.0, 3));
    solution_value("05.2.exp_limit_tm4_p3", g3);
    solution_value("05.2.taylor_tm4_p3", attn::taylor_exp(-4.0, 3));
  }

  TEST_CASE(
      "solution 05.3: epsilon in the denominator multiplies the exact output by zeta_i/(zeta_i "
      "+ eps)") {
    attn::Rng rng(503);
    const MatrixXd Q = attn::random_normal(20, 6, rng, 0.5),
                   K = attn::random_normal(30, 6, rng, 0.5),
                   V = attn::random_normal(30, 3, rng);
    const MatrixXd W = attn::gaussian_directions(16, 6, rng);
    const MatrixXd phiQ = attn::positive_random_features(Q, W),
                   phiK = attn::positive_random_features(K, W);
    const MatrixXd exact = attn::linear_attention(phiQ, phiK, V);
    const VectorXd S = (phiQ * phiK.transpose()).rowwise().sum();
    for (const double e : {1e-3, 1.0, 100.0}) {
      const MatrixXd shrunk = linear_attention_eps_denominator(phiQ, phiK, V, e);
      const VectorXd factor = S.array() / (S.array() + e);
      // A rescaled copy of the same sums: a few roundings relative to max |V|.
      CHECK((shrunk - factor.asDiagonal() * exact).cwiseAbs().maxCoeff() <=
            64 * eps * max_abs(V));
      // Towards 0, not towards the mean of V: the row norms shrink by the factor.
      CHECK((shrunk.rowwise().norm().array() <= exact.rowwise().norm().array()).all());
    }
  }

  TEST_CASE(
      "solution 05.3: with the global key stabiliser the denominator eps shrinks outputs "
      "by an amount set by the largest key exponent") {
    // The program's example, with this file's own seed: n = 256, d_k = 16, r = 64, entries of
    // Q and K N(0, 2/d_k), per-row stabiliser for the queries, global one for the keys.
    const Index n = 256, d = 16, r = 64;
    attn::Rng rng(505);
    const double sigma = std::sqrt(2.0 / double(d));
    const MatrixXd Q = attn::random_normal(n, d, rng, sigma),
                   K = attn::random_normal(n, d, rng, sigma),
                   V = attn::random_normal(n, d, rng);
    const MatrixXd W = attn::gaussian_directions(r, d, rng);
    using enum attn::Stabiliser;
    // zeta_i = sum_j phi(q_i).phi(k_j) for the given scale of Q and K and stabilisers.
    const auto sums = [&](double scale, attn::Stabiliser sq, attn::Stabiliser sk) {
      return VectorXd(
          attn::positive_random_features(scale * Q, W, sq) *
          attn::positive_random_features(scale * K, W, sk).colwise().sum().transpose());
    };
    const VectorXd plain = sums(1, none, none), stab = sums(1, per_row, global),
                   stab30 = sums(30, per_row, global);
    // The stabilisers scale zeta_i by e^{-c_i - c}: c_i the largest exponent of query i, c the
    // largest over all keys. A rescaling: the exponents (|.| < 10) are rounded to about 10 eps
    // absolute, so the factors agree to about 1e-14 relative; 1e-12 leaves room.
    MatrixXd EQ = Q * W.transpose(), EK = K * W.transpose();
    EQ.colwise() -= 0.5 * Q.rowwise().squaredNorm();
    EK.colwise() -= 0.5 * K.rowwise().squaredNorm();
    const double c = EK.maxCoeff();
    const VectorXd ci = EQ.rowwise().maxCoeff();
    for (Index i = 0; i < n; ++i)
      CHECK(stab(i) ==
            doctest::Approx(plain(i) * std::exp(-ci(i) - c)).scale(0).epsilon(1e-12));
    solution_value("05.3.largest_key_exponent", c);
    solution_value("05.3.plain_sum_min", plain.minCoeff());
    solution_value("05.3.stab_sum_min", stab.minCoeff());
    // Shrinkage 1 - zeta_i/(zeta_i + eps) = eps/(zeta_i + eps), its mean and largest value.
    const auto shrink = [](const VectorXd& s, double e) {
      return VectorXd(e / (s.array() + e));
    };
    // Without stabilisers nothing (the page gives a bound); with them still harmless at
    // eps = 1e-6 (far below 1e-3, the chapter's "broken"), a visible shrinkage at 1e-2.
    solution_value("05.3.plain_shrink_max", shrink(plain, 1e-6).maxCoeff());
    CHECK(shrink(stab, 1e-6).maxCoeff() < 1e-3);
    solution_value("05.3.stab_shrink_mean", shrink(stab, 1e-6).mean());
    solution_value("05.3.stab_shrink_max", shrink(stab, 1e-6).maxCoeff());
    solution_value("05.3.stab_shrink_mean_eps2", shrink(stab, 1e-2).mean());
    solution_value("05.3.stab_shrink_max_eps2", shrink(stab, 1e-2).maxCoeff());
    // At 30 times the norms (the README's underflow example, where the stabilised output is
    // right): most zeta_i fall far below eps = 1e-6 and those outputs collapse to 0.
    const VectorXd x30 = shrink(stab30, 1e-6);
    // Most of the 256 queries lose more than 99% of their output (a count of fixed draws; the
    // zeta_i sit decades away from eps, so rounding cannot move one across 0.99).
    const Index collapsed = (x30.array() > 0.99).count();
    CHECK(collapsed > n / 2);
    solution_value("05.3.x30_collapsed", double(collapsed));
    solution_value("05.3.x30_shrink_mean", x30.mean());
  }

  TEST_CASE(
      "solution 05.4: the operation counts cross at n = 2r whatever an exponential "
      "costs") {
    // Bisection to 200 halvings of a ratio: the crossing is found to rounding, so 1e-9
    // relative; the page prints the crossings of the first (d, c).
    for (const double d : {8.0, 16.0, 64.0})
      for (const double c : {1.0, 10.0, 30.0}) {
        CAPTURE(d);
        CAPTURE(c);
        CHECK(crossover_n(d, 16, c) == doctest::Approx(32).scale(0).epsilon(1e-9));
        CHECK(crossover_n(d, 64, c) == doctest::Approx(128).scale(0).epsilon(1e-9));
        CHECK(crossover_n(d, 256, c) == doctest::Approx(512).scale(0).epsilon(1e-9));
      }
    for (const int r : {16, 64, 256})
      solution_value("05.4.crossover_r" + std::to_string(r), crossover_n(8, r, 1));
  }

  TEST_CASE(
      "solution 05.5: hyperbolic random features are unbiased for exp(q.k) with relative "
      "variance cosh|q+k|^2 - 1") {
    attn::Rng rng(506);
    const int draws = 20000;
    for (const auto& [norm, t] : {std::pair{0.5, 0.1}, {0.8, -0.5}, {0.8, 0.5}}) {
      CAPTURE(t);
      VectorXd q, k;
      ch05::pair_with_product(8, norm, t, q, k);
      const VectorXd e =
          estimates(true, q, k, 1, draws, rng);  // one direction, 2 features
      CHECK(e.minCoeff() > 0);
      const double mean = e.mean();
      const double se =
          std::sqrt((e.array() - mean).square().sum() / (draws - 1.0) / draws);
      // Within 4 standard errors, as the chapter's test of the positive map.
      CHECK(std::abs(mean - std::exp(t)) <= 4 * se);
      // The sample variance matches e^{2 q.k} (cosh|q+k|^2 - 1) within 15% relative where
      // the lognormal tail is mild (|q + k|^2 < 1.5), as in the chapter's test.
      const double var = se * se * draws;
      if ((q + k).squaredNorm() < 1.5)
        CHECK(var ==
              doctest::Approx(std::exp(2 * t) * (std::cosh((q + k).squaredNorm()) - 1))
                  .scale(0)
                  .epsilon(0.15));
    }
  }

  TEST_CASE(
      "solution 05.5: the hyperbolic RMSE falls like r^(-1/2) below the positive one") {
    // The pair of the program's figure 5.3: d_k = 16, |q| = |k| = 0.5, q.k = 0.1, so
    // |q + k|^2 = 0.7; r directions (2r hyperbolic features, r positive ones), 300 trials.
    attn::Rng rng(507);
    VectorXd q, k;
    ch05::pair_with_product(16, 0.5, 0.1, q, k);
    const double truth = std::exp(q.dot(k)), s = (q + k).squaredNorm();
    std::vector<double> rs, hyp, pos;
    for (int j = 2; j <= 9; ++j) {
      const Index r = Index(1) << j;
      rs.push_back(double(r));
      hyp.push_back(ch05::relative_rmse(estimates(true, q, k, r, 300, rng), truth));
      pos.push_back(ch05::relative_rmse(estimates(false, q, k, r, 300, rng), truth));
      // Each point within 25% of its formula, relative (the chapter's bound for 300 trials).
      CHECK(hyp.back() ==
            doctest::Approx(std::sqrt(hyperbolic_relative_mse(q, k, double(r))))
                .scale(0)
                .epsilon(0.25));
      CHECK(pos.back() ==
            doctest::Approx(std::sqrt(ch05::positive_relative_mse(q, k, double(r))))
                .scale(0)
                .epsilon(0.25));
      CHECK(hyp.back() < pos.back());
    }
    // -1/2 within 0.08, as the chapter's test of the positive map.
    CHECK(std::abs(ch05::fit_loglog(rs, hyp).slope + 0.5) <= 0.08);
    // At r = 256 (index 6): measured and theory; at equal feature count, 256 features =
    // 128 hyperbolic directions. RMSE ratios at equal directions and at equal features:
    // sqrt((1 - e^{-s})/2) and sqrt(1 - e^{-s}).
    solution_value("05.5.hyp_rmse_256", hyp[6]);
    solution_value("05.5.pos_rmse_256", pos[6]);
    solution_value("05.5.pos_rmse_256_theory",
                   std::sqrt(ch05::positive_relative_mse(q, k, 256)));
    solution_value("05.5.hyp_rmse_256_theory",
                   std::sqrt(hyperbolic_relative_mse(q, k, 256)));
    solution_value("05.5.hyp_rmse_128_theory",
                   std::sqrt(hyperbolic_relative_mse(q, k, 128)));
    solution_value("05.5.rmse_ratio_equal_directions", std::sqrt(-std::expm1(-s) / 2));
    solution_value("05.5.rmse_ratio_equal_features", std::sqrt(-std::expm1(-s)));
  }

  TEST_CASE(
      "solution 05.5: at equal feature count the hyperbolic MSE is (1 - exp(-|q+k|^2)) "
      "times the positive one") {
    // Algebra: 2 (cosh s - 1) = (e^s - 1)(1 - e^{-s}), so the ratio of the MSEs at equal
    // feature count (r/2 hyperbolic directions against r positive ones) is 1 - e^{-s}.
    // cosh s - 1 cancels for small s: its rounding is a few eps of cosh s, not of the result.
    for (const double s : {0.01, 0.3, 1.0, 4.0, 20.0})
      CHECK(std::abs(2 * (std::cosh(s) - 1) - std::expm1(s) * -std::expm1(-s)) <=
            8 * eps * std::cosh(s));
    // The ratios for |q| = |k| = 1, s = 2 + 2 q.k.
    for (const auto& [name, qk] : {std::pair{"m05", -0.5}, {"0", 0.0}, {"1", 1.0}})
      solution_value(std::string("05.5.mse_ratio_qk_") + name,
                     -std::expm1(-(2 + 2 * qk)));
    // Monte Carlo where the lognormal tail is mild (|q| = |k| = 0.5, s <= 1): 64 features
    // (32 hyperbolic directions against 64 positive ones), 2000 trials.
    attn::Rng rng(508);
    for (const auto& [name, t] : {std::pair{"s01", -0.2}, {"s05", 0.0}, {"s1", 0.25}}) {
      VectorXd q, k;
      ch05::pair_with_product(16, 0.5, t, q, k);
      const double s = (q + k).squaredNorm(), truth = std::exp(t);
      const VectorXd h = estimates(true, q, k, 32, 2000, rng),
                     p = estimates(false, q, k, 64, 2000, rng);
      const double ratio =
          (h.array() - truth).square().mean() / (p.array() - truth).square().mean();
      // Each MSE from 2000 trials of nearly Gaussian means is known to about +-3%, the ratio
      // to about +-5%: 20% relative is four standard errors, while a ratio of 1 (no gain) or
      // of (1 - e^{-s})/2 (counting directions instead of features) misses by far more.
      CHECK(ratio == doctest::Approx(-std::expm1(-s)).scale(0).epsilon(0.2));
      solution_value(std::string("05.5.measured_ratio_") + name, ratio);
      solution_value(std::string("05.5.theory_ratio_") + name, -std::expm1(-s));
    }
  }

  TEST_CASE(
      "solution 05.6: the exp-limit map's coordinate (i_1 .. i_p) is z_(i_1) .. z_(i_p) "
      "with z = [1 x/sqrt(p)]") {
    attn::Rng rng(509);
    const Index d = 3;
    const int p = 3;
    const MatrixXd X = attn::random_normal(4, d, rng);
    const MatrixXd psi = attn::exp_limit_features(X, p);
    REQUIRE(psi.cols() == 64);  // (d + 1)^p
    for (Index row = 0; row < X.rows(); ++row) {
      VectorXd z(d + 1);
      z << 1, X.row(row).transpose() / std::sqrt(double(p));
      for (Index a = 0; a <= d; ++a)
        for (Index b = 0; b <= d; ++b)
          for (Index e = 0; e <= d; ++e)
            // Column a (d+1)^2 + b (d+1) + e, the first index slowest: the same product of
            // three numbers, up to the order of the two roundings: 4 eps relative.
            CHECK(psi(row, (a * (d + 1) + b) * (d + 1) + e) ==
                  doctest::Approx(z(a) * z(b) * z(e)).scale(0).epsilon(4 * eps));
    }
    // The program's largest exp-limit map: d_k = 4, p = 6.
    const Index program_dim =
        attn::exp_limit_features(attn::random_normal(1, 4, rng), 6).cols();
    CHECK(program_dim == 5 * 5 * 5 * 5 * 5 * 5);  // (d + 1)^p
    solution_value("05.6.exp_limit_dim_4_6", double(program_dim));
  }
}
